// The match lines of one Gateway frontend, in the order of the spec's precedence: the most
// specific hostname first (exact before wildcard, then more characters), then an Exact path,
// the longest path prefix, a method, the most headers, the most query parameters, the oldest
// route, namespace/name, and rule and match order. A request takes the first line it matches;
// none: 404. PathPrefix matches whole segments (`/a` matches `/a` and `/a/b`, never `/ab`),
// header names case-insensitively (HAProxy's `req.hdr`), query parameter names exactly. The
// terms are built from values the store checks let through (gateway-fields.ts) and nothing else.
// The lines that need no more than a hostname and path become map entries (gateway-routes.ts).
import { compareClaimants, type Claimant } from './claimant.js';
import { INVALID_BACKEND, normalizePrefix, redirectOf, type MatchSpec, type RuleTargets } from './gateway-backends.js';
import { compareHostnames, hostCondition } from './gateway-hostnames.js';
import type { GatewayMatchLine, GatewayRedirect, WeightedTarget } from './gateway-model.js';

export interface LineCandidate {
  readonly hostname: string;
  readonly listenerTerm: string;
  /** The listener's map key prefix: `<index>@` on a bind with several listeners, else ''. */
  readonly listenerKey: string;
  readonly listenerPort: number;
  readonly listenerScheme: 'http' | 'https';
  readonly match: MatchSpec;
  readonly route: Claimant;
  readonly rule: number;
  readonly matchIndex: number;
  readonly targets: RuleTargets;
}

/** Sort keys of a match: Exact first, then longer prefixes, method, headers, query parameters. */
function matchRank(match: MatchSpec): [number, number, number, number, number] {
  const exact = match.path?.type === 'Exact' ? 0 : 1;
  const length = exact === 0 ? (match.path?.value ?? '/').length : normalizePrefix(match.path?.value).length;
  return [exact, -length, match.method === undefined ? 1 : 0, -(match.headers?.length ?? 0), -(match.queryParams?.length ?? 0)];
}

export function compareCandidates(a: LineCandidate, b: LineCandidate): number {
  const host = compareHostnames(a.hostname, b.hostname);
  if (host !== 0) return host;
  const ra = matchRank(a.match);
  const rb = matchRank(b.match);
  for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number);
  const route = compareClaimants(a.route, b.route);
  if (route !== 0) return route;
  return a.rule !== b.rule ? a.rule - b.rule : a.matchIndex - b.matchIndex;
}

/** The ACL terms of a match, ANDed. */
export function matchCondition(candidate: LineCandidate): string {
  const terms: string[] = [];
  if (candidate.listenerTerm !== '') terms.push(candidate.listenerTerm);
  const host = hostCondition(candidate.hostname);
  if (host !== '') terms.push(host);
  const { match } = candidate;
  if (match.path?.type === 'Exact') terms.push(`{ path -m str ${match.path.value ?? '/'} }`);
  else {
    const prefix = normalizePrefix(match.path?.value);
    // The path with a '/' appended starts with the prefix and a '/': whole segments only.
    if (prefix !== '/') terms.push(`{ path,concat(,,/) -m beg ${prefix}/ }`);
  }
  if (match.method !== undefined) terms.push(`{ method ${match.method} }`);
  const seen = new Set<string>();
  for (const header of match.headers ?? []) {
    const name = header.name.toLowerCase();
    if (seen.has(name)) continue;
    seen.add(name);
    terms.push(`{ req.hdr(${name}) -m str ${header.value} }`);
  }
  const params = new Set<string>();
  for (const param of match.queryParams ?? []) {
    if (params.has(param.name)) continue;
    params.add(param.name);
    terms.push(`{ url_param(${param.name}) -m str ${param.value} }`);
  }
  return terms.join(' ');
}

/**
 * The targets of a rule: one per share with weight, each but the last picked with the chance
 * of its weight among those left (`rand(left) < weight`), so the shares come out as weighted.
 * No weight left at all (no backendRefs, or every weight 0): the 500 backend.
 */
export function weightedTargets(targets: RuleTargets, condition: string): WeightedTarget[] {
  const merged = new Map<string, number>();
  for (const share of targets.shares) if (share.weight > 0) merged.set(share.backend, (merged.get(share.backend) ?? 0) + share.weight);
  const shares = [...merged];
  if (shares.length === 0) return [{ backend: INVALID_BACKEND, condition }];
  let left = shares.reduce((sum, [, weight]) => sum + weight, 0);
  return shares.map(([backend, weight], i) => {
    const pick = i === shares.length - 1 ? '' : `{ rand(${left}) -m int lt ${weight} }`;
    left -= weight;
    return { backend, condition: [condition, pick].filter((t) => t !== '').join(' ') };
  });
}

/** The match line of a candidate; `redirect` names the backend of a redirect (shared by equal ones). */
export function lineOf(candidate: LineCandidate, redirect: (r: Omit<GatewayRedirect, 'name'>) => string): GatewayMatchLine {
  const condition = matchCondition(candidate);
  const spec = candidate.targets.redirect;
  if (spec !== undefined) return { condition, targets: [{ backend: redirect(redirectOf(spec, candidate.listenerPort, candidate.listenerScheme)), condition }] };
  return { condition, targets: weightedTargets(candidate.targets, condition) };
}

/** A match needs more than its hostname and path: a method, header or query parameter match. */
export function hasConditions(match: MatchSpec): boolean {
  return match.method !== undefined || (match.headers?.length ?? 0) > 0 || (match.queryParams?.length ?? 0) > 0;
}

// Where the unmatched paths of an owned host go. A host, with every path on it, belongs to one
// namespace (host-owners.ts), so a path of it that no route of that namespace matches must not
// fall through to another namespace's rules without a host, nor to another namespace's
// `spec.defaultBackend`. The owner's own default backend serves them: the oldest
// `spec.defaultBackend` of the owner's namespace, else 404; a host held by a rejected Ingress
// of the owner's namespace answers 503. The template looks the host up (exact, then `*.domain`)
// in two maps: `early` after the host tables, before the rules without a host, for hosts of a
// namespace that does not own those rules; `late` after them, for hosts of the namespace that
// does (its own host-less rules apply to its hosts, as Kubernetes has it). A host is listed only
// where the lookups without it would end elsewhere (or where its wildcard's entry would answer
// for it), so a one-namespace cluster lists none.
import { compareClaimants, type Claimant } from './claimant.js';
import { domainOf, isWildcard, type HostOwner } from './host-owners.js';
import { HELD_BACKEND, NOT_FOUND_BACKEND, type RouteEntry } from './model.js';

/** What the fallback reads of one Ingress entry. */
export interface DefaultSource {
  readonly claimant: Claimant;
  readonly defaultBackend: string | undefined;
}

export interface HostFallbacks {
  readonly early: RouteEntry[];
  readonly late: RouteEntry[];
}

/** The oldest `spec.defaultBackend` of each namespace. */
export function namespaceDefaults(sources: readonly DefaultSource[]): Map<string, string> {
  const oldest = new Map<string, DefaultSource>();
  for (const source of sources) {
    if (source.defaultBackend === undefined) continue;
    const held = oldest.get(source.claimant.namespace);
    if (held === undefined || compareClaimants(source.claimant, held.claimant) < 0) oldest.set(source.claimant.namespace, source);
  }
  return new Map([...oldest].map(([namespace, source]) => [namespace, source.defaultBackend as string]));
}

/**
 * The fallback maps of the owned hosts. `owners` holds every owned host ('' for the rules
 * without a host); `defaults` each namespace's own default backend (namespaceDefaults);
 * `clusterDefault` the backend of the template's `default_backend` (the oldest of all).
 */
export function hostFallbacks(owners: ReadonlyMap<string, HostOwner>, defaults: ReadonlyMap<string, string>, clusterDefault: string | undefined): HostFallbacks {
  const hostless = owners.get('')?.namespace;
  const last = clusterDefault ?? NOT_FOUND_BACKEND;
  const early: RouteEntry[] = [];
  const late: RouteEntry[] = [];
  const earlyKeys = new Set<string>();
  const targetOf = (owner: HostOwner): string => (owner.held ? HELD_BACKEND : (defaults.get(owner.namespace) ?? NOT_FOUND_BACKEND));
  for (const [host, owner] of owners) {
    if (host === '') continue;
    const backend = targetOf(owner);
    if (owner.held || (hostless !== undefined && hostless !== owner.namespace)) {
      early.push({ key: host, backend });
      earlyKeys.add(host);
    } else if (backend !== last) (hostless === undefined ? early : late).push({ key: host, backend });
  }
  // A host one label under a wildcard listed early would be looked up as that wildcard (a held
  // `*.d` would answer 503 for its own `a.d`): it is listed early with its own fallback.
  for (const [host, owner] of owners) {
    const domain = isWildcard(host) ? undefined : domainOf(host);
    if (domain === undefined || earlyKeys.has(host) || !earlyKeys.has(`*.${domain}`)) continue;
    early.push({ key: host, backend: targetOf(owner) });
  }
  const byKey = (a: RouteEntry, b: RouteEntry): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  return { early: early.sort(byKey), late: late.sort(byKey) };
}

/** Whether two fallbacks hold the same entries. */
export function sameFallbacks(a: HostFallbacks, b: HostFallbacks): boolean {
  const same = (x: readonly RouteEntry[], y: readonly RouteEntry[]): boolean =>
    x.length === y.length && x.every((entry, i) => entry.key === (y[i] as RouteEntry).key && entry.backend === (y[i] as RouteEntry).backend);
  return same(a.early, b.early) && same(a.late, b.late);
}

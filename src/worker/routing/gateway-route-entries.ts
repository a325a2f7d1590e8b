// What one HTTPRoute contributes to the Gateway model, kept from one build to the next in parts
// that are computed again only when what they were computed from changed, so a build after one
// route or one EndpointSlice changed costs that route's work and a pass over the others' kept
// results:
// - its attachment to the listeners (attachRoute): the route object and the build's context
//   (our classes, Gateways, Namespaces, Secrets, ReferenceGrants and Ingresses, gateway-context.ts);
// - its hostnames after host ownership (keepOwnedHosts): the attachment and the ownership, which
//   is the same object while every route's claims are the same;
// - its backends (routeBackends): the route, the context, and the Services and EndpointSlices it
//   read, whose changes the dependents map back to it (entry-dependents.ts, recorded reads), and
//   the baseline's slots (all are dropped when the baseline is not the builder's own output);
// - its match line candidates and budget measures: the three above.
// Each part keeps the warnings and guard rejections it logged, replayed in a cold build's order.
import type { KubeObject } from '../protocol.js';
import { describe } from '../store/object-guard.js';
import type { Claimant } from './claimant.js';
import { creationTime } from './claimant.js';
import { attachRoute, type Attachment, type ParentResult, type UnservedListener } from './gateway-attachment.js';
import { routeBackends, type MatchSpec, type RouteBackends, type RuleSpec } from './gateway-backends.js';
import type { GatewayContext } from './gateway-context.js';
import type { LineCandidate } from './gateway-lines.js';
import { claimantOf, type HostOwnership } from './gateway-ownership.js';
import type { GatewayOptions, RouteStatus } from './gateway-model.js';
import type { Backend, ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';
import { RecordedReads, type LogEntry } from './recorded-reads.js';
import { checkedSlots, routeOutputBytes, type RouteBudgetItem } from './route-budget.js';
import { granted } from './reference-grants.js';
import { keepUnchangedBackends } from './entry-compare.js';

/** Match lines one route may add (hostnames x rules x matches x parents). */
export const MAX_ROUTE_LINES = 1024;

export interface RouteEntry {
  readonly key: string;
  readonly route: KubeObject;
  readonly context: GatewayContext;
  /** The route's parents as attached, before host ownership; empty when it names none of our Gateways. */
  readonly attached: readonly ParentResult[];
  readonly attachLog: readonly LogEntry[];
  /** Its claims (claimant and hostnames), as one string: the same string, the same claims. */
  readonly claims: string;
  owned?: { readonly ownership: HostOwnership; readonly parents: readonly ParentResult[]; readonly attachments: readonly Attachment[]; readonly unserved: readonly UnservedListener[]; readonly log: readonly LogEntry[] } | undefined;
  backends?: { readonly built: RouteBackends; readonly log: readonly LogEntry[]; readonly deps: readonly string[] } | undefined;
  lines?: RouteLines | undefined;
  /** Its status, for whether it was refused (and why), from its lines. */
  status?: { readonly refused: string | undefined; readonly from: RouteLines; readonly status: RouteStatus } | undefined;
  /** The build that last met it. */
  seen: number;
}

/** The candidates and measures of a route, from its owned parents and backends. */
export interface RouteLines {
  readonly from: { readonly owned: unknown; readonly backends: unknown };
  /** `[bind, candidate]` per listener, hostname, rule and match. */
  readonly own: readonly (readonly [string, LineCandidate])[];
  /** Its budget measures, when it is within the line limit and attached somewhere. */
  readonly item: RouteBudgetItem | undefined;
  /** Over MAX_ROUTE_LINES: not served. */
  readonly tooMany: boolean;
  readonly log: readonly LogEntry[];
}

export function routeKey(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

/** The route's parents and claims, as attachRoute decides them in `context`. */
export function attachEntry(route: KubeObject, context: GatewayContext, source: ModelSource, options: GatewayOptions): RouteEntry {
  const reads = new RecordedReads(source);
  const attached = attachRoute(route, context.gateways, reads, options);
  const claimant = claimantOf(route, 'HTTPRoute');
  const hosts: string[] = [];
  for (const parent of attached) for (const a of parent.attachments) for (const host of a.hostnames) if (host !== '') hosts.push(host);
  const claims = hosts.length === 0 ? '' : `${claimant.created}\0${claimant.owner}\0${hosts.join('\0')}`;
  return { key: routeKey(route), route, context, attached, attachLog: reads.log, claims, seen: 0 };
}

/** The route's claims on `ownership`. */
export function claimHosts(entry: RouteEntry, ownership: HostOwnership): void {
  if (entry.claims === '') return;
  const claimant = claimantOf(entry.route, 'HTTPRoute');
  for (const parent of entry.attached) for (const a of parent.attachments) for (const host of a.hostnames) if (host !== '') ownership.claim(host, claimant);
}

/**
 * The route's backends, with the dependency keys of the reads they were built from; a backend
 * equal to one of `prior` (the route's last backends) is that object, and the list `prior` when all are.
 */
export function backendsOf(
  route: KubeObject,
  source: ModelSource,
  model: ModelOptions,
  gateway: GatewayOptions,
  slots: (backend: string) => readonly string[] | undefined,
  prior?: readonly Backend[],
): NonNullable<RouteEntry['backends']> {
  const reads = new RecordedReads(source);
  const grants = (from: string, to: string, service: string): boolean => granted(reads, gateway.stores.referenceGrants, 'HTTPRoute', from, 'Service', to, service);
  const fresh = routeBackends(route, reads, model, grants, slots);
  const backends = keepUnchangedBackends(prior, fresh.backends);
  const built = backends === fresh.backends ? fresh : { ...fresh, backends };
  return { built, log: reads.log, deps: reads.deps };
}

/** The route's candidates and measures, from its owned parents and backends (both present). */
export function linesOf(entry: RouteEntry): RouteLines {
  const owned = entry.owned as NonNullable<RouteEntry['owned']>;
  const backends = entry.backends as NonNullable<RouteEntry['backends']>;
  const { route, context } = entry;
  const { built } = backends;
  const attached = owned.attachments;
  const claimant: Claimant = { owner: entry.key, namespace: route.metadata.namespace ?? '', created: creationTime(route) };
  const rules = (route.spec as { rules?: (RuleSpec | null)[] }).rules ?? [];
  const own: [string, LineCandidate][] = [];
  for (const { listener, hostnames } of attached) {
    const listenerScheme = listener.spec.protocol === 'HTTPS' ? ('https' as const) : ('http' as const);
    const listenerTerm = context.listenerTerm.get(listener) ?? '';
    const listenerKey = context.listenerKey.get(listener) ?? '';
    for (const hostname of hostnames) {
      rules.forEach((rule, r) => {
        const targets = built.rules[r];
        if (rule === null || targets === undefined) return;
        const matches: MatchSpec[] = rule.matches === undefined || rule.matches.length === 0 ? [{}] : rule.matches;
        matches.forEach((match, m) => {
          own.push([listener.bind, { hostname, listenerTerm, listenerKey, listenerPort: listener.spec.port, listenerScheme, match, route: claimant, rule: r, matchIndex: m, targets }]);
        });
      });
    }
  }
  const log: LogEntry[] = [];
  const from = { owned, backends };
  if (own.length > MAX_ROUTE_LINES) {
    log.push({ warn: `${describe(route)}: would add ${own.length} match lines (hostnames x rules x matches x listeners), over the limit of ${MAX_ROUTE_LINES}; it is not served` });
    return { from, own, item: undefined, tooMany: true, log };
  }
  if (attached.length === 0) return { from, own, item: undefined, tooMany: false, log };
  const lineSizes = own.map(([, c]) => c.hostname.length + JSON.stringify(c.match).length);
  const item: RouteBudgetItem = { kind: 'HTTPRoute', key: entry.key, claimant: claimantOf(route, 'HTTPRoute'), outputBytes: routeOutputBytes(built.backends, lineSizes), slots: checkedSlots(built.backends) };
  return { from, own, item, tooMany: false, log };
}

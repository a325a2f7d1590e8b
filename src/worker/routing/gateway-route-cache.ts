// What a Gateway build keeps of the previous one's ordering work, so a build after a few routes
// changed orders only those, and each result is the one a cold build's sort gives:
// - RouteOrder: the HTTPRoutes oldest first (then by namespace/name); a list of the same routes
//   (by key and creation time) keeps the previous order with the new objects in place.
// - FrontendRouteCache: each bind's line candidates in precedence order (compareCandidates).
//   Candidates of unchanged routes are the same objects as before and keep their relative order;
//   the new ones are sorted and merged in. Candidates of different routes never compare equal
//   (their claimants differ), so the merge is the stable sort of the whole list; a merge that
//   meets a tie sorts the whole list instead. A candidate's match line is kept with it, except a
//   redirect's, whose name depends on the redirects met before it (computed in order each time).
import type { KubeObject } from '../protocol.js';
import { creationTime } from './claimant.js';
import { compareCandidates, type LineCandidate } from './gateway-lines.js';
import type { GatewayRedirect } from './gateway-model.js';
import { routeKey } from './gateway-route-entries.js';
import { keyedHost, plannedOf, wildcardLookups, type FrontendRoutes, type Planned } from './gateway-routes.js';
import type { GatewayRouteMaps } from './gateway-model.js';
import type { RouteEntry } from './model.js';
import { comparatorOf, planRoutes, routeClaims, TABLES, type Claim, type TableName } from './route-table.js';

/** Over this many new candidates in a bind, it is sorted whole. */
const MAX_MERGED = 256;

export class RouteOrder {
  #list: readonly KubeObject[] | undefined;
  #sorted: { routes: readonly KubeObject[]; keys: readonly string[] } = { routes: [], keys: [] };
  /** Index in the order and creation time, by `namespace/name`. */
  #at = new Map<string, { index: number; created: number }>();

  /** `list` oldest first, then by namespace/name, and the `namespace/name` of each. */
  sorted(list: readonly KubeObject[]): { routes: readonly KubeObject[]; keys: readonly string[] } {
    if (list === this.#list) return this.#sorted;
    const kept = list.length === this.#sorted.routes.length ? this.#reordered(list) : undefined;
    this.#list = list;
    if (kept !== undefined) return (this.#sorted = { routes: kept, keys: this.#sorted.keys });
    const keyed = list.map((route) => ({ route, created: creationTime(route), key: routeKey(route) }));
    keyed.sort((a, b) => a.created - b.created || a.key.localeCompare(b.key));
    this.#sorted = { routes: keyed.map((k) => k.route), keys: keyed.map((k) => k.key) };
    this.#at = new Map(keyed.map((k, index) => [k.key, { index, created: k.created }]));
    return this.#sorted;
  }

  /** The previous order with `list`'s objects, when it holds the same keys with the same creation times. */
  #reordered(list: readonly KubeObject[]): KubeObject[] | undefined {
    const previous = this.#sorted.routes;
    const out = new Array<KubeObject | undefined>(list.length);
    for (const route of list) {
      const key = routeKey(route);
      const at = this.#at.get(key);
      if (at === undefined || out[at.index] !== undefined) return undefined;
      if (previous[at.index] !== route && creationTime(route) !== at.created) return undefined;
      out[at.index] = route;
    }
    return out as KubeObject[];
  }
}

interface BindState {
  readonly sorted: readonly LineCandidate[];
  readonly members: ReadonlySet<LineCandidate>;
  /** Each table's entries in table order, and by key. */
  readonly tables: ReadonlyMap<TableName, { readonly sorted: readonly RouteEntry[]; readonly byKey: ReadonlyMap<string, RouteEntry> }>;
}

export class FrontendRouteCache {
  #binds = new Map<string, BindState>();
  readonly #planned = new WeakMap<LineCandidate, Planned>();
  readonly #claims = new WeakMap<Planned, readonly Claim[]>();

  /** The routes of `bind` from its `candidates` (in route order), as frontendRoutes gives them. */
  routes(bind: string, mapPrefix: string, candidates: readonly LineCandidate[], redirect: (r: Omit<GatewayRedirect, 'name'>) => string): FrontendRoutes {
    const previous = this.#binds.get(bind);
    const sorted = this.#order(previous, candidates);
    const planned = sorted.map((candidate) => {
      if (candidate.targets.redirect !== undefined) return plannedOf(candidate, redirect);
      let known = this.#planned.get(candidate);
      if (known === undefined) {
        known = plannedOf(candidate, redirect);
        this.#planned.set(candidate, known);
      }
      return known;
    });
    const plan = planRoutes(planned);
    const tables = this.#tables(previous?.tables, plan.mapped);
    this.#binds.set(bind, { sorted, members: previous?.sorted === sorted ? previous.members : new Set(sorted), tables });
    const map = (name: TableName, file: string): GatewayRouteMaps['hostExact'] => ({ name: `${mapPrefix}${file}`, entries: tables.get(name)?.sorted ?? [] });
    return {
      maps: { hostExact: map('hostExact', 'host-exact.map'), hostPrefix: map('hostPrefix', 'host-prefix.map'), pathExact: map('pathExact', 'path-exact.map'), pathPrefix: map('pathPrefix', 'path-prefix.map') },
      lines: plan.early.map((route) => route.line),
      lateLines: plan.late.map((route) => route.line),
      wildcardLabels: wildcardLookups(plan.mapped),
    };
  }

  /**
   * The route tables of `mapped` (in precedence order: each key goes to its first claimant), as
   * claimTables gives them: entries of keys that kept their backend keep their objects and
   * order, the others are sorted and merged in (keys are unique, so table order is total).
   */
  #tables(previous: BindState['tables'] | undefined, mapped: readonly Planned[]): BindState['tables'] {
    const winners = new Map<TableName, Map<string, string>>(TABLES.map((name) => [name, new Map()]));
    for (const route of mapped) {
      for (const { table, key } of this.#claimsOf(route)) {
        const won = winners.get(table) as Map<string, string>;
        if (!won.has(key)) won.set(key, route.backend);
      }
    }
    const tables = new Map<TableName, { sorted: readonly RouteEntry[]; byKey: ReadonlyMap<string, RouteEntry> }>();
    for (const [name, won] of winners) {
      const before = previous?.get(name);
      const compare = comparatorOf(name);
      const byKey = new Map<string, RouteEntry>();
      const added: RouteEntry[] = [];
      for (const [key, backend] of won) {
        const kept = before?.byKey.get(key);
        const entry = kept !== undefined && kept.backend === backend ? kept : { key, backend };
        if (entry !== kept) added.push(entry);
        byKey.set(key, entry);
      }
      let sorted: readonly RouteEntry[];
      if (before === undefined || added.length > MAX_MERGED) sorted = [...byKey.values()].sort(compare);
      else if (added.length === 0 && byKey.size === before.sorted.length) sorted = before.sorted;
      // Keys are unique, so entries never tie.
      else sorted = merge(before.sorted.filter((e) => byKey.get(e.key) === e), added.sort(compare), compare) ?? [...byKey.values()].sort(compare);
      tables.set(name, { sorted, byKey });
    }
    return tables;
  }

  /** The keys a planned route claims, made once per route. */
  #claimsOf(route: Planned): readonly Claim[] {
    let claims = this.#claims.get(route);
    if (claims === undefined) {
      claims = routeClaims(keyedHost(route), route.scope);
      this.#claims.set(route, claims);
    }
    return claims;
  }

  /** Forgets the binds not in `binds`. */
  keep(binds: Iterable<string>): void {
    const live = new Set(binds);
    for (const bind of this.#binds.keys()) if (!live.has(bind)) this.#binds.delete(bind);
  }

  #order(previous: BindState | undefined, candidates: readonly LineCandidate[]): readonly LineCandidate[] {
    if (previous === undefined) return [...candidates].sort(compareCandidates);
    const added = candidates.filter((c) => !previous.members.has(c));
    if (added.length === 0 && candidates.length === previous.sorted.length) return previous.sorted;
    if (added.length > MAX_MERGED) return [...candidates].sort(compareCandidates);
    const present = new Set(candidates);
    const kept = previous.sorted.filter((c) => present.has(c));
    // Candidates of different routes never tie: a tie sorts the whole list, as a cold build does.
    return merge(kept, added.sort(compareCandidates), compareCandidates) ?? [...candidates].sort(compareCandidates);
  }
}

/** `kept` and `added`, each in order, merged; undefined when an item of `added` ties with one of `kept`. */
function merge<T>(kept: readonly T[], added: readonly T[], compare: (a: T, b: T) => number): T[] | undefined {
  const out: T[] = [];
  let from = 0;
  for (const item of added) {
    // The first kept item that comes after it (binary search over the rest).
    let lo = from;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const order = compare(kept[mid] as T, item);
      if (order === 0) return undefined;
      if (order < 0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = from; i < lo; i++) out.push(kept[i] as T);
    out.push(item);
    from = lo;
  }
  for (let i = from; i < kept.length; i++) out.push(kept[i] as T);
  return out;
}

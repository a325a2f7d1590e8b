// What a Gateway build keeps of the previous one's ordering work, so a build after a few routes
// changed orders only those, and each result is the one a cold build's sort gives:
// - RouteOrder: the HTTPRoutes oldest first (then by namespace/name); a list of the same routes
//   (by key and creation time) keeps the previous order with the new objects in place.
// - FrontendRouteCache: each bind's line candidates in precedence order (compareCandidates),
//   patched by the candidates the builder says were removed and added (binary search and
//   splice; candidates of different routes never compare equal, and a tie sorts the whole list
//   as a cold build does). A bind whose candidates are all plain map entries (no redirect,
//   wildcard hostname, method, header or query match, or weighted shares) keeps its route
//   tables key by key (gateway-bind-tables.ts), so a change costs its own keys; any other bind
//   is planned whole over the patched order. A candidate's match line is kept with it, except a
//   redirect's, whose name depends on the redirects met before it (computed in order each time).
import type { KubeObject } from '../protocol.js';
import { creationTime } from './claimant.js';
import { compareCandidates, type LineCandidate } from './gateway-lines.js';
import type { GatewayRedirect } from './gateway-model.js';
import type { GatewayMatchLine, GatewayRouteMaps, WildcardLookup } from './gateway-model.js';
import { BindTables, insertionPoint, lowerBound, type MappedRoute } from './gateway-bind-tables.js';
import { routeKey } from './gateway-route-entries.js';
import { plannedOf, wildcardLookups, type FrontendRoutes, type Planned } from './gateway-routes.js';
import { planRoutes, type TableName } from './route-table.js';

/** Over this many new candidates in a bind, it is sorted whole. */
const MAX_MERGED = 256;

/** The routes in order, with their keys and, when known, the places whose object changed since the last order (`base`). */
export interface SortedRoutes {
  readonly routes: readonly KubeObject[];
  readonly keys: readonly string[];
  readonly changes: { readonly base: readonly KubeObject[]; readonly at: readonly number[] } | undefined;
}

/** Over this many places of a list changed, the list is matched with the last order route by route. */
const MAX_REPLACED = 64;

export class RouteOrder {
  #list: readonly KubeObject[] | undefined;
  #sorted: { routes: readonly KubeObject[]; keys: readonly string[] } = { routes: [], keys: [] };
  /** Index in the order and creation time, by `namespace/name`. */
  #at = new Map<string, { index: number; created: number }>();
  /** Index in the order of the route objects met so far (an unchanged route is the same object). */
  #index = new WeakMap<KubeObject, number>();
  /** Index in the order of each element of `#list`: a route at the same place of the next list is found without a lookup. */
  #listAt: number[] = [];

  /**
   * `list` oldest first, then by namespace/name, and the `namespace/name` of each; `changes`,
   * when the order is the last call's (`base`) with other objects at some places, says which
   * (ascending); undefined when the list was sorted again.
   */
  sorted(list: readonly KubeObject[]): SortedRoutes {
    const base = this.#sorted.routes;
    if (list === this.#list) return { ...this.#sorted, changes: { base, at: [] } };
    const kept = list.length === base.length ? (this.#replaced(list) ?? this.#reordered(list)) : undefined;
    this.#list = list;
    if (kept !== undefined) {
      this.#listAt = kept.at;
      this.#sorted = { routes: kept.routes, keys: this.#sorted.keys };
      return { ...this.#sorted, changes: { base, at: kept.changed.sort((a, b) => a - b) } };
    }
    const keyed = list.map((route, at) => ({ route, at, created: creationTime(route), key: routeKey(route) }));
    keyed.sort((a, b) => a.created - b.created || a.key.localeCompare(b.key));
    this.#sorted = { routes: keyed.map((k) => k.route), keys: keyed.map((k) => k.key) };
    this.#at = new Map(keyed.map((k, index) => [k.key, { index, created: k.created }]));
    this.#index = new WeakMap(keyed.map((k, index) => [k.route, index]));
    const listAt = new Array<number>(list.length);
    keyed.forEach((k, index) => (listAt[k.at] = index));
    this.#listAt = listAt;
    return { ...this.#sorted, changes: undefined };
  }

  /** The place of the route `key` in the last order. */
  indexOf(key: string): number | undefined {
    return this.#at.get(key)?.index;
  }

  /**
   * The previous order with `list`'s objects, when `list` is the last list but at a few places,
   * each holding the route of the same key and creation time; undefined otherwise.
   */
  #replaced(list: readonly KubeObject[]): { routes: KubeObject[]; at: number[]; changed: number[] } | undefined {
    const last = this.#list;
    if (last === undefined || last.length !== list.length) return undefined;
    const places: number[] = [];
    for (let i = 0; i < list.length; i++) {
      if (list[i] === last[i]) continue;
      if (places.length === MAX_REPLACED) return undefined;
      places.push(i);
    }
    const lastAt = this.#listAt;
    const routes = this.#sorted.routes.slice();
    const changed: number[] = [];
    for (const i of places) {
      const route = list[i] as KubeObject;
      const at = lastAt[i] as number;
      const known = this.#at.get(routeKey(route));
      if (known === undefined || known.index !== at || creationTime(route) !== known.created) return undefined;
      routes[at] = route;
      this.#index.set(route, at);
      changed.push(at);
    }
    return { routes, at: lastAt, changed };
  }

  /** The previous order with `list`'s objects, when it holds the same keys with the same creation times; and the index of each in it. */
  #reordered(list: readonly KubeObject[]): { routes: KubeObject[]; at: number[]; changed: number[] } | undefined {
    const previous = this.#sorted.routes;
    const last = this.#list ?? [];
    const lastAt = this.#listAt;
    const out = new Array<KubeObject | undefined>(list.length);
    const places = new Array<number>(list.length);
    const index = this.#index;
    const changed: number[] = [];
    for (let i = 0; i < list.length; i++) {
      const route = list[i] as KubeObject;
      // The object this order placed there: its key and creation time are the same.
      let at = last[i] === route ? lastAt[i] : index.get(route);
      if (at === undefined || previous[at] !== route) {
        const known = this.#at.get(routeKey(route));
        if (known === undefined || creationTime(route) !== known.created) return undefined;
        at = known.index;
        index.set(route, at);
        if (previous[at] !== route) changed.push(at);
      }
      if (out[at] !== undefined) return undefined;
      out[at] = route;
      places[i] = at;
    }
    return { routes: out as KubeObject[], at: places, changed };
  }
}

interface BindState {
  /** The bind's candidates in precedence order. */
  readonly sorted: readonly LineCandidate[];
  readonly tables: BindTables;
  /** Every candidate is a map entry: no redirect, wildcard hostname or condition (the plan is the identity). */
  readonly plain: boolean;
  /** The map file prefix `result` names: binds are numbered in order, so another bind renumbers this one. */
  readonly mapPrefix: string;
  readonly result: FrontendRoutes;
}

/** The candidates a build adds to and removes from a bind, since the last build. */
export interface BindChange {
  readonly removed: readonly LineCandidate[];
  readonly added: readonly LineCandidate[];
}

const NO_LINES: readonly GatewayMatchLine[] = Object.freeze([]);
const NO_WILDCARDS: readonly WildcardLookup[] = Object.freeze([]);

export class FrontendRouteCache {
  #binds = new Map<string, BindState>();
  readonly #planned = new WeakMap<LineCandidate, Planned>();

  /**
   * The routes of `bind`, as frontendRoutes gives them for its candidates in route order
   * (`all`), from `change`, what was added and removed since the last call for the bind. A bind
   * whose candidates are all plain map entries is patched (its order and its tables, by the
   * changed candidates alone); others are planned whole over the patched order.
   */
  routes(bind: string, mapPrefix: string, change: BindChange, all: () => readonly LineCandidate[], redirect: (r: Omit<GatewayRedirect, 'name'>) => string): FrontendRoutes {
    const previous = this.#binds.get(bind);
    const size = change.removed.length + change.added.length;
    if (previous !== undefined && size === 0 && previous.plain && previous.mapPrefix === mapPrefix) return previous.result;
    const sorted = (previous === undefined || size > MAX_MERGED ? undefined : patchedOrder(previous.sorted, change)) ?? [...all()].sort(compareCandidates);
    const map = (tables: BindTables, name: TableName, file: string): GatewayRouteMaps['hostExact'] => ({ name: `${mapPrefix}${file}`, entries: tables.entries(name) });
    const maps = (tables: BindTables): GatewayRouteMaps => ({
      hostExact: map(tables, 'hostExact', 'host-exact.map'),
      hostPrefix: map(tables, 'hostPrefix', 'host-prefix.map'),
      pathExact: map(tables, 'pathExact', 'path-exact.map'),
      pathPrefix: map(tables, 'pathPrefix', 'path-prefix.map'),
    });
    if (previous?.plain === true && sorted !== undefined) {
      const added = change.added.map((candidate) => ({ candidate, route: this.#plannedOf(candidate, redirect) }));
      if (added.every(({ candidate, route }) => isPlain(candidate, route))) {
        const removed = change.removed.map((candidate) => ({ candidate, route: this.#plannedOf(candidate, redirect) }));
        const mapped = (): MappedRoute[] => previous.sorted.map((candidate) => ({ candidate, route: this.#plannedOf(candidate, redirect) }));
        if (previous.tables.patch(removed, added, mapped)) {
          const tables = previous.tables;
          const result = { maps: maps(tables), lines: NO_LINES, lateLines: NO_LINES, wildcardLabels: NO_WILDCARDS };
          this.#binds.set(bind, { sorted, tables, plain: true, mapPrefix, result });
          return result;
        }
      }
    }
    const planned = sorted.map((candidate) => this.#plannedOf(candidate, redirect));
    const plan = planRoutes(planned);
    const tables = BindTables.full(previous?.tables, plan.mapped);
    const plain = plan.mapped.length === planned.length && planned.every((route, i) => isPlain(sorted[i] as LineCandidate, route));
    const result = {
      maps: maps(tables),
      lines: plain ? NO_LINES : plan.early.map((route) => route.line),
      lateLines: plain ? NO_LINES : plan.late.map((route) => route.line),
      wildcardLabels: plain ? NO_WILDCARDS : wildcardLookups(plan.mapped),
    };
    this.#binds.set(bind, { sorted, tables, plain, mapPrefix, result });
    return result;
  }

  /** The candidate as the route table sees it; a redirect's is made again each time (its name depends on the redirects met before it). */
  #plannedOf(candidate: LineCandidate, redirect: (r: Omit<GatewayRedirect, 'name'>) => string): Planned {
    if (candidate.targets.redirect !== undefined) return plannedOf(candidate, redirect);
    let known = this.#planned.get(candidate);
    if (known === undefined) {
      known = plannedOf(candidate, redirect);
      this.#planned.set(candidate, known);
    }
    return known;
  }

  /** Forgets the binds not in `binds`. */
  keep(binds: Iterable<string>): void {
    const live = new Set(binds);
    for (const bind of this.#binds.keys()) if (!live.has(bind)) this.#binds.delete(bind);
  }

  /** Forgets every bind. */
  clear(): void {
    this.#binds.clear();
  }
}

/** A map entry of an exact or empty hostname with no redirect: the fast path's routes. */
function isPlain(candidate: LineCandidate, route: Planned): boolean {
  return candidate.targets.redirect === undefined && !route.conditional && !route.host.startsWith('*.');
}

/**
 * `sorted` without `change.removed` and with `change.added`, in precedence order; undefined when
 * a removed candidate is not found or an added one ties with another (the caller sorts whole,
 * as a cold build does: candidates of different routes never tie).
 */
function patchedOrder(sorted: readonly LineCandidate[], change: BindChange): LineCandidate[] | undefined {
  const out = sorted.slice();
  for (const candidate of change.removed) {
    let at = lowerBound(out, candidate, compareCandidates);
    while (at < out.length && out[at] !== candidate && compareCandidates(out[at] as LineCandidate, candidate) === 0) at++;
    if (out[at] !== candidate) return undefined;
    out.splice(at, 1);
  }
  for (const candidate of change.added) {
    const at = insertionPoint(out, candidate, compareCandidates);
    if (at === undefined) return undefined;
    out.splice(at, 0, candidate);
  }
  return out;
}

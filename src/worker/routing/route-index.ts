// Host and path route tables of the routing model, built in one go (`routeTables`) or kept up to
// date route by route (`RouteIndex`). A route claims one or two keys in the five tables; the first
// claimant of a key in precedence order (Exact before Prefix, then Ingress order, then rule order)
// serves it, and a later claimant with another backend is reported and ignored. The index keeps
// every key's claimants: while no key has more than one, the tables are exactly the claims, and a
// changed Ingress costs a few binary-search updates of sorted arrays. When keys are contested,
// the index falls back to the one-go build, so warnings come out exactly as a cold build has them.
import type { RouteEntry, RouteTables, RoutingModel } from './model.js';

export interface RouteCandidate {
  readonly host: string;
  readonly path: string;
  readonly exact: boolean;
  readonly backend: string;
  /** `Ingress namespace/name`, for messages. */
  readonly owner: string;
}

type TableName = keyof RouteTables;
const TABLES: readonly TableName[] = ['hostExact', 'hostPrefix', 'hostRegex', 'pathExact', 'pathPrefix'];

/** The five tables, each given by `table(name)`. */
function eachTable(table: (name: TableName) => readonly RouteEntry[]): RouteTables {
  return Object.fromEntries(TABLES.map((name) => [name, table(name)])) as unknown as RouteTables;
}

interface Claim {
  readonly table: TableName;
  readonly key: string;
  /** The key is the exact-match key of the route (an Exact route, or the exact half of a Prefix). */
  readonly exactKey: boolean;
}

/** The keys a route claims, in the order a build claims them. */
export function routeClaims(route: RouteCandidate): Claim[] {
  // Kubernetes ignores a trailing slash on a Prefix path: /foo/ matches /foo and /foo/bar.
  const base = route.exact || route.path === '/' ? route.path : route.path.replace(/\/+$/, '') || '/';
  if (route.host.startsWith('*.')) {
    const hostPattern = `^[^./]+${escapeRegex(route.host.slice(1))}`;
    return route.exact
      ? [{ table: 'hostRegex', key: `${hostPattern}${escapeRegex(base)}$`, exactKey: true }]
      : [{ table: 'hostRegex', key: `${hostPattern}${base === '/' ? '/' : `${escapeRegex(base)}(/|$)`}`, exactKey: false }];
  }
  const exactTable: TableName = route.host === '' ? 'pathExact' : 'hostExact';
  const prefixTable: TableName = route.host === '' ? 'pathPrefix' : 'hostPrefix';
  if (route.exact) return [{ table: exactTable, key: route.host + base, exactKey: true }];
  if (base === '/') return [{ table: prefixTable, key: `${route.host}/`, exactKey: false }];
  return [
    { table: exactTable, key: route.host + base, exactKey: true },
    { table: prefixTable, key: `${route.host}${base}/`, exactKey: false },
  ];
}

/** Table order: longest key first (map_beg and map_reg take the first match), then by key. */
function compareEntries(a: RouteEntry, b: RouteEntry): number {
  return b.key.length - a.key.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** The tables of `routes` (in Ingress order), with a warning per ignored conflicting route. */
export function routeTables(routes: readonly RouteCandidate[], warn: (message: string) => void): RouteTables {
  const tables = new Map<TableName, Map<string, RouteCandidate>>(TABLES.map((name) => [name, new Map()]));
  // Exact paths first: for the same key, Kubernetes gives an Exact path precedence over a Prefix.
  const ordered = [...routes].sort((a, b) => Number(b.exact) - Number(a.exact));
  const warned = new Set<string>();
  for (const route of ordered) {
    for (const { table: name, key, exactKey } of routeClaims(route)) {
      const table = tables.get(name) as Map<string, RouteCandidate>;
      const holder = table.get(key);
      if (holder === undefined) {
        table.set(key, route);
      } else if (holder.backend !== route.backend && !(holder.exact && !route.exact && exactKey)) {
        // A Prefix route claims two keys; its conflict is reported once.
        const message = `${route.owner}: route ${route.host}${route.path} is already served by ${holder.owner}; ignored`;
        if (!warned.has(message)) {
          warned.add(message);
          warn(message);
        }
      }
    }
  }
  const entries = (name: TableName): RouteEntry[] =>
    [...(tables.get(name) as Map<string, RouteCandidate>).entries()].map(([key, route]) => ({ key, backend: route.backend })).sort(compareEntries);
  return eachTable(entries);
}

/**
 * Every key's claimants, and the tables they give. `remove` and `add` record route changes;
 * `tables` then brings the previous tables up to date. Arrays handed out are never modified
 * afterwards (a changed table is a new array; an unchanged one keeps its identity).
 */
export class RouteIndex {
  /** `table \0 key` -> the routes claiming it. */
  readonly #claims = new Map<string, RouteCandidate[]>();
  /** Keys with more than one claimant. */
  #contested = 0;
  /** Keys whose claimants changed since the last `tables` call. */
  #touched = new Map<string, { table: TableName; key: string }>();

  get contestedKeys(): number {
    return this.#contested;
  }

  clear(): void {
    this.#claims.clear();
    this.#contested = 0;
    this.#touched.clear();
  }

  add(routes: readonly RouteCandidate[]): void {
    for (const route of routes) {
      for (const { table, key } of routeClaims(route)) {
        const id = `${table}\0${key}`;
        let claimants = this.#claims.get(id);
        if (claimants === undefined) {
          claimants = [];
          this.#claims.set(id, claimants);
        }
        claimants.push(route);
        if (claimants.length === 2) this.#contested++;
        this.#touched.set(id, { table, key });
      }
    }
  }

  remove(routes: readonly RouteCandidate[]): void {
    for (const route of routes) {
      for (const { table, key } of routeClaims(route)) {
        const id = `${table}\0${key}`;
        const claimants = this.#claims.get(id);
        const at = claimants?.indexOf(route) ?? -1;
        if (claimants === undefined || at < 0) continue;
        claimants.splice(at, 1);
        if (claimants.length === 1) this.#contested--;
        if (claimants.length === 0) this.#claims.delete(id);
        this.#touched.set(id, { table, key });
      }
    }
  }

  /**
   * The tables after the recorded changes. Without contested keys they follow from `previous`
   * by updating the touched keys; otherwise (or with no previous tables) they are built in one go
   * from `all()`, the routes in Ingress order, and conflict warnings go to `warn`.
   */
  tables(previous: RouteTables | undefined, all: () => readonly RouteCandidate[], warn: (message: string) => void): RouteTables {
    const touched = this.#touched;
    this.#touched = new Map();
    if (this.#contested > 0) {
      const fresh = routeTables(all(), warn);
      return previous === undefined ? fresh : reuseUnchanged(fresh, previous);
    }
    if (previous === undefined) {
      // Every key has one claimant, which serves it.
      const lists = new Map<TableName, RouteEntry[]>(TABLES.map((name) => [name, []]));
      for (const [id, claimants] of this.#claims) {
        const cut = id.indexOf('\0');
        (lists.get(id.slice(0, cut) as TableName) as RouteEntry[]).push({ key: id.slice(cut + 1), backend: (claimants[0] as RouteCandidate).backend });
      }
      const sorted = (name: TableName): RouteEntry[] => (lists.get(name) as RouteEntry[]).sort(compareEntries);
      return eachTable(sorted);
    }
    // Touched tables are copied before they change: the previous arrays are never modified.
    const next = new Map<TableName, RouteEntry[]>();
    for (const [id, { table, key }] of touched) {
      let list = next.get(table);
      if (list === undefined) {
        list = previous[table].slice();
        next.set(table, list);
      }
      const claimant = this.#claims.get(id)?.[0];
      const at = position(list, key);
      const present = at < list.length && (list[at] as RouteEntry).key === key;
      if (claimant === undefined) {
        if (present) list.splice(at, 1);
      } else if (!present) {
        list.splice(at, 0, { key, backend: claimant.backend });
      } else if ((list[at] as RouteEntry).backend !== claimant.backend) {
        list[at] = { key, backend: claimant.backend };
      }
    }
    const pick = (name: TableName): readonly RouteEntry[] => {
      const list = next.get(name);
      return list === undefined || sameEntries(list, previous[name]) ? previous[name] : list;
    };
    return eachTable(pick);
  }
}

/** Where `key` is, or would go, in a table sorted by compareEntries (binary search). */
function position(list: readonly RouteEntry[], key: string): number {
  const probe = { key, backend: '' };
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareEntries(list[mid] as RouteEntry, probe) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function sameEntries(a: readonly RouteEntry[], b: readonly RouteEntry[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if ((a[i] as RouteEntry).key !== (b[i] as RouteEntry).key || (a[i] as RouteEntry).backend !== (b[i] as RouteEntry).backend) return false;
  }
  return true;
}

/** Keeps the previous array of every table whose content did not change. */
function reuseUnchanged(fresh: RouteTables, previous: RouteTables): RouteTables {
  const pick = (name: TableName): readonly RouteEntry[] => (sameEntries(fresh[name], previous[name]) ? previous[name] : fresh[name]);
  return eachTable(pick);
}

export function tablesOf(model: RoutingModel): RouteTables {
  const { hostExact, hostPrefix, hostRegex, pathExact, pathPrefix } = model;
  return { hostExact, hostPrefix, hostRegex, pathExact, pathPrefix };
}

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Host and path route tables, built in one go (`routeTables`) or kept up to date route by route
// (`RouteIndex`). A host and path belong to the namespace of their first claimant (claimant.ts);
// other namespaces' claims are refused with a warning. Within it, the first claimant of a key in
// precedence order (Exact before Prefix, then age, then rule order) serves it. While no key or
// host-and-path is contested the tables are exactly the claims, updated by binary search; when
// some are, the one-go build runs, so warnings come out exactly as a cold build has them.
import { compareClaimants, type Claimant } from './claimant.js';
import type { RouteEntry, RouteTables, RoutingModel } from './model.js';

export interface RouteCandidate extends Claimant {
  readonly host: string;
  readonly path: string;
  readonly exact: boolean;
  readonly backend: string;
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

/** The path a route matches on: Kubernetes ignores a trailing slash on a Prefix path (/foo/ matches /foo and /foo/bar). */
function basePath(route: RouteCandidate): string {
  return route.exact || route.path === '/' ? route.path : route.path.replace(/\/+$/, '') || '/';
}

/** The host and path a route claims: every claim of one belongs to one namespace. */
function identityOf(route: RouteCandidate): string {
  return `${route.host}\0${basePath(route)}`;
}

/** The keys a route claims, in the order a build claims them. */
export function routeClaims(route: RouteCandidate): Claim[] {
  const base = basePath(route);
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

/** A wildcard host's regex key for an Exact path: it ends with `$`, where a Prefix key ends with `(/|$)` or `/`. */
function isExactRegexKey(key: string): boolean {
  return key.endsWith('$') && !key.endsWith('(/|$)');
}

/**
 * Table order: longest key first (map_beg and map_reg take the first match), then by key. In
 * the regex table Exact keys come first: at most one wildcard host matches a Host header, and
 * an Exact path beats a Prefix on the same path, however long the Prefix's regex is.
 */
function comparatorOf(table: TableName): (a: RouteEntry, b: RouteEntry) => number {
  if (table !== 'hostRegex') return compareEntries;
  return (a, b) => Number(isExactRegexKey(b.key)) - Number(isExactRegexKey(a.key)) || compareEntries(a, b);
}

function compareEntries(a: RouteEntry, b: RouteEntry): number {
  return b.key.length - a.key.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** The tables of `routes`, with a warning per ignored route. */
export function routeTables(routes: readonly RouteCandidate[], warn: (message: string) => void): RouteTables {
  const tables = new Map<TableName, Map<string, RouteCandidate>>(TABLES.map((name) => [name, new Map()]));
  const warned = new Set<string>();
  const refuse = (route: RouteCandidate, holder: RouteCandidate): void => {
    // A Prefix route claims two keys; its conflict is reported once.
    const message = `${route.owner}: route ${route.host}${route.path} is already served by ${holder.owner}; ignored`;
    if (!warned.has(message)) {
      warned.add(message);
      warn(message);
    }
  };
  const byAge = [...routes].sort(compareClaimants);
  // The first claimant of a host and path decides the namespace that owns them.
  const owners = new Map<string, RouteCandidate>();
  const accepted: RouteCandidate[] = [];
  for (const route of byAge) {
    const id = identityOf(route);
    const first = owners.get(id);
    if (first === undefined) owners.set(id, route);
    if (first === undefined || first.namespace === route.namespace) accepted.push(route);
    else refuse(route, first);
  }
  // Exact paths first: for the same key, Kubernetes gives an Exact path precedence over a Prefix.
  const ordered = accepted.sort((a, b) => Number(b.exact) - Number(a.exact));
  for (const route of ordered) {
    for (const { table: name, key, exactKey } of routeClaims(route)) {
      const table = tables.get(name) as Map<string, RouteCandidate>;
      const holder = table.get(key);
      if (holder === undefined) {
        table.set(key, route);
      } else if (holder.backend !== route.backend && !(holder.exact && !route.exact && exactKey)) {
        refuse(route, holder);
      }
    }
  }
  const entries = (name: TableName): RouteEntry[] =>
    [...(tables.get(name) as Map<string, RouteCandidate>).entries()].map(([key, route]) => ({ key, backend: route.backend })).sort(comparatorOf(name));
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
  /** Host and path -> the routes claiming it. */
  readonly #identities = new Map<string, RouteCandidate[]>();
  /** Hosts and paths claimed from more than one namespace: the one-go build refuses some claims. */
  #shared = 0;
  /** Keys whose claimants changed since the last `tables` call. */
  #touched = new Map<string, { table: TableName; key: string }>();

  get contestedKeys(): number {
    return this.#contested + this.#shared;
  }

  clear(): void {
    this.#claims.clear();
    this.#identities.clear();
    this.#contested = 0;
    this.#shared = 0;
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
      this.#identity(route, true);
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
      this.#identity(route, false);
    }
  }

  /**
   * Adds or removes a route's host-and-path claim. When the claim stops being shared between
   * namespaces, every key of its claimants is touched: the one-go build that ran while it was
   * shared may have refused keys that no other route contests.
   */
  #identity(route: RouteCandidate, add: boolean): void {
    const id = identityOf(route);
    let claimants = this.#identities.get(id);
    const before = claimants !== undefined && spansNamespaces(claimants);
    if (add) {
      if (claimants === undefined) {
        claimants = [];
        this.#identities.set(id, claimants);
      }
      claimants.push(route);
    } else {
      const at = claimants?.indexOf(route) ?? -1;
      if (claimants === undefined || at < 0) return;
      claimants.splice(at, 1);
      if (claimants.length === 0) this.#identities.delete(id);
    }
    const after = claimants.length > 0 && spansNamespaces(claimants);
    if (before === after) return;
    this.#shared += after ? 1 : -1;
    for (const claimant of claimants) {
      for (const { table, key } of routeClaims(claimant)) this.#touched.set(`${table}\0${key}`, { table, key });
    }
  }

  /**
   * The tables after the recorded changes. Without contested keys or shared hosts and paths
   * they are the claims (`previous` updated at the touched keys, or all claims when there are no
   * previous tables); otherwise they are built in one go from `all()`, the routes in Ingress
   * order, and conflict warnings go to `warn`.
   */
  tables(previous: RouteTables | undefined, all: () => readonly RouteCandidate[], warn: (message: string) => void): RouteTables {
    const touched = this.#touched;
    this.#touched = new Map();
    if (this.#contested > 0 || this.#shared > 0) {
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
      const sorted = (name: TableName): RouteEntry[] => (lists.get(name) as RouteEntry[]).sort(comparatorOf(name));
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
      const at = position(list, key, comparatorOf(table));
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

/** Where `key` is, or would go, in a table sorted by `compare` (binary search). */
function position(list: readonly RouteEntry[], key: string, compare: (a: RouteEntry, b: RouteEntry) => number): number {
  const probe = { key, backend: '' };
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(list[mid] as RouteEntry, probe) < 0) lo = mid + 1;
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

function spansNamespaces(routes: readonly RouteCandidate[]): boolean {
  const first = (routes[0] as RouteCandidate).namespace;
  return routes.some((route) => route.namespace !== first);
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

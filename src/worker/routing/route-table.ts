// The one route table of Ingress and HTTPRoute alike. A route (an Ingress path, or an HTTPRoute
// match on a Gateway bind) is a host, a path, Exact or Prefix, and a target, within a scope (the
// Ingress frontends, or one Gateway listener). Routes with nothing more become map entries, the
// fast path: five tables of `host/path` and `path` keys, each key served by its first claimant
// in precedence order, looked up longest key first (map_beg and map_reg take the first match).
// What maps cannot express (header, query parameter and method matches, weighted shares) stays
// an ordered conditional rule: `planRoutes` splits a scope's routes, in precedence order, into
// the map routes and the rules before and after the host-less maps, so the request takes the
// same route either way. A Gateway wildcard hostname `*.d` (one label or more before `d`) is a
// map key too, `d*` (wildcardKeyHost): the frontend looks it up once per label count of the
// wildcards it has, most labels first, with the Host's last labels, so the most specific
// wildcard that covers the Host is looked at first.
// Host ownership across namespaces is decided before routes get here (host-owners.ts for
// Ingresses, gateway-ownership.ts across Ingresses and HTTPRoutes).
import type { RouteEntry, RouteTables } from './model.js';

export type TableName = keyof RouteTables;
export const TABLES: readonly TableName[] = ['hostExact', 'hostPrefix', 'hostRegex', 'pathExact', 'pathPrefix'];

/** A route as the tables see it. */
export interface TableRoute {
  readonly host: string;
  readonly path: string;
  readonly exact: boolean;
  readonly backend: string;
  /** A claim held for a rejected Ingress (held-claims.ts): it claims no key. */
  readonly held?: boolean;
}

export interface Claim {
  readonly table: TableName;
  readonly key: string;
  /** The key is the exact-match key of the route (an Exact route, or the exact half of a Prefix). */
  readonly exactKey: boolean;
}

/** The five tables, each given by `table(name)`. */
export function eachTable<T extends RouteEntry>(table: (name: TableName) => readonly T[]): RouteTables {
  return Object.fromEntries(TABLES.map((name) => [name, table(name)])) as unknown as RouteTables;
}

/** The path a route matches on: a trailing slash of a Prefix path is ignored (/foo/ matches /foo and /foo/bar). */
export function basePath(route: TableRoute): string {
  return route.exact || route.path === '/' ? route.path : route.path.replace(/\/+$/, '') || '/';
}

/**
 * The keys a route claims, in the order a build claims them; none for a held claim. `scope`
 * prefixes every key (a Gateway listener's `<index>@` on a bind with several listeners).
 */
export function routeClaims(route: TableRoute, scope = ''): Claim[] {
  if (route.held === true) return [];
  const base = basePath(route);
  if (route.host.startsWith('*.')) {
    const hostPattern = `^${escapeRegex(scope)}[^./]+${escapeRegex(route.host.slice(1))}`;
    return route.exact
      ? [{ table: 'hostRegex', key: `${hostPattern}${escapeRegex(base)}$`, exactKey: true }]
      : [{ table: 'hostRegex', key: `${hostPattern}${base === '/' ? '/' : `${escapeRegex(base)}(/|$)`}`, exactKey: false }];
  }
  const exactTable: TableName = route.host === '' ? 'pathExact' : 'hostExact';
  const prefixTable: TableName = route.host === '' ? 'pathPrefix' : 'hostPrefix';
  if (route.exact) return [{ table: exactTable, key: flatKey(scope, route.host, base), exactKey: true }];
  if (base === '/') return [{ table: prefixTable, key: flatKey(scope, route.host, '/'), exactKey: false }];
  return [
    { table: exactTable, key: flatKey(scope, route.host, base), exactKey: true },
    { table: prefixTable, key: flatKey(scope, route.host, base, '/'), exactKey: false },
  ];
}

/**
 * A map key as one flat string. `host + path` is a tree of pieces in V8 (a 32-byte node over
 * its parts); the first lookup by it flattens the characters into a string of their own but
 * keeps the node in front of it for as long as the key lives: the route tables, the claims and
 * the memo cache's entries hold every key of the maps, two or three per Ingress. join() builds
 * the flat string directly.
 */
function flatKey(...parts: string[]): string {
  return parts.join('');
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
export function comparatorOf(table: TableName): (a: RouteEntry, b: RouteEntry) => number {
  if (table !== 'hostRegex') return compareEntries;
  return (a, b) => Number(isExactRegexKey(b.key)) - Number(isExactRegexKey(a.key)) || compareEntries(a, b);
}

function compareEntries(a: RouteEntry, b: RouteEntry): number {
  return b.key.length - a.key.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/**
 * The tables of `routes`, given in precedence order: each key goes to its first claimant.
 * `scopeOf` gives a route's key prefix. A later claimant of a taken key goes to `conflict`
 * (with the holder and whether the key is its exact-match key), which decides nothing.
 */
export function claimTables<T extends TableRoute>(
  routes: readonly T[],
  conflict: (route: T, holder: T, exactKey: boolean) => void = () => undefined,
  scopeOf: (route: T) => string = () => '',
): RouteTables {
  const tables = new Map<TableName, Map<string, T>>(TABLES.map((name) => [name, new Map()]));
  for (const route of routes) {
    for (const { table: name, key, exactKey } of routeClaims(route, scopeOf(route))) {
      const table = tables.get(name) as Map<string, T>;
      const holder = table.get(key);
      if (holder === undefined) table.set(key, route);
      else conflict(route, holder, exactKey);
    }
  }
  return eachTable((name) => sortedTable(name, [...(tables.get(name) as Map<string, T>).entries()].map(([key, route]) => ({ key, backend: route.backend }))));
}

/** `entries` in table order (sorted in place). */
export function sortedTable(name: TableName, entries: RouteEntry[]): RouteEntry[] {
  return entries.sort(comparatorOf(name));
}

/** A route of one scope as `planRoutes` sees it. */
export interface PlannedRoute {
  /** '' for any host. */
  readonly host: string;
  /** Routes of one group (a scope and host) are mapped together or not at all. */
  readonly group: string;
  /** Needs more than a host and path lookup: a header, query or method match, or several targets. */
  readonly conditional: boolean;
  /** The key prefix of its scope (a Gateway listener's `<index>@`); '' when absent. */
  readonly scope?: string;
}

export interface RoutePlan<T> {
  /** Routes that become map entries, in precedence order. */
  readonly mapped: readonly T[];
  /** Ordered rules looked at after the host maps and before the host-less maps. */
  readonly early: readonly T[];
  /** Ordered rules looked at after the host-less maps. */
  readonly late: readonly T[];
}

/**
 * Splits routes given in precedence order (exact hosts, then wildcards, then '' for any host)
 * into map entries and ordered rules that together pick what the rules alone would. A request
 * meets the routes of one exact host at most, so a group of exact-host routes with no
 * conditional one is mapped, and the rest of the exact-host groups are rules beside it. The
 * wildcard rules come after those and before the wildcard lookups, so a wildcard group is
 * mapped only when no conditional wildcard group of its scope covers it (a request the wider
 * wildcard's rules take first would otherwise reach the narrower one's entries later than the
 * rules order says). Host-less groups are mapped when none of their routes is conditional,
 * else rules after the host-less maps.
 */
export function planRoutes<T extends PlannedRoute>(routes: readonly T[]): RoutePlan<T> {
  const conditionalGroups = new Set<string>();
  for (const route of routes) if (route.conditional) conditionalGroups.add(route.group);
  const conditionalWildcards = new Set<string>();
  for (const route of routes) if (route.host.startsWith('*.') && conditionalGroups.has(route.group)) conditionalWildcards.add(`${route.scope ?? ''}\0${route.host}`);
  if (conditionalWildcards.size > 0) {
    for (const route of routes) {
      if (!route.host.startsWith('*.') || conditionalGroups.has(route.group)) continue;
      // The wider wildcards of `*.a.b.c`: `*.b.c`, `*.c`.
      const labels = route.host.slice(2).split('.');
      for (let i = 1; i < labels.length; i++) {
        if (conditionalWildcards.has(`${route.scope ?? ''}\0*.${labels.slice(i).join('.')}`)) {
          conditionalGroups.add(route.group);
          break;
        }
      }
    }
  }
  const mapped: T[] = [];
  const early: T[] = [];
  const late: T[] = [];
  for (const route of routes) {
    if (!conditionalGroups.has(route.group)) mapped.push(route);
    else if (route.host === '') late.push(route);
    else early.push(route);
  }
  return { mapped, early, late };
}

/**
 * The map host of a Gateway wildcard hostname: `*.example.com` is `example.com*`. No Host has a
 * `*` (the frontends answer 400 to one), so these keys never meet an exact host's, and a lookup
 * key `<last labels>*<path>` meets only the entries of that one wildcard.
 */
export function wildcardKeyHost(host: string): string {
  return `${host.slice(2)}*`;
}

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

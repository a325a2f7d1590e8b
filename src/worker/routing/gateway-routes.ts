// The routes of one Gateway bind through the route table (route-table.ts): its match lines in
// the spec's precedence order (gateway-lines.ts), split into map entries for the lines that
// need only a hostname and path and send every request to one target (a backend, a redirect or
// the 500 backend), and ordered rules for the rest (method, header and query parameter matches,
// weighted shares), placed so a request takes the line it would take if
// every line were a rule. Map keys are those of Ingress routes, with the listener's `<index>@`
// in front on a bind with several listeners (the frontend builds its lookup keys the same way).
import { hasConditions, lineOf, type LineCandidate } from './gateway-lines.js';
import type { GatewayMatchLine, GatewayRedirect, GatewayRouteMaps, WildcardLookup } from './gateway-model.js';
import { normalizePrefix } from './gateway-backends.js';
import { wildcardKeyHost, type PlannedRoute, type TableRoute } from './route-table.js';

export interface FrontendRoutes {
  readonly maps: GatewayRouteMaps;
  /** Rules after the host maps, before the host-less maps. */
  readonly lines: readonly GatewayMatchLine[];
  /** Rules after the host-less maps. */
  readonly lateLines: readonly GatewayMatchLine[];
  /** The wildcard lookups of the host maps, most labels first. */
  readonly wildcardLabels: readonly WildcardLookup[];
}

export interface Planned extends PlannedRoute, TableRoute {
  readonly scope: string;
  readonly line: GatewayMatchLine;
}

/** A candidate as the route table sees it, with its match line. */
export function plannedOf(candidate: LineCandidate, redirect: (r: Omit<GatewayRedirect, 'name'>) => string): Planned {
  const line = lineOf(candidate, redirect);
  const path = candidate.match.path;
  const exact = path?.type === 'Exact';
  return {
    host: candidate.hostname,
    group: `${candidate.listenerKey}\0${candidate.hostname}`,
    conditional: hasConditions(candidate.match) || line.targets.length !== 1,
    path: exact ? (path?.value ?? '/') : normalizePrefix(path?.value),
    exact,
    backend: line.targets[0]?.backend ?? '',
    scope: candidate.listenerKey,
    line,
  };
}

/** A mapped route as its table keys it: a wildcard `*.d` is the host `d*` (route-table.ts). */
export function keyedHost<T extends Planned>(route: T): T {
  return route.host.startsWith('*.') ? { ...route, host: wildcardKeyHost(route.host) } : route;
}

/** The label counts of the mapped wildcard hosts, most first, as the frontend looks them up. */
export function wildcardLookups(mapped: readonly Planned[]): WildcardLookup[] {
  const labels = new Set<number>();
  for (const route of mapped) if (route.host.startsWith('*.')) labels.add(route.host.split('.').length - 1);
  return [...labels].sort((a, b) => b - a).map((n) => ({ labels: n, guard: n + 1 }));
}

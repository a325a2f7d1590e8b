// HTTPRoutes in the budgets the namespaces share (output-budget.ts, slot-budget.ts), beside the
// Ingresses: each served route is an item with its claimant, the bytes it adds to the output
// and the health-checked server slots of its backends. The Ingress builder decides both budgets
// over Ingresses and routes together (the largest namespace gives up its newest item, whatever
// its kind); the Gateway builder then leaves out the routes given up for the output budget and
// serves those starved of slots without servers (their requests answer 503).
import type { Claimant } from './claimant.js';
import type { Backend } from './model.js';

export interface RouteBudgetItem {
  readonly kind: 'HTTPRoute';
  /** `namespace/name`. */
  readonly key: string;
  readonly claimant: Claimant;
  readonly outputBytes: number;
  /** Health-checked server slots of its backends. */
  readonly slots: number;
}

/** What the budgets decided for HTTPRoutes: route key -> the warning. */
export interface RouteLimits {
  /** Left out for the output budget: not served. */
  readonly shed: ReadonlyMap<string, string>;
  /** Their backends get no servers, for the server slot budget. */
  readonly starved: ReadonlyMap<string, string>;
}

export const NO_ROUTE_LIMITS: RouteLimits = Object.freeze({ shed: new Map<string, string>(), starved: new Map<string, string>() });

export function limitsKey(limits: RouteLimits): string {
  return `${[...limits.shed.keys()].join(',')}|${[...limits.starved.keys()].join(',')}`;
}

/** Text the config, maps and slot file carry per backend, server slot and match line, besides the values in them (as for Ingresses). */
const BACKEND_OVERHEAD = 200;
const SERVER_OVERHEAD = 20;
const LINE_OVERHEAD = 40;

/**
 * About how many bytes a route adds: its backends with their options, filters and slots, and per
 * match line (`lineSizes`: the characters of its hostname and match) its condition or map entries.
 */
export function routeOutputBytes(backends: readonly Backend[], lineSizes: readonly number[]): number {
  let bytes = 0;
  for (const backend of backends) {
    bytes += BACKEND_OVERHEAD + 4 * backend.name.length + JSON.stringify(backend.options).length + JSON.stringify(backend.gateway ?? {}).length;
    for (const server of backend.servers) bytes += SERVER_OVERHEAD + 2 * (server.name.length + server.address.length);
  }
  for (const size of lineSizes) bytes += LINE_OVERHEAD + 4 * size;
  return bytes;
}

/** Health-checked slots of `backends` (only they hold a descriptor). */
export function checkedSlots(backends: readonly Backend[]): number {
  return backends.reduce((sum, backend) => sum + (backend.options.check ? backend.servers.length : 0), 0);
}

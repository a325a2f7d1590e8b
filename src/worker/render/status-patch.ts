// The Gateway status report of a render as a patch of an earlier one the receiver holds. At
// 10,000 HTTPRoutes the report is some 2.5 MB of small objects, and copying it to the main
// thread with every render cost tens of milliseconds on each side, though a render after one
// change changes one route's entry at most (an endpoint change, none). The builder keeps an
// unchanged route's status object from one build to the next, so the patch names the route
// entries that are not the very objects of the earlier report, by position; GatewayClasses and
// Gateways (a few) travel whole. A report whose route list changed length, or in many places,
// travels whole.
import type { GatewayStatusReport, RouteStatus } from '../routing/gateway-model.js';

export type StatusPatch =
  /** The same report. */
  | { readonly same: true }
  | {
      readonly same: false;
      readonly gatewayClasses: GatewayStatusReport['gatewayClasses'];
      readonly gateways: GatewayStatusReport['gateways'];
      /** The number of route entries, and those that changed by position. */
      readonly routeCount: number;
      readonly routes: readonly (readonly [number, RouteStatus])[];
    };

/** Over this many changed route entries (and a quarter of them), the report travels whole. */
const MAX_PATCHED_ROUTES = 256;

/** `after` as a patch of `before`, or undefined when it should travel whole. */
export function statusPatch(before: GatewayStatusReport, after: GatewayStatusReport): StatusPatch | undefined {
  if (before === after) return { same: true };
  const a = before.httpRoutes;
  const b = after.httpRoutes;
  if (a.length !== b.length) return undefined;
  const limit = Math.max(MAX_PATCHED_ROUTES, b.length / 4);
  const routes: [number, RouteStatus][] = [];
  for (let i = 0; i < b.length; i++) {
    if (a[i] === b[i]) continue;
    if (routes.length >= limit) return undefined;
    routes.push([i, b[i] as RouteStatus]);
  }
  return { same: false, gatewayClasses: after.gatewayClasses, gateways: after.gateways, routeCount: b.length, routes };
}

/** The report `patch` makes of `before`; undefined when it does not fit it (a position out of range or a count that differs). */
export function applyStatusPatch(before: GatewayStatusReport, patch: StatusPatch): GatewayStatusReport | undefined {
  if (patch.same) return before;
  if (patch.routeCount !== before.httpRoutes.length) return undefined;
  const httpRoutes = before.httpRoutes.slice();
  for (const [i, route] of patch.routes) {
    if (!Number.isInteger(i) || i < 0 || i >= httpRoutes.length) return undefined;
    httpRoutes[i] = route;
  }
  return { gatewayClasses: patch.gatewayClasses, gateways: patch.gateways, httpRoutes };
}

// The Gateway status report as a patch of an earlier one: what the worker leaves out of a result
// the main thread puts back from the output it holds.
import { describe, expect, it } from 'vitest';
import { applyStatusPatch, statusPatch } from '../../../src/worker/render/status-patch.js';
import type { GatewayStatusReport, RouteStatus } from '../../../src/worker/routing/gateway-model.js';

function route(name: string, generation: number): RouteStatus {
  return { namespace: 'a', name, generation, parents: [{ gateway: 'infra/gw', conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }] }] };
}

function report(routes: RouteStatus[]): GatewayStatusReport {
  return { gatewayClasses: [{ name: 'haptic', generation: 1, conditions: [] }], gateways: [{ namespace: 'infra', name: 'gw', generation: 1, conditions: [], listeners: [] }], httpRoutes: routes };
}

describe('the Gateway status patch', () => {
  const routes = Array.from({ length: 1000 }, (_, i) => route(`r${i}`, 1));
  const before = report(routes);

  it('says a report is the same when it is the same object, and gives the held one back', () => {
    const patch = statusPatch(before, before);
    expect(patch).toEqual({ same: true });
    expect(applyStatusPatch(before, patch as NonNullable<typeof patch>)).toBe(before);
  });

  it('names only the route entries that changed, and rebuilds the new report from the held one', () => {
    const changed = route('r500', 2);
    const after = report(routes.map((r, i) => (i === 500 ? changed : r)));
    const patch = statusPatch(before, after);
    expect(patch).toMatchObject({ same: false, routeCount: 1000, routes: [[500, changed]] });
    const rebuilt = applyStatusPatch(before, patch as NonNullable<typeof patch>);
    expect(rebuilt).toEqual(after);
    // Unchanged entries are the held objects.
    expect(rebuilt?.httpRoutes[0]).toBe(routes[0]);
  });

  it('leaves a report whose route list changed length, or changed in most places, to travel whole', () => {
    expect(statusPatch(before, report(routes.slice(1)))).toBeUndefined();
    expect(statusPatch(before, report(routes.map((r) => route(r.name, 2))))).toBeUndefined();
  });

  it('does not apply to a held report of another length', () => {
    const patch = statusPatch(before, report(routes.map((r, i) => (i === 1 ? route('r1', 3) : r))));
    expect(applyStatusPatch(report(routes.slice(2)), patch as NonNullable<typeof patch>)).toBeUndefined();
  });
});

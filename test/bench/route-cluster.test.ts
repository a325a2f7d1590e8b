// The HTTPRoute cluster the benchmarks compare with the Ingress cluster: every route attaches
// and resolves (a benchmark of refused routes would measure nothing), a change touches exactly
// one route, and the per-object targets are ratios against the Ingress row of the same size.
import { beforeAll, describe, expect, it } from 'vitest';
import { OneObjectChanger } from '../../bench/lib.js';
import { populatedRouteStores } from '../../bench/route-cluster.js';
import { routeTargets } from '../../bench/scale-targets.js';
import type { KubeObject, TemplateSetSource } from '../../src/worker/protocol.js';
import { defaultTemplateSet, renderOk } from '../helpers/cluster.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const objectsOf = (stores: ReturnType<typeof populatedRouteStores>['stores']): KubeObject[] =>
  ['gatewayclasses', 'gateways', 'httproutes', 'services', 'endpointslices'].flatMap((name) => [...stores.store(name).list()]);

describe('the benchmarks\' HTTPRoute cluster', () => {
  it('attaches and resolves every route, with no Ingress and no warning', () => {
    const { stores } = populatedRouteStores(set, 60);
    expect(stores.store('ingresses').list()).toHaveLength(0);
    const rendered = renderOk(set, objectsOf(stores));
    expect(rendered.warnings).toEqual([]);
    const routes = rendered.gatewayStatus?.httpRoutes ?? [];
    expect(routes).toHaveLength(60);
    for (const route of routes) expect(route.parents.flatMap((p) => p.conditions.map((c) => c.status))).toEqual(['True', 'True']);
    expect(rendered.gatewayStatus?.gateways[0]?.listeners[0]?.attachedRoutes).toBe(60);
  });

  it('changes exactly one route per change, its /api path moving', () => {
    const { stores, cluster } = populatedRouteStores(set, 20);
    const before = stores.version;
    new OneObjectChanger(stores, cluster, 20, 'httproute').change();
    const delta = stores.changesSince(before);
    expect(delta.kind === 'delta' ? delta.changes.map((c) => c.store) : delta.kind).toEqual(['httproutes']);
  });

  it('states each per-object target as the ratio to the Ingress cluster of the same size, with met', () => {
    const ingress = [{ ingresses: 1000, ingressChangeTotalMs: 10, sliceChangeTotalMs: 10, coldTotalMs: 100 }];
    const routes = [
      { routes: 1000, routeChangeTotalMs: 12, sliceChangeTotalMs: 20, coldTotalMs: 100 },
      { routes: 10_000, routeChangeTotalMs: 1, sliceChangeTotalMs: 1, coldTotalMs: 1 },
    ];
    const targets = routeTargets(ingress, routes);
    expect(targets.map((t) => [t.measured, t.met])).toEqual([
      [1.2, true],
      [2, false],
      [1, true],
      [null, null],
      [null, null],
      [null, null],
    ]);
  });

  it('states the inline CPU time of a route change against an Ingress change when the run measured both', () => {
    const ingress = [{ ingresses: 1000, ingressChangeTotalMs: 10, ingressChangeCpuMs: 4, sliceChangeTotalMs: 10, coldTotalMs: 100 }];
    const routes = [{ routes: 1000, routeChangeTotalMs: 10, routeChangeCpuMs: 8, sliceChangeTotalMs: 10, coldTotalMs: 100 }];
    const cpu = routeTargets(ingress, routes).find((t) => t.target.includes('CPU time'));
    expect(cpu).toMatchObject({ target: '1 HTTPRoute changed / 1 Ingress changed, CPU time (inline), N=1000', measured: 2, met: false });
  });
});

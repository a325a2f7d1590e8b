// Incremental renders of the route tables: conflicting routes, and the routes of Ingresses whose
// entries were recomputed without a route change.
import { describe, expect, it } from 'vitest';
import { RouteIndex, routeTables, type RouteCandidate } from '../../../src/worker/routing/route-index.js';
import { endpointSlice, ingress, rule, service } from '../../helpers/cluster.js';
import { harness, NS } from '../../helpers/render-harness.js';

describe('incremental render of route conflicts', () => {
  it('warns about a route claimed by two Ingresses exactly as a cold render does, and returns to identical output once it is gone', async () => {
    const h = await harness();
    const clean = h.render();
    const copy = ingress(NS, 'zz-copy', { rules: [rule('shop.example.com', { path: '/', service: 'api' })] });
    h.store('ingresses').upsert(copy);
    const conflicted = h.render();
    expect(conflicted.warnings).toContain('Ingress shop/zz-copy: route shop.example.com/ is already served by Ingress shop/front; ignored');
    expect(conflicted.auxiliaryFiles.maps['host-prefix.map']).toContain('shop.example.com/ ing_shop_front_web_80\n');

    h.store('ingresses').upsert(ingress(NS, 'zz-copy', { rules: [rule('copy.example.com', { path: '/', service: 'api' })] }));
    const resolved = h.render();
    expect(resolved.warnings.filter((w) => w.includes('already served'))).toEqual([]);
    expect(resolved.auxiliaryFiles.maps['host-prefix.map']).toContain('copy.example.com/ ing_shop_zz-copy_api_80\n');

    h.store('ingresses').delete('shop/zz-copy');
    const back = h.render();
    expect(back.haproxyConfig).toBe(clean.haproxyConfig);
    expect(back.auxiliaryFiles.maps).toEqual(clean.auxiliaryFiles.maps);
  });

  it('keeps the first claimant when the earlier Ingress takes over a key from a later one', async () => {
    const h = await harness();
    h.render();
    // `api` sorts before `front`: claiming front's key makes front the ignored one.
    h.store('ingresses').upsert(ingress(NS, 'api', { rules: [rule('shop.example.com', { path: '/', service: 'api' })] }));
    const output = h.render();
    expect(output.warnings).toContain('Ingress shop/front: route shop.example.com/ is already served by Ingress shop/api; ignored');
    expect(output.auxiliaryFiles.maps['host-prefix.map']).toContain('shop.example.com/ ing_shop_api_api_80\n');
  });

  it('leaves no contested keys in the route index once a conflicting route is removed', () => {
    const a: RouteCandidate = { host: 'h.example.com', path: '/x', exact: false, backend: 'be_a', owner: 'Ingress ns/a', namespace: 'ns', created: 0 };
    const b: RouteCandidate = { host: 'h.example.com', path: '/x', exact: false, backend: 'be_b', owner: 'Ingress ns/b', namespace: 'ns', created: 0 };
    const index = new RouteIndex();
    index.add([a]);
    const before = index.tables(undefined, () => [a], () => undefined);
    index.add([b]);
    const warnings: string[] = [];
    const contested = index.tables(before, () => [a, b], (m) => warnings.push(m));
    expect(index.contestedKeys).toBe(2);
    expect(warnings).toEqual(['Ingress ns/b: route h.example.com/x is already served by Ingress ns/a; ignored']);
    expect(contested).toEqual(routeTables([a, b], () => undefined));
    index.remove([b]);
    expect(index.contestedKeys).toBe(0);
    expect(index.tables(contested, () => [a], () => undefined)).toEqual(before);
  });
});

describe('incremental render of route tables after entries are recomputed', () => {
  // An Ingress whose entry is recomputed without a route change (its Service or EndpointSlice
  // changed) must still have its routes dropped when it is deleted or its routes change later.
  it('drops the routes of a deleted Ingress whose entry was recomputed after an EndpointSlice change', async () => {
    const h = await harness();
    h.render();
    h.store('endpointslices').upsert(endpointSlice(NS, 'api', ['10.0.1.1', '10.0.1.2']));
    h.render();
    h.store('ingresses').delete('shop/api');
    const output = h.render();
    expect(Object.values(output.auxiliaryFiles.maps).join('')).not.toContain('api.example.com');
  });

  it('moves the routes of an Ingress whose entry was recomputed after a Service change', async () => {
    const h = await harness();
    h.render();
    h.store('services').upsert(service(NS, 'api', [{ name: 'http', port: 80 }, { name: 'admin', port: 9090 }]));
    h.render();
    h.store('ingresses').upsert(ingress(NS, 'api', { rules: [rule('api2.example.com', { path: '/v2', service: 'api' })] }));
    const output = h.render();
    expect(Object.values(output.auxiliaryFiles.maps).join('')).not.toContain('api.example.com');
    expect(output.auxiliaryFiles.maps['host-exact.map']).toContain('api2.example.com/v2 ing_shop_api_api_80\n');
  });
});

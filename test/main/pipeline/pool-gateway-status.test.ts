// The Gateway status report crosses from the rendering worker as a patch of the output the main
// thread holds (status-patch.ts): after an endpoint change or one route changed, the pool still
// hands back the report the inline pipeline gives, with the unchanged route entries kept.
import { describe, expect, it } from 'vitest';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { endpointSlice, service, storeNameFor } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';
import { poolAndInline } from '../../helpers/pool-and-inline.js';

const never = new AbortController().signal;
const pipelines = poolAndInline(1);

function route(i: number, path: string): KubeObject {
  return httpRoute('apps', `r${i}`, { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [`r${i}.example.com`], rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [ref(`s${i}`)] }] });
}

describe('PoolPipeline with Gateway routes', () => {
  it('hands back the Gateway status the inline pipeline gives after endpoint and route changes, keeping unchanged route entries', async () => {
    const stores = new StoreProvider(pipelines.set.stores);
    const upsert = (object: KubeObject): void => void stores.store(storeNameFor(object, pipelines.set.stores)).upsert(object);
    upsert(gatewayClass());
    upsert(gateway('infra', 'gw', [{ name: 'http', port: 18090, allowedRoutes: { namespaces: { from: 'All' } } }]));
    for (let i = 0; i < 20; i++) {
      upsert(service('apps', `s${i}`));
      upsert(endpointSlice('apps', `s${i}`, [`10.0.0.${i + 1}`]));
      upsert(route(i, '/'));
    }
    let last = await pipelines.pool.execute(never, stores, 'reconcile');
    const changes: (() => void)[] = [
      () => upsert(endpointSlice('apps', 's3', ['10.0.1.1'])),
      () => upsert({ ...route(7, '/v2'), metadata: { ...route(7, '/v2').metadata, generation: 2 } }),
      () => upsert(endpointSlice('apps', 's7', ['10.0.1.2', '10.0.1.3'])),
      () => stores.store('httproutes').delete('apps/r11'),
    ];
    for (const change of changes) {
      change();
      const baseline = { haproxyConfig: last.haproxyConfig, auxiliaryFiles: last.auxiliaryFiles };
      const [fromPool, fromInline] = await Promise.all([pipelines.pool.execute(never, stores, 'reconcile', { baseline }), pipelines.inline.execute(never, stores, 'reconcile', { baseline })]);
      expect(fromPool.gatewayStatus).toEqual(fromInline.gatewayStatus);
      expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
      const before = last.gatewayStatus?.httpRoutes ?? [];
      const after = fromPool.gatewayStatus?.httpRoutes ?? [];
      // A report of the same length is patched: entries are the objects held before, but for the
      // changed route's and one whose backends the render after an endpoint change built again.
      if (before.length === after.length) expect(after.filter((entry, i) => entry === before[i]).length).toBeGreaterThanOrEqual(after.length - 2);
      last = fromPool;
    }
    expect(last.gatewayStatus?.httpRoutes.map((r) => r.name)).not.toContain('r11');
  });
});

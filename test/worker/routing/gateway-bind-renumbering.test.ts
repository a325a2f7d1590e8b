// Binds are numbered in port order, and each bind's map files carry its number. A neighbour's
// Gateway that gains a listener on a lower port renumbers the other binds: a long-lived engine
// must rename their map files as a fresh engine does, even when their routes did not change.
import { describe, expect, it } from 'vitest';
import type { KubeObject, RenderOutcome } from '../../../src/worker/protocol.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, endpointSlice, indexedStores, service } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute } from '../../helpers/gateway-objects.js';

const GOOD: KubeObject[] = [
  gatewayClass(),
  gateway('shop', 'shop-gw', [{ name: 'http', port: 18090 }]),
  httpRoute('shop', 'good', { parentRefs: [{ name: 'shop-gw' }], hostnames: ['good.example.com'], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/app' } }], backendRefs: [{ name: 'web', port: 80 }] }] }),
  service('shop', 'web'),
  endpointSlice('shop', 'web', ['10.0.0.1']),
  gateway('other', 'other-gw', [{ name: 'http', port: 18091 }]),
];
const neighbour = (listeners: { name: string; port: number }[]): KubeObject => gateway('evil', 'random-gw', listeners);

function hostMaps(outcome: RenderOutcome): Record<string, string> {
  if (!outcome.ok) throw new Error(`the ${outcome.phase} phase failed: ${outcome.message}`);
  return Object.fromEntries(Object.entries(outcome.auxiliaryFiles.maps).filter(([name]) => name.startsWith('gateway-') && name.endsWith('host-exact.map')));
}

describe('Gateway binds renumbered by a neighbour', () => {
  it('move their map entries to the renumbered map files, as a fresh engine names them', async () => {
    const set = await defaultTemplateSet();
    const engine = new TemplateEngine();
    const steps = [[], [neighbour([])], [neighbour([{ name: 'http', port: 10000 }])], [neighbour([])]];
    const seen: Record<string, string>[] = [];
    for (const extra of steps) {
      const stores = indexedStores(set, [...GOOD, ...extra]);
      const request = { set, lookup: (name: string) => stores.get(name), storeVersion: 1 };
      const kept = hostMaps(renderAndValidate(engine, request));
      expect(kept).toEqual(hostMaps(renderAndValidate(new TemplateEngine(), request)));
      seen.push(kept);
    }
    // The neighbour's listener on port 10000 made the good route's bind the second one.
    expect(seen[2]).toEqual({ 'gateway-0-host-exact.map': '', 'gateway-1-host-exact.map': 'good.example.com/app gw_shop_good_0_0\n', 'gateway-2-host-exact.map': '' });
    expect(seen[3]).toEqual({ 'gateway-0-host-exact.map': 'good.example.com/app gw_shop_good_0_0\n', 'gateway-1-host-exact.map': '' });
  });
});

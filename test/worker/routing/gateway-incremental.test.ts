// The Gateway part of the model across renders: after an EndpointSlice, Service or
// ReferenceGrant change, a render that reuses the previous one (its caches, its baseline) gives
// exactly what a cold render of the same stores and baseline gives, and route backends nothing
// touched keep their server slots.
import { describe, expect, it } from 'vitest';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import type { KubeObject, RenderBaseline, RenderOutcome, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, indexedStores, service } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref, referenceGrant } from '../../helpers/gateway-objects.js';

function ok(outcome: RenderOutcome): Extract<RenderOutcome, { ok: true }> {
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome;
}

const baselineOf = (out: Extract<RenderOutcome, { ok: true }>): RenderBaseline => ({ haproxyConfig: out.haproxyConfig, auxiliaryFiles: out.auxiliaryFiles }) as RenderBaseline;

describe('Gateway model across renders', () => {
  it('renders after each change exactly as a cold render of the same stores and baseline', async () => {
    const set: TemplateSetSource = await defaultTemplateSet();
    const objects: KubeObject[] = [gatewayClass(), gateway('infra', 'gw', [{ name: 'http', port: 18087, allowedRoutes: { namespaces: { from: 'All' } } }])];
    for (let i = 0; i < 20; i++) {
      objects.push(service('apps', `s${i}`), endpointSlice('apps', `s${i}`, [`10.0.0.${i + 1}`]));
      objects.push(httpRoute('apps', `r${i}`, { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [`h${i}.example.com`], rules: [{ backendRefs: [ref(`s${i}`), ref('shared', { namespace: 'common' })] }] }));
    }
    objects.push(service('common', 'shared'), endpointSlice('common', 'shared', ['10.1.0.1']), referenceGrant('common', 'apps', 'apps'));
    const stores = indexedStores(set, objects);
    const engine = new TemplateEngine();
    const render = (e: TemplateEngine, baseline?: RenderBaseline) => ok(renderAndValidate(e, { set, lookup: (name) => stores.get(name), storeVersion: 1, ...(baseline === undefined ? {} : { baseline }) }));
    let last = render(engine);
    const changes: (() => void)[] = [
      () => stores.get('endpointslices')?.upsert(endpointSlice('apps', 's3', ['10.0.9.1', '10.0.9.2'])),
      () => stores.get('services')?.delete('apps/s4'),
      () => stores.get('referencegrants')?.delete('common/apps'),
      () => stores.get('referencegrants')?.upsert(referenceGrant('common', 'apps', 'apps', 'shared')),
    ];
    for (const change of changes) {
      const baseline = baselineOf(last);
      change();
      const warm = render(engine, baseline);
      const cold = render(new TemplateEngine(), baseline);
      expect(warm.haproxyConfig).toBe(cold.haproxyConfig);
      expect(warm.auxiliaryFiles).toEqual(cold.auxiliaryFiles);
      last = warm;
    }
    const slots = last.auxiliaryFiles.files['server-slots.txt'] ?? '';
    expect(slots).toContain('gw_apps_r3_0_0 10.0.9.1:8080 10.0.9.2:8080');
    expect(slots).toContain('gw_apps_r5_0_0 10.0.0.6:8080');
    expect(slots).toContain('gw_apps_r5_0_1 10.1.0.1:8080');
    expect(last.haproxyConfig).not.toContain('backend gw_apps_r4_0_0');
  });
});

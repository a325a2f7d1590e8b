// The routing model splits the baseline's slot file into the Ingress backends' lines and the
// route backends' (`gw_…`) ones, and remembers where for the text it last split: a baseline
// whose slot text changes (none, then one holding route backends, then another) is split anew,
// so the route backends keep the slots the baseline gives them, as a fresh builder decides.
import { describe, expect, it } from 'vitest';
import type { KubeObject, RenderBaseline, TemplateSetSource } from '../../../src/worker/protocol.js';
import { modelOptions } from '../../../src/worker/routing/ingress-model.js';
import { RoutingBuilder } from '../../../src/worker/routing/routing-builder.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { defaultTemplateSet, endpointSlice, indexedStores, ingress, rule, service } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';

describe('the slot file of the baseline, split between Ingress and route backends', () => {
  it('is split again for a new slot text, so route backends keep their baseline slots as in a fresh build', async () => {
    const set: TemplateSetSource = await defaultTemplateSet();
    const route = httpRoute('apps', 'r', { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['r.example.com'], rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [ref('s')] }] });
    const objects: KubeObject[] = [
      gatewayClass(),
      gateway('infra', 'gw', [{ name: 'http', port: 18087, allowedRoutes: { namespaces: { from: 'All' } } }]),
      service('apps', 's'),
      endpointSlice('apps', 's', ['10.0.0.1', '10.0.0.2']),
      route,
      service('apps', 'web'),
      endpointSlice('apps', 'web', ['10.0.1.1', '10.0.1.2']),
      ingress('apps', 'web', { rules: [rule('web.example.com', { path: '/', service: 'web' })] }),
    ];
    const stores = indexedStores(set, objects);
    const builder = new RoutingBuilder(modelOptions(set.values), set.values);
    const build = (on: RoutingBuilder, baseline?: RenderBaseline) => on.build(new GuardedReader((name) => stores.get(name), () => undefined), baseline, () => undefined);
    const slotsOf = (serverSlotsFile: string) => ({ haproxyConfig: '', auxiliaryFiles: { maps: {}, files: { 'server-slots.txt': serverSlotsFile }, certificates: {} } }) as unknown as RenderBaseline;
    const first = build(builder);
    expect(first.serverSlotsFile).toContain('gw_apps_r_0_0');
    // The first endpoint of each goes: with the baseline, the second keeps its slot.
    stores.get('endpointslices')?.upsert(endpointSlice('apps', 's', ['10.0.0.2', '10.0.0.3']));
    stores.get('endpointslices')?.upsert(endpointSlice('apps', 'web', ['10.0.1.2', '10.0.1.3']));
    const second = build(builder, slotsOf(first.serverSlotsFile));
    expect(second).toEqual(build(new RoutingBuilder(modelOptions(set.values), set.values), slotsOf(first.serverSlotsFile)));
    expect(second.serverSlotsFile).not.toBe(build(new RoutingBuilder(modelOptions(set.values), set.values)).serverSlotsFile);
    stores.get('endpointslices')?.upsert(endpointSlice('apps', 's', ['10.0.0.3', '10.0.0.4']));
    const third = build(builder, slotsOf(second.serverSlotsFile));
    expect(third).toEqual(build(new RoutingBuilder(modelOptions(set.values), set.values), slotsOf(second.serverSlotsFile)));
  });
});

// Incremental renders after an EndpointSlice change: only the changed backend is rendered again,
// and the rest of the routing model keeps its identity.
import { describe, expect, it } from 'vitest';
import { modelOptions, RoutingModelBuilder, SERVER_SLOTS_FILE, type RoutingModel } from '../../../src/worker/routing/ingress-model.js';
import { defaultTemplateSet, endpointSlice, indexedStores } from '../../helpers/cluster.js';
import { backendSection, changedLines, harness, modelSource, NS, smallCluster } from '../../helpers/render-harness.js';

describe('incremental render after one EndpointSlice change', () => {
  it('re-renders only the backend of the changed EndpointSlice and matches a cold render', async () => {
    const h = await harness();
    const first = h.render();
    h.store('endpointslices').upsert(endpointSlice(NS, 'api', ['10.0.1.1', '10.0.1.2']));
    const second = h.render();

    const diff = changedLines(first.haproxyConfig, second.haproxyConfig);
    expect(diff).toEqual(['-   server srv2 127.0.0.1:1 disabled', '+   server srv2 10.0.1.2:8080']);
    expect(backendSection(second.haproxyConfig, 'ing_shop_api_api_80')).toContain('  server srv2 10.0.1.2:8080\n');
    expect(changedLines(first.auxiliaryFiles.files[SERVER_SLOTS_FILE] as string, second.auxiliaryFiles.files[SERVER_SLOTS_FILE] as string)).toEqual([
      '- ing_shop_api_api_80 10.0.1.1:8080 - - - - - - - - -',
      '+ ing_shop_api_api_80 10.0.1.1:8080 10.0.1.2:8080 - - - - - - - -',
    ]);
    expect(second.auxiliaryFiles.maps).toEqual(first.auxiliaryFiles.maps);
    expect(h.cachedIngresses).toBe(3);
  });

  it('keeps the identity of every other backend, route table and certificate list, so memo blocks reuse their text', async () => {
    const stores = indexedStores(await defaultTemplateSet(), smallCluster());
    const builder = new RoutingModelBuilder(modelOptions({}));
    const first = builder.build(modelSource(stores), undefined, () => undefined);
    stores.get('endpointslices')?.upsert(endpointSlice(NS, 'api', ['10.0.1.1', '10.0.1.2']));
    const second = builder.build(modelSource(stores), { auxiliaryFiles: { maps: {}, files: { [SERVER_SLOTS_FILE]: first.serverSlotsFile }, certificates: {} } }, () => undefined);

    const byName = (model: RoutingModel, name: string): unknown => model.backends.find((b) => b.name === name);
    expect(byName(second, 'ing_shop_api_api_80')).not.toBe(byName(first, 'ing_shop_api_api_80'));
    expect(byName(second, 'ing_shop_front_web_80')).toBe(byName(first, 'ing_shop_front_web_80'));
    expect(byName(second, 'ing_shop_admin_admin_http')).toBe(byName(first, 'ing_shop_admin_admin_http'));
    for (const table of ['hostExact', 'hostPrefix', 'hostRegex', 'pathExact', 'pathPrefix', 'certificates'] as const) {
      expect(second[table], table).toBe(first[table]);
    }
    expect(builder.cachedIngresses).toBe(3);
  });

  it('re-renders the backend of a Service whose EndpointSlice moves to another Service', async () => {
    const h = await harness();
    h.render();
    h.store('endpointslices').upsert(endpointSlice(NS, 'web', ['10.0.9.1'], { name: 'http', port: 8080 }, 'api-slice'));
    const output = h.render();
    expect(backendSection(output.haproxyConfig, 'ing_shop_api_api_80')).not.toContain('10.0.1.1');
    expect(backendSection(output.haproxyConfig, 'ing_shop_front_web_80')).toContain('10.0.9.1:8080');
  });
});

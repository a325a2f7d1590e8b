// Incremental renders after a store instance is replaced, or its bounded journal no longer holds
// every change since the last render.
import { describe, expect, it } from 'vitest';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { endpointSlice, indexedStores } from '../../helpers/cluster.js';
import { backendSection, harness, NS, smallCluster } from '../../helpers/render-harness.js';

describe('incremental render after a store is replaced', () => {
  it('matches a cold render when one store is swapped for a new instance with other content', async () => {
    const h = await harness();
    h.render();
    const slices = new IndexedStore('endpointslices', ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name']);
    slices.upsert(endpointSlice(NS, 'web', ['10.0.0.7']));
    slices.upsert(endpointSlice(NS, 'api', ['10.0.1.1']));
    h.stores = new Map(h.stores).set('endpointslices', slices);
    const output = h.render();
    expect(backendSection(output.haproxyConfig, 'ing_shop_front_web_80')).toContain('server srv1 10.0.0.7:8080\n');
    expect(backendSection(output.haproxyConfig, 'ing_shop_admin_admin_http')).not.toContain('10.0.2.1');
  });

  it('matches a cold render when the new store instance has already counted past the old one', async () => {
    const h = await harness();
    h.render();
    // The old store is at generation 3; the new one reaches 11 with the changed web slice among
    // its first changes, so only a builder that notices the new instance sees the change.
    const slices = new IndexedStore('endpointslices', ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name']);
    slices.upsert(endpointSlice(NS, 'web', ['10.0.0.9']));
    const old = h.store('endpointslices');
    for (let i = 0; i < 5; i++) {
      slices.upsert(old.get('shop/api-slice') as KubeObject);
      slices.upsert(old.get('shop/admin-slice') as KubeObject);
    }
    expect(slices.generation).toBeGreaterThan(old.generation);
    h.stores = new Map(h.stores).set('endpointslices', slices);
    const output = h.render();
    expect(backendSection(output.haproxyConfig, 'ing_shop_front_web_80')).toContain('server srv1 10.0.0.9:8080\n');
  });

  it('matches a cold render after more changes than a store journal keeps', async () => {
    const h = await harness();
    h.render();
    const slices = h.store('endpointslices');
    slices.upsert(endpointSlice(NS, 'web', ['10.0.0.9']));
    // Enough churn on another key to push the web slice's change out of the bounded journal.
    const api = slices.get('shop/api-slice') as KubeObject;
    for (let i = 0; i < 10_000; i++) slices.upsert(api);
    expect(slices.changedSince(3)).toBeUndefined();
    const output = h.render();
    expect(backendSection(output.haproxyConfig, 'ing_shop_front_web_80')).toContain('server srv1 10.0.0.9:8080\n');
  });

  it('renders the same output when every store is replaced by new instances holding clones', async () => {
    const h = await harness();
    const first = h.render();
    h.stores = indexedStores(h.set, structuredClone(smallCluster()));
    const second = h.render();
    expect(second.haproxyConfig).toBe(first.haproxyConfig);
    expect(second.auxiliaryFiles).toEqual(first.auxiliaryFiles);
    expect(h.cachedIngresses).toBe(3);
  });
});

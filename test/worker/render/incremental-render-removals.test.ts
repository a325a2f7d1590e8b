// Incremental renders of objects that leave and come back: an Ingress switched to another class
// and back, and objects deleted and added again.
import { describe, expect, it } from 'vitest';
import { SERVER_SLOTS_FILE } from '../../../src/worker/routing/ingress-model.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { harness } from '../../helpers/render-harness.js';

describe('incremental render of Ingress class changes', () => {
  it('removes the backends and routes of an Ingress switched to another class, and brings them back when switched back', async () => {
    const h = await harness();
    const first = h.render();
    const api = h.store('ingresses').get('shop/api') as KubeObject;
    h.store('ingresses').upsert({ ...api, spec: { ...(api.spec as object), ingressClassName: 'other' } });
    const other = h.render();
    expect(other.haproxyConfig).not.toContain('backend ing_shop_api_api_80');
    expect(other.auxiliaryFiles.files[SERVER_SLOTS_FILE]).not.toContain('ing_shop_api_api_80');
    expect(Object.values(other.auxiliaryFiles.maps).join('')).not.toContain('api.example.com');
    expect(h.cachedIngresses).toBe(2);

    h.store('ingresses').upsert({ ...api, spec: { ...(api.spec as object), ingressClassName: 'haproxy' } });
    const back = h.render();
    expect(back.haproxyConfig).toBe(first.haproxyConfig);
    expect(h.cachedIngresses).toBe(3);
  });
});

describe('incremental render of deleted and re-added objects', () => {
  it('renders the same output after an Ingress is deleted and the same object is added back', async () => {
    const h = await harness();
    const first = h.render();
    const api = h.store('ingresses').get('shop/api') as KubeObject;
    h.store('ingresses').delete('shop/api');
    const without = h.render();
    expect(without.haproxyConfig).not.toContain('backend ing_shop_api_api_80');
    expect(h.cachedIngresses).toBe(2);
    h.store('ingresses').upsert(api);
    const again = h.render();
    expect(again.haproxyConfig).toBe(first.haproxyConfig);
    expect(again.auxiliaryFiles).toEqual(first.auxiliaryFiles);
    expect(h.cachedIngresses).toBe(3);
  });

  it('renders the same output when objects are deleted and added back between two renders', async () => {
    const h = await harness();
    const first = h.render();
    for (const [store, key] of [
      ['ingresses', 'shop/admin'],
      ['services', 'shop/web'],
      ['endpointslices', 'shop/api-slice'],
      ['secrets', 'shop/admin-tls'],
    ] as const) {
      const object = h.store(store).get(key) as KubeObject;
      h.store(store).delete(key);
      h.store(store).upsert(object);
    }
    const second = h.render();
    expect(second.haproxyConfig).toBe(first.haproxyConfig);
    expect(second.auxiliaryFiles).toEqual(first.auxiliaryFiles);
  });

  it('warns about a deleted Service and its TLS Secret, and stops warning once they are back', async () => {
    const h = await harness();
    h.render();
    const web = h.store('services').get('shop/web') as KubeObject;
    const secret = h.store('secrets').get('shop/admin-tls') as KubeObject;
    h.store('services').delete('shop/web');
    h.store('secrets').delete('shop/admin-tls');
    const missing = h.render();
    expect(missing.warnings).toEqual([
      'Ingress shop/admin: TLS secret shop/admin-tls is missing or has no tls.crt/tls.key; its hosts are served without it',
      'Ingress shop/front: service shop/web not found; its backend has no servers',
    ]);
    h.store('services').upsert(web);
    h.store('secrets').upsert(secret);
    expect(h.render().warnings).toEqual([]);
  });
});

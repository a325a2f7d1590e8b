// The routing model builder's cache holds one entry per accepted Ingress, however many come and go.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import type { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import { defaultTemplateSet, indexedStores, ingress, rule } from '../../helpers/cluster.js';
import { between, chance, pick } from '../../helpers/random.js';
import { APPS, NAMESPACES } from '../../helpers/random-cluster.js';
import { acceptedIngresses } from '../../helpers/render-outcomes.js';

describe('routing model builder cache bounds', () => {
  it('caches one entry per accepted Ingress after many Ingresses are created and deleted', async () => {
    const set = await defaultTemplateSet();
    const random = seededRandom(99);
    const stores = indexedStores(set, []);
    const engine = new TemplateEngine();
    const ingresses = stores.get('ingresses') as IndexedStore;
    const names = Array.from({ length: 40 }, (_, i) => `ing-${i}`);
    const render = (version: number): void => {
      renderAndValidate(engine, { set, lookup: (name) => stores.get(name), storeVersion: version, baseline: undefined });
    };
    for (let step = 1; step <= 150; step++) {
      for (let n = between(random, 1, 5); n > 0; n--) {
        const ns = pick(random, NAMESPACES);
        const name = pick(random, names);
        if (chance(random, 0.45)) {
          ingresses.delete(`${ns}/${name}`);
          continue;
        }
        const roll = random();
        const spec: Record<string, unknown> = { rules: [rule(`${name}.example.com`, { path: '/', service: pick(random, APPS[ns] as readonly string[]) })] };
        if (roll < 0.15) spec.ingressClassName = 'other';
        else if (roll < 0.2) spec.rules = [rule('Not Valid', { path: '/', service: 'x' })];
        ingresses.upsert(ingress(ns, name, spec));
      }
      render(step);
      expect(engine.compile(set).builder.cachedIngresses, `step ${step}`).toBe(acceptedIngresses(stores, set));
    }
    for (const object of [...ingresses.list()]) ingresses.delete(`${object.metadata.namespace}/${object.metadata.name}`);
    render(151);
    expect(engine.compile(set).builder.cachedIngresses).toBe(0);
  });
});

// The model builder's quick walk (one Ingress replaced by one of the same key) hands the budgets
// the entries it replaced (list-replacements.ts), and their running sums follow: an Ingress that
// grows build after build, one at a time, is left out for the output budget exactly when a cold
// build leaves it out.
import { describe, expect, it } from 'vitest';
import type { KubeObject, RenderBaseline } from '../../../src/worker/protocol.js';
import { buildRoutingModel, modelOptions, RoutingModelBuilder, SERVER_SLOTS_FILE } from '../../../src/worker/routing/ingress-model.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { endpointSlice, ingress, ROUTING_STORES, rule, service, storeNameFor } from '../../helpers/cluster.js';

const MAX = 100_000;
const at = (i: number): Partial<KubeObject['metadata']> => ({ creationTimestamp: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString() });

/** Ingress `i` of namespace `ns` with `paths` paths on its own host. */
const app = (ns: string, i: number, paths: number): KubeObject =>
  ingress(ns, `i${String(i).padStart(3, '0')}`, { rules: [rule(`h${i}.${ns}.example.com`, ...Array.from({ length: paths }, (_, p) => ({ path: `/path-number-${p}`, service: 'web' })))] }, at(i));

describe('the budgets after quick walks', () => {
  it('leave out an Ingress that grew one build at a time exactly when a cold build does', () => {
    const stores = new Map(ROUTING_STORES.map((def) => [def.name, new IndexedStore(def.name, def.indexBy)]));
    const upsert = (object: KubeObject): void => {
      stores.get(storeNameFor(object, ROUTING_STORES))?.upsert(object);
    };
    for (const ns of ['greedy', 'other']) {
      upsert(service(ns, 'web'));
      upsert(endpointSlice(ns, 'web', ['10.0.1.1']));
      for (let i = 0; i < 20; i++) upsert(app(ns, i, 1));
    }
    const options = modelOptions({ maxOutputBytes: MAX });
    const builder = new RoutingModelBuilder(options);
    const shedWarnings: number[] = [];
    // The previous model's slots, as the product's baseline gives them: the builder then reuses its entries.
    let baseline: RenderBaseline | undefined;
    for (let i = 0; i < 20; i++) {
      if (i > 0) upsert(app('greedy', i, 12));
      const warm: string[] = [];
      const cold: string[] = [];
      const model = builder.build(new GuardedReader((name) => stores.get(name), (m) => warm.push(m)), baseline, (m) => warm.push(m));
      expect(model, `build ${i}`).toEqual(buildRoutingModel(new GuardedReader((name) => stores.get(name), (m) => cold.push(m)), options, baseline, (m) => cold.push(m)));
      baseline = { auxiliaryFiles: { maps: {}, files: { [SERVER_SLOTS_FILE]: model.serverSlotsFile }, certificates: {} } };
      expect(warm, `build ${i}`).toEqual(cold);
      shedWarnings.push(warm.filter((w) => w.includes('it is not served')).length);
    }
    // The growth crosses the budget: some builds leave Ingresses out, the first ones did not.
    expect(shedWarnings[0]).toBe(0);
    expect(shedWarnings.at(-1)).toBeGreaterThan(0);
  });
});

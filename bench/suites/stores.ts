// stores: the indexed stores at N apps (3N objects). Per N: upsert (replacing an existing
// EndpointSlice, index maintenance and change log included), loading all 3N objects into a fresh
// StoreProvider, exact fetch on both index fields, prefix fetch on the namespace (50 Ingresses),
// getSingle, and list() right after a change (the sorted view is rebuilt). Lookups use the
// default template set's indexes; keys are drawn from a seeded random sequence.
import { Bench } from 'tinybench';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { seededRandom } from '../../src/main/sources/synthetic/synthetic-cluster.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { latencyOf, populatedStores, ratio, syntheticObjects, timeBudget, type Row, type Suite, type SuiteContext, type SuiteReport } from '../lib.js';

/** Operations per sample for the fast tasks (figures are per operation). */
const OPS = 1_000;

const TASKS = [
  'upsert (replace EndpointSlice)',
  'fetch exact (ingresses [ns, name])',
  'fetch exact (endpointslices [ns, service-name])',
  'fetch prefix (ingresses [ns], 50 hits)',
  'getSingle (endpointslices [ns, service-name])',
  'list() after 1 change (sorted view rebuilt)',
  'load 3N objects into a fresh provider',
] as const;

/** Operations one sample of each task performs. */
function opsPerSample(task: string, n: number): number {
  if (task.startsWith('list()')) return 1;
  if (task.startsWith('load')) return 3 * n;
  return OPS;
}

export const storesSuite: Suite = {
  name: 'stores',
  description: 'IndexedStore/StoreProvider upsert and indexed lookups (exact, prefix, getSingle) per N',
  async run(context: SuiteContext): Promise<SuiteReport> {
    const set = context.templateSet;
    const results: Row[] = [];
    const perOpNs = new Map<string, Map<number, number>>();

    for (const n of context.sizes) {
      const { stores, cluster } = populatedStores(set, n);
      const ingresses = stores.store('ingresses');
      const slices = stores.store('endpointslices');
      const random = seededRandom(n);
      const apps = Array.from({ length: OPS }, () => Math.floor(random() * n));
      const exactKeys = apps.map((i) => [cluster.namespace(i), `app-${i}`]);
      const prefixKeys = apps.map((i) => [cluster.namespace(i)]);
      const replacements: KubeObject[] = apps.map((i, g) => cluster.endpointSlice(i, g + 1));
      const everything = syntheticObjects(n);
      let sink = 0;

      const bench = new Bench(timeBudget(`stores N=${n}`, 250));
      bench
        .add(TASKS[0], () => {
          for (const object of replacements) slices.upsert(object);
        }, { async: false })
        .add(TASKS[1], () => {
          for (const keys of exactKeys) sink += ingresses.fetch(keys).length;
        }, { async: false })
        .add(TASKS[2], () => {
          for (const keys of exactKeys) sink += slices.fetch(keys).length;
        }, { async: false })
        .add(TASKS[3], () => {
          for (const keys of prefixKeys) sink += ingresses.fetch(keys).length;
        }, { async: false })
        .add(TASKS[4], () => {
          for (const keys of exactKeys) if (slices.getSingle(keys) !== undefined) sink++;
        }, { async: false })
        .add(TASKS[5], () => {
          sink += slices.list().length;
        }, {
          async: false,
          // Invalidate the sorted view, untimed.
          beforeEach: () => {
            slices.upsert(replacements[sink % OPS] as KubeObject);
          },
        })
        .add(TASKS[6], () => {
          const fresh = new StoreProvider(set.stores);
          for (const { store, object } of everything) fresh.store(store).upsert(object);
          sink += fresh.version;
        }, { async: false });
      await bench.run();
      if (sink === 0) throw new Error('stores suite: lookups found nothing');

      for (const task of bench.tasks) {
        const ops = opsPerSample(task.name, n);
        const s = latencyOf(task);
        const ns = (s.meanMs * 1e6) / ops;
        let byN = perOpNs.get(task.name);
        if (byN === undefined) perOpNs.set(task.name, (byN = new Map()));
        byN.set(n, ns);
        results.push({
          task: task.name,
          n,
          objects: 3 * n,
          nsPerOp: ns,
          p50NsPerOp: (s.p50Ms * 1e6) / ops,
          p99NsPerOp: (s.p99Ms * 1e6) / ops,
          opsPerSec: (1000 * ops) / s.meanMs,
          sampleMs: s.meanMs,
          opsPerSample: ops,
          rmePct: s.rmePct,
          samples: s.samples,
        });
      }
    }

    // Per operation, ns/op at each N side by side, and how it scales against the smallest N.
    const smallest = context.sizes[0] as number;
    const largest = context.sizes[context.sizes.length - 1] as number;
    const comparisons: Row[] = [...perOpNs].map(([task, byN]) => {
      const row: Row = { task };
      for (const n of context.sizes) row[`N=${n} ns/op`] = byN.get(n) ?? null;
      row[`N=${largest} / N=${smallest}`] = ratio(byN.get(largest) ?? Number.NaN, byN.get(smallest) ?? Number.NaN);
      return row;
    });

    return {
      suite: 'stores',
      description: this.description,
      timing: `tinybench; one sample = ${OPS} operations (load: all 3N objects; list: one call), figures per operation`,
      parameters: { sizes: context.sizes, opsPerSample: OPS, indexes: set.stores.map((d) => `${d.name}: [${d.indexBy.join(', ')}]`) },
      results,
      comparisons,
      notes: [
        'upsert replaces existing EndpointSlices: unindex, index, change-log append and version bump',
        'list() after a change rebuilds the sorted view of N EndpointSlices; unchanged, it returns the cached array',
        'load = new StoreProvider plus 3N upserts (objects built beforehand)',
      ],
    };
  },
};

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InlinePipeline } from '../../../src/main/pipeline/inline-pipeline.js';
import { parseSlotFile } from '../../../src/worker/routing/ingress-model.js';
import { loadManifests } from '../../../src/main/sources/manifest/manifest-loader.js';
import { EXAMPLES_DIR } from '../../../src/main/core/paths.js';
import { PipelineError } from '../../../src/main/pipeline/pipeline.js';
import { PoolPipeline } from '../../../src/main/pipeline/pool/pool-pipeline.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { seededRandom, SyntheticCluster } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { TemplateSetRejected } from '../../../src/main/template-set/template-check.js';
import { loadTemplateSet, parseTemplateSet } from '../../../src/main/template-set/template-set.js';
import { silentLogger } from '../../../src/main/core/logger.js';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';

const never = new AbortController().signal;
let set: TemplateSetSource;
let pool: PoolPipeline;
let inline: InlinePipeline;

beforeAll(async () => {
  set = await loadTemplateSet();
  pool = await PoolPipeline.create({ templateSet: set, threads: 2, logger: silentLogger() });
  inline = new InlinePipeline({ templateSet: set });
});

afterAll(async () => {
  await pool?.destroy();
});

async function exampleStores(): Promise<StoreProvider> {
  const stores = new StoreProvider(set.stores);
  const loaded = await loadManifests(EXAMPLES_DIR, set.stores);
  for (const { store, object } of loaded.objects) stores.store(store).upsert(object);
  return stores;
}

describe('PoolPipeline', () => {
  it('renders the example cluster in a worker exactly as the inline pipeline does on the main thread', async () => {
    const stores = await exampleStores();
    const [fromPool, fromInline] = await Promise.all([
      pool.execute(never, stores, 'reconcile'),
      inline.execute(never, stores, 'reconcile'),
    ]);
    expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
    expect(fromPool.auxiliaryFiles).toEqual(fromInline.auxiliaryFiles);
    expect(fromPool.checksum).toBe(fromInline.checksum);
    expect(fromPool.storeVersion).toBe(stores.version);
    expect(fromPool.haproxyConfig).toContain('backend ing_shop_shop_web_80');
  });

  it('keeps worker replicas equal to the main stores through random upserts and deletes, shipping only deltas', async () => {
    const stores = new StoreProvider(set.stores);
    const cluster = new SyntheticCluster({ ingresses: 60, seed: 7 });
    cluster.populate(stores);
    await pool.execute(never, stores, 'reconcile');
    const before = pool.stats;
    const random = seededRandom(99);
    let changes = 0;
    for (let round = 0; round < 12; round++) {
      const burst = 1 + Math.floor(random() * 20);
      for (let i = 0; i < burst; i++) cluster.change(stores);
      changes += burst;
      const [fromPool, fromInline] = await Promise.all([
        pool.execute(never, stores, 'reconcile'),
        inline.execute(never, stores, 'reconcile'),
      ]);
      expect(fromPool.storeVersion).toBe(stores.version);
      expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
      expect(fromPool.auxiliaryFiles).toEqual(fromInline.auxiliaryFiles);
    }
    const after = pool.stats;
    expect(after.fullSyncs).toBe(before.fullSyncs);
    expect(after.deltaSyncs).toBeGreaterThanOrEqual(before.deltaSyncs + 12);
    // Each worker receives at most every change once (collapsed per object), never the stores.
    expect(after.changesShipped - before.changesShipped).toBeLessThanOrEqual(changes * pool.threads * 3);
  });

  it('gives a worker that fell behind the change log a full sync, and still renders the latest stores', async () => {
    const stores = new StoreProvider(set.stores, { changeLogCapacity: 8 });
    const cluster = new SyntheticCluster({ ingresses: 20, seed: 3 });
    cluster.populate(stores);
    await pool.execute(never, stores, 'reconcile');
    const fullBefore = pool.stats.fullSyncs;
    for (let i = 0; i < 50; i++) cluster.change(stores);
    const [fromPool, fromInline] = await Promise.all([
      pool.execute(never, stores, 'reconcile'),
      inline.execute(never, stores, 'reconcile'),
    ]);
    expect(pool.stats.fullSyncs).toBeGreaterThan(fullBefore);
    expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
  });

  it('passes the baseline by reference so server slots stay stable across renders', async () => {
    const stores = new StoreProvider(set.stores);
    const cluster = new SyntheticCluster({ ingresses: 5, seed: 11 });
    cluster.populate(stores);
    const first = await pool.execute(never, stores, 'reconcile');
    const retriesBefore = pool.stats.staleRetries;
    stores.store('endpointslices').upsert(cluster.endpointSlice(0, 4));
    const second = await pool.execute(never, stores, 'reconcile', {
      baseline: { haproxyConfig: first.haproxyConfig, auxiliaryFiles: first.auxiliaryFiles },
    });
    expect(second.haproxyConfig).not.toBe(first.haproxyConfig);
    const slotsOf = (text: string | undefined): string[] => [...(parseSlotFile(text).get('ing_team-0_app-0_app-0_80') ?? [])];
    const firstSlots = slotsOf(first.auxiliaryFiles.files['server-slots.txt']);
    const secondSlots = slotsOf(second.auxiliaryFiles.files['server-slots.txt']);
    expect(secondSlots).toHaveLength(firstSlots.length);
    // Exactly one endpoint moved: every other slot keeps its address.
    const changed = firstSlots.filter((address, i) => address !== secondSlots[i]);
    expect(changed).toHaveLength(1);
    expect(pool.stats.staleRetries).toBe(retriesBefore);
  });

  it('receives only the files that changed since the worker\'s previous result, and hands back complete outputs', async () => {
    const stores = new StoreProvider(set.stores);
    const cluster = new SyntheticCluster({ ingresses: 30, seed: 5 });
    cluster.populate(stores);
    let last = await pool.execute(never, stores, 'reconcile');
    const reusedBefore = pool.stats.filesReused;
    for (let i = 0; i < 12; i++) {
      // Endpoint moves change the config and the slot file but no map; Ingress edits change maps.
      if (i % 3 === 2) stores.store('ingresses').upsert(cluster.ingress(i, i + 1));
      else stores.store('endpointslices').upsert(cluster.endpointSlice(i, i + 1));
      const baseline = { haproxyConfig: last.haproxyConfig, auxiliaryFiles: last.auxiliaryFiles };
      const [fromPool, fromInline] = await Promise.all([
        pool.execute(never, stores, 'reconcile', { baseline }),
        inline.execute(never, stores, 'reconcile', { baseline }),
      ]);
      expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
      expect(fromPool.auxiliaryFiles).toEqual(fromInline.auxiliaryFiles);
      expect(fromPool.checksum).toBe(fromInline.checksum);
      last = fromPool;
    }
    expect(pool.stats.filesReused).toBeGreaterThan(reusedBefore);
  });

  it('returns as soon as the caller aborts without killing the worker or its replica', async () => {
    const stores = await exampleStores();
    await pool.execute(never, stores, 'reconcile');
    const replaced = pool.stats.workersReplaced;
    const controller = new AbortController();
    const pending = pool.execute(controller.signal, stores, 'reconcile');
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    const again = await pool.execute(never, stores, 'reconcile');
    expect(again.storeVersion).toBe(stores.version);
    expect(pool.stats.workersReplaced).toBe(replaced);
  });
});

describe('PoolPipeline failures', () => {
  it('refuses a template set that does not compile before starting any worker', async () => {
    const broken = parseTemplateSet('haproxyConfig: "global\\n{{#each x}}unclosed"\n', 'broken.yaml');
    await expect(PoolPipeline.create({ templateSet: broken, logger: silentLogger() })).rejects.toBeInstanceOf(TemplateSetRejected);
  });

  it('refuses a template set that calls an unknown helper', async () => {
    const unknown = parseTemplateSet('haproxyConfig: "{{noSuchHelper 1 2}}"\n', 'unknown.yaml');
    await expect(PoolPipeline.create({ templateSet: unknown, logger: silentLogger() })).rejects.toThrow(/noSuchHelper/);
  });

  it('fails a worker crash mid-render with phase render, then renders on a fresh fully synced worker', async () => {
    const crashPool = await PoolPipeline.create({ templateSet: set, threads: 1, logger: silentLogger() });
    try {
      const stores = new StoreProvider(set.stores);
      new SyntheticCluster({ ingresses: 3000, seed: 5 }).populate(stores);
      await crashPool.execute(never, stores, 'reconcile');
      const fullSyncs = crashPool.stats.fullSyncs;
      stores.store('ingresses').delete('team-0/app-0');
      const rendering = crashPool.execute(never, stores, 'reconcile');
      await expect.poll(() => crashPool.rendersInFlight, { interval: 1, timeout: 30_000 }).toBe(1);
      expect(await crashPool.terminateWorker()).toBe(true);
      const failure = await rendering.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(PipelineError);
      expect((failure as PipelineError).phase).toBe('render');
      expect((failure as PipelineError).message).toMatch(/^render failed: worker failed/);

      const recovered = await crashPool.execute(never, stores, 'reconcile');
      const expected = await inline.execute(never, stores, 'reconcile');
      expect(recovered.haproxyConfig).toBe(expected.haproxyConfig);
      // The replacement sends every file: nothing it rendered is held by the pool yet.
      expect(recovered.auxiliaryFiles).toEqual(expected.auxiliaryFiles);
      expect(crashPool.stats.fullSyncs).toBe(fullSyncs + 1);
      expect(crashPool.stats.workersReplaced).toBeGreaterThanOrEqual(1);
    } finally {
      await crashPool.destroy();
    }
  });

  it('fails a render that runs past renderTimeoutMs with phase render, and recovers', async () => {
    const slowPool = await PoolPipeline.create({ templateSet: set, threads: 1, renderTimeoutMs: 300, logger: silentLogger() });
    try {
      const stores = new StoreProvider(set.stores);
      // Far more work than 300 ms allows, even on a fast machine.
      const cluster = new SyntheticCluster({ ingresses: 25_000, seed: 9 });
      cluster.populate(stores);
      const failure = await slowPool.execute(never, stores, 'reconcile').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(PipelineError);
      expect((failure as PipelineError).phase).toBe('render');
      expect((failure as PipelineError).message).toMatch(/timed out after 300 ms/);

      // A small cluster renders well within the limit on the replacement worker.
      for (let i = 5; i < 25_000; i++) {
        stores.store('ingresses').delete(`${cluster.namespace(i)}/app-${i}`);
      }
      const ok = await slowPool.execute(never, stores, 'reconcile');
      expect(ok.storeVersion).toBe(stores.version);
      expect(ok.haproxyConfig).toContain('backend ing_team-0_app-4_app-4_80');
    } finally {
      await slowPool.destroy();
    }
  });
});

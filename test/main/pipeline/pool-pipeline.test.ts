import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffRenders } from '../../../src/main/deploy/config-diff.js';
import { diffPatch } from '../../../src/main/deploy/patch-diff.js';
import { InlinePipeline } from '../../../src/main/pipeline/inline-pipeline.js';
import { parseSlotFile } from '../../../src/worker/routing/ingress-model.js';
import { loadManifests } from '../../../src/main/sources/manifest/manifest-loader.js';
import { EXAMPLES_DIR } from '../../../src/main/core/paths.js';
import { PipelineError, type CheckedPipelineResult, type PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { PoolPipeline } from '../../../src/main/pipeline/pool/pool-pipeline.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { seededRandom, SyntheticCluster } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { TemplateSetRejected } from '../../../src/main/template-set/template-check.js';
import { loadTemplateSet, parseTemplateSet } from '../../../src/main/template-set/template-set.js';
import { silentLogger } from '../../../src/main/core/logger.js';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';
import { FaultSwitch } from '../../fixtures/workers/fault-switch.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { expectRecovery } from '../../helpers/pool-recovery.js';

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

  it('renders on a baseline rolled back to the output before the newest (a refused render) as the inline pipeline does', async () => {
    const stores = new StoreProvider(set.stores);
    const cluster = new SyntheticCluster({ ingresses: 8, seed: 13 });
    cluster.populate(stores);
    const confirmed = await pool.execute(never, stores, 'reconcile');
    const confirmedBaseline = { haproxyConfig: confirmed.haproxyConfig, auxiliaryFiles: confirmed.auxiliaryFiles };
    stores.store('ingresses').upsert(cluster.ingress(2, 5));
    await pool.execute(never, stores, 'reconcile', { baseline: confirmedBaseline });
    // The newest was refused: the next render is on the confirmed output, the one before the newest.
    stores.store('endpointslices').upsert(cluster.endpointSlice(4, 6));
    const retriesBefore = pool.stats.staleRetries;
    const [fromPool, fromInline] = await Promise.all([
      pool.execute(never, stores, 'reconcile', { baseline: confirmedBaseline }),
      inline.execute(never, stores, 'reconcile', { baseline: confirmedBaseline }),
    ]);
    expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
    expect(fromPool.auxiliaryFiles).toEqual(fromInline.auxiliaryFiles);
    expect(fromPool.checksum).toBe(fromInline.checksum);
    // The worker holds it still (or, at most once, receives it by value).
    expect(pool.stats.staleRetries).toBeLessThanOrEqual(retriesBefore + 1);
  });

  /** The render of `stores` on a copy of `last` as the baseline (as the Coordinator's result check makes it: still named by reference), from the pool and inline, which must agree. */
  async function sameFromPoolAndInline(stores: StoreProvider, last: PipelineResult): Promise<[CheckedPipelineResult, CheckedPipelineResult]> {
    const baseline = { haproxyConfig: last.haproxyConfig, auxiliaryFiles: { ...last.auxiliaryFiles } };
    const [fromPool, fromInline] = await Promise.all([pool.execute(never, stores, 'reconcile', { baseline }), inline.execute(never, stores, 'reconcile', { baseline })]);
    expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
    expect(fromPool.auxiliaryFiles).toEqual(fromInline.auxiliaryFiles);
    expect(fromPool.checksum).toBe(fromInline.checksum);
    return [fromPool, fromInline];
  }

  it('receives an endpoint-only render as edits of the output it holds, and hands back the complete output with its patch', async () => {
    const stores = new StoreProvider(set.stores);
    const cluster = new SyntheticCluster({ ingresses: 40, seed: 9 });
    cluster.populate(stores);
    let last = await pool.execute(never, stores, 'reconcile');
    let patched = 0;
    for (let i = 0; i < 8; i++) {
      stores.store('endpointslices').upsert(cluster.endpointSlice(i * 3, 100 + i));
      const [fromPool, fromInline] = await sameFromPoolAndInline(stores, last);
      expect(fromPool.origins?.sections).toEqual(fromInline.origins?.sections);
      if (fromPool.patch !== undefined) {
        patched++;
        expect(fromPool.patch.from).toBe(last.renderId);
        expect(Object.keys(fromPool.patch.edits)).toContain('config');
      }
      last = fromPool;
    }
    // Renders alternate between the pool's workers; a worker whose previous output is the baseline patches it.
    expect(patched).toBeGreaterThan(0);
  });

  it('receives an Ingress path change as the changed lines of the maps it holds, and hands back the complete output whose patch diffs like the whole', async () => {
    const stores = new StoreProvider(set.stores);
    const cluster = new SyntheticCluster({ ingresses: 120, seed: 13 });
    cluster.populate(stores);
    let last = await pool.execute(never, stores, 'reconcile');
    let patched = 0;
    for (let i = 0; i < 8; i++) {
      // A new path on one Ingress: the config stays the same, two maps change by a line.
      stores.store('ingresses').upsert(cluster.ingress(i * 7, 200 + i));
      const [fromPool, fromInline] = await sameFromPoolAndInline(stores, last);
      // The origin index names the Ingress's new version although the config did not change.
      expect(fromPool.origins).toEqual(fromInline.origins);
      expect(fromPool.origins?.sections).toEqual(fromInline.origins?.sections);
      if (fromPool.patch !== undefined) {
        patched++;
        expect(fromPool.patch.from).toBe(last.renderId);
        expect(Object.keys(fromPool.patch.edits)).not.toContain('config');
        expect(Object.keys(fromPool.patch.edits)).toContain('maps/host-prefix.map');
        // Only the changed lines crossed: far less than the map itself.
        const [edit] = fromPool.patch.edits['maps/host-prefix.map'] ?? [];
        expect(edit?.text.length).toBeLessThan((fromPool.auxiliaryFiles.maps['host-prefix.map'] ?? '').length / 10);
        expect(diffPatch(last, fromPool, fromPool.patch)).toEqual(diffRenders(last, fromPool));
      }
      last = fromPool;
    }
    expect(patched).toBeGreaterThan(0);
    // Each of those renders changed one Ingress's version: its origin index crossed as that object alone.
    expect(pool.stats.originChanges).toBeGreaterThan(0);
  });

  it('reports an empty queue and zero utilization before its first render, and a utilization between 0 and 1 after it', async () => {
    const fresh = await PoolPipeline.create({ templateSet: set, threads: 1, logger: silentLogger() });
    try {
      expect(fresh.queueSize).toBe(0);
      expect(fresh.utilization).toBe(0);
      await fresh.execute(never, await exampleStores(), 'reconcile');
      expect(fresh.queueSize).toBe(0);
      expect(fresh.utilization).toBeGreaterThan(0);
      expect(fresh.utilization).toBeLessThanOrEqual(1);
    } finally {
      await fresh.destroy();
    }
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

  it('refuses a worker module that is neither a path nor a file URL with a TypeError that shows it', async () => {
    const worker = { filename: 42 as unknown as string };
    await expect(PoolPipeline.create({ templateSet: set, logger: silentLogger(), worker })).rejects.toThrow(new TypeError('worker.filename must be an absolute path or a file URL, got 42'));
  });

  it('fails a worker crash mid-render with phase render, then renders on a fresh fully synced worker', async () => {
    const faults = new FaultSwitch();
    const crashPool = await PoolPipeline.create({ templateSet: set, threads: 1, logger: silentLogger(), worker: faults.worker });
    try {
      const stores = syntheticStores(30, 5);
      await crashPool.execute(never, stores, 'reconcile');
      const fullSyncs = crashPool.stats.fullSyncs;
      stores.store('ingresses').delete('team-0/app-0');
      // The render hangs until its thread is terminated, so the worker is surely mid-render.
      faults.arm('hang');
      const rendering = crashPool.execute(never, stores, 'reconcile');
      await faults.claimed();
      expect(crashPool.rendersInFlight).toBe(1);
      expect(await crashPool.terminateWorker()).toBe(true);
      const failure = await failureOf(rendering);
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
    const faults = new FaultSwitch();
    const clock = new FakeClock();
    const slowPool = await PoolPipeline.create({ templateSet: set, threads: 1, renderTimeoutMs: 300, clock, logger: silentLogger(), worker: faults.worker });
    try {
      const stores = syntheticStores(5, 9);
      faults.arm('hang');
      const rendering = failureOf(slowPool.execute(never, stores, 'reconcile'));
      // The render timer was set before the task reached the worker that now spins.
      await faults.claimed();
      await clock.advance(300);
      const failure = await rendering;
      expect(failure).toBeInstanceOf(PipelineError);
      expect((failure as PipelineError).phase).toBe('render');
      expect((failure as PipelineError).message).toMatch(/timed out after 300 ms/);
      expect(failure).toMatchObject({ code: 'RENDER_TIMEOUT', terminal: false });

      const ok = await expectRecovery(slowPool, inline, stores, { fullSyncs: slowPool.stats.fullSyncs });
      expect(ok.storeVersion).toBe(stores.version);
      expect(ok.haproxyConfig).toContain('backend ing_team-0_app-4_app-4_80');
    } finally {
      await slowPool.destroy();
    }
  });

  it('fails the execute whose worker thread crashes mid-render with code WORKER_FAILED, and fully syncs the replacement on the next execute', async () => {
    const faults = new FaultSwitch();
    const crashPool = await PoolPipeline.create({ templateSet: set, threads: 1, logger: silentLogger(), worker: faults.worker });
    try {
      const stores = syntheticStores(20, 13);
      await crashPool.execute(never, stores, 'reconcile');
      const fullSyncs = crashPool.stats.fullSyncs;
      stores.store('ingresses').delete('team-0/app-0');
      faults.arm('crash');
      const failure = await failureOf(crashPool.execute(never, stores, 'reconcile'));
      expect(failure).toBeInstanceOf(PipelineError);
      expect(failure).toMatchObject({ phase: 'render', code: 'WORKER_FAILED', terminal: false });
      expect((failure as PipelineError).message).toMatch(/^render failed: worker failed: worker exited with code: 70/);

      await expectRecovery(crashPool, inline, stores, { fullSyncs });
    } finally {
      await crashPool.destroy();
    }
  });

  it('turns a worker that runs out of memory into a render failure and a replaced worker, and the process carries on', async () => {
    const faults = new FaultSwitch();
    const oomPool = await PoolPipeline.create({
      templateSet: set,
      threads: 1,
      logger: silentLogger(),
      worker: faults.worker,
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    try {
      const stores = syntheticStores(20, 17);
      await oomPool.execute(never, stores, 'reconcile');
      const fullSyncs = oomPool.stats.fullSyncs;
      faults.arm('oom');
      const failure = await failureOf(oomPool.execute(never, stores, 'reconcile'));
      expect(failure).toBeInstanceOf(PipelineError);
      expect(failure).toMatchObject({ phase: 'render', code: 'WORKER_FAILED', terminal: false });
      expect((failure as PipelineError).message).toMatch(/^render failed: worker failed: .*out of memory/);

      // This thread is still here: the worker's heap limit ended only the worker.
      await expectRecovery(oomPool, inline, stores, { fullSyncs });
    } finally {
      await oomPool.destroy();
    }
  });
});

/** What `work` rejected with (undefined when it resolved). */
function failureOf(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => undefined,
    (error: unknown) => error,
  );
}

function syntheticStores(ingresses: number, seed: number): StoreProvider {
  const stores = new StoreProvider(set.stores);
  new SyntheticCluster({ ingresses, seed }).populate(stores);
  return stores;
}

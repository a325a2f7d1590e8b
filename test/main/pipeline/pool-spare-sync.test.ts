import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/main/core/logger.js';
import { InlinePipeline } from '../../../src/main/pipeline/inline-pipeline.js';
import { PipelineError } from '../../../src/main/pipeline/pipeline.js';
import { PoolPipeline } from '../../../src/main/pipeline/pool/pool-pipeline.js';
import { SyntheticCluster } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';
import { FaultSwitch } from '../../fixtures/workers/fault-switch.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const never = new AbortController().signal;
let set: TemplateSetSource;
let inline: InlinePipeline;
let pool: PoolPipeline | undefined;

beforeAll(async () => {
  set = await loadTemplateSet();
  inline = new InlinePipeline({ templateSet: set });
});

afterEach(async () => {
  await pool?.destroy();
  pool = undefined;
});

async function versions(p: PoolPipeline): Promise<{ rendering: number | undefined; spares: number[] }> {
  const status = await p.workerStatus();
  return {
    rendering: status.find((w) => w.threadId === p.renderingThread)?.version,
    spares: status.filter((w) => w.threadId !== p.renderingThread).map((w) => w.version),
  };
}

describe('PoolPipeline spare workers', () => {
  it('sends the rendering worker its changes with each render, and the spare all of them in one delta once the delay has passed', async () => {
    const clock = new FakeClock();
    pool = await PoolPipeline.create({ templateSet: set, threads: 2, clock, logger: silentLogger() });
    const cluster = new SyntheticCluster({ ingresses: 20, seed: 4 });
    const stores = new StoreProvider(set.stores);
    cluster.populate(stores);
    await pool.execute(never, stores, 'reconcile');
    const synced = stores.version;
    expect(await versions(pool)).toEqual({ rendering: synced, spares: [synced] });
    const before = pool.stats;
    for (let i = 0; i < 3; i++) {
      cluster.change(stores);
      const result = await pool.execute(never, stores, 'reconcile');
      expect(result.storeVersion).toBe(stores.version);
    }
    expect(await versions(pool)).toEqual({ rendering: stores.version, spares: [synced] });
    expect(pool.stats.deltaSyncs).toBe(before.deltaSyncs + 3);
    await clock.advance(200);
    expect(await versions(pool)).toEqual({ rendering: stores.version, spares: [stores.version] });
    expect(pool.stats.deltaSyncs).toBe(before.deltaSyncs + 4);
    expect(pool.stats.fullSyncs).toBe(before.fullSyncs);
  });

  it('renders on a spare that is behind exactly as inline when the rendering worker is busy', async () => {
    pool = await PoolPipeline.create({ templateSet: set, threads: 2, clock: new FakeClock(), logger: silentLogger() });
    const cluster = new SyntheticCluster({ ingresses: 20, seed: 6 });
    const stores = new StoreProvider(set.stores);
    cluster.populate(stores);
    await pool.execute(never, stores, 'reconcile');
    for (let i = 0; i < 5; i++) {
      cluster.change(stores);
      await pool.execute(never, stores, 'reconcile');
    }
    cluster.change(stores);
    expect((await versions(pool)).spares[0]).toBeLessThan(stores.version);
    const [first, second] = await Promise.all([pool.execute(never, stores, 'reconcile'), pool.execute(never, stores, 'reconcile')]);
    const expected = await inline.execute(never, stores, 'reconcile');
    // The clock never moved, so only the second execute's lease brought the spare to the stores.
    expect((await versions(pool)).spares).toEqual([stores.version]);
    for (const result of [first, second]) {
      expect(result.storeVersion).toBe(stores.version);
      expect(result.haproxyConfig).toBe(expected.haproxyConfig);
      expect(result.auxiliaryFiles).toEqual(expected.auxiliaryFiles);
    }
  });

  it('fails a render whose worker is terminated, then renders the latest stores on the spare that was behind, exactly as inline', async () => {
    const faults = new FaultSwitch();
    pool = await PoolPipeline.create({ templateSet: set, threads: 2, clock: new FakeClock(), logger: silentLogger(), worker: faults.worker });
    const cluster = new SyntheticCluster({ ingresses: 30, seed: 5 });
    const stores = new StoreProvider(set.stores);
    cluster.populate(stores);
    await pool.execute(never, stores, 'reconcile');
    for (let i = 0; i < 4; i++) {
      cluster.change(stores);
      await pool.execute(never, stores, 'reconcile');
    }
    const dead = pool.renderingThread;
    expect((await versions(pool)).spares[0]).toBeLessThan(stores.version);
    cluster.change(stores);
    faults.arm('hang');
    const rendering = pool.execute(never, stores, 'reconcile').then(
      () => undefined,
      (error: unknown) => error,
    );
    await faults.claimed();
    expect(await pool.terminateWorker(dead)).toBe(true);
    const failure = await rendering;
    expect(failure).toBeInstanceOf(PipelineError);
    expect((failure as PipelineError).phase).toBe('render');

    cluster.change(stores);
    const recovered = await pool.execute(never, stores, 'reconcile');
    const expected = await inline.execute(never, stores, 'reconcile');
    expect(pool.renderingThread).not.toBe(dead);
    expect(recovered.storeVersion).toBe(stores.version);
    expect(recovered.haproxyConfig).toBe(expected.haproxyConfig);
    expect(recovered.auxiliaryFiles).toEqual(expected.auxiliaryFiles);
  });
});

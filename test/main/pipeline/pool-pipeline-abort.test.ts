// What an aborted execute (leadership lost mid-render) leaves behind: its render keeps running on
// its worker, and the next execute must not wait for it while another worker is free. Render
// timeouts run on a FakeClock that only the test moves, so a hung render ends only when a test
// says so: an execute that waited for it would never finish, whatever the wall time.
import { beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/main/core/logger.js';
import { InlinePipeline } from '../../../src/main/pipeline/inline-pipeline.js';
import type { PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { PoolPipeline } from '../../../src/main/pipeline/pool/pool-pipeline.js';
import { SyntheticCluster } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';
import { FaultSwitch } from '../../fixtures/workers/fault-switch.js';
import { track, waitUntil } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const never = new AbortController().signal;
const RENDER_TIMEOUT_MS = 10_000;
let set: TemplateSetSource;
let inline: InlinePipeline;

beforeAll(async () => {
  set = await loadTemplateSet();
  inline = new InlinePipeline({ templateSet: set });
});

describe('PoolPipeline after an aborted execute', () => {
  it('renders the next execute on the idle worker at once, exactly as inline, while the abandoned render still runs', async () => {
    const { pool, faults } = await faultyPool(2);
    try {
      const stores = syntheticStores(30, 5);
      await pool.execute(never, stores, 'reconcile');
      await abandonHungRender(pool, faults, stores);

      stores.store('ingresses').delete('team-0/app-0');
      const next = await pool.execute(never, stores, 'reconcile');
      await expectInline(next, stores);
      // The hung render still holds its worker: the execute above never waited for it.
      expect(pool.rendersInFlight).toBe(1);
      expect(pool.stats.workersReplaced).toBe(0);
    } finally {
      await pool.destroy();
    }
  });

  it('makes the next execute of a one-thread pool wait for its only worker, and render as inline on the replacement once the abandoned render timed out', async () => {
    const { pool, faults, clock } = await faultyPool(1);
    try {
      const stores = syntheticStores(20, 13);
      await pool.execute(never, stores, 'reconcile');
      const fullSyncs = pool.stats.fullSyncs;
      await abandonHungRender(pool, faults, stores);

      stores.store('ingresses').delete('team-0/app-0');
      const next = track(pool.execute(never, stores, 'reconcile'));
      await waitUntil(() => pool.queueSize === 1, 'the execute to wait for a free worker');
      expect(next.done).toBe(false);
      // The abandoned render's own timer ends it: its worker is replaced, and the waiting execute
      // takes the replacement.
      await clock.advance(RENDER_TIMEOUT_MS);
      await expectInline(await next.promise, stores);
      expect(pool.queueSize).toBe(0);
      expect(pool.stats.fullSyncs).toBe(fullSyncs + 1);
      expect(pool.stats.workersReplaced).toBe(1);
    } finally {
      await pool.destroy();
    }
  });
});

async function faultyPool(threads: number): Promise<{ pool: PoolPipeline; faults: FaultSwitch; clock: FakeClock }> {
  const faults = new FaultSwitch();
  const clock = new FakeClock();
  const pool = await PoolPipeline.create({ templateSet: set, threads, renderTimeoutMs: RENDER_TIMEOUT_MS, clock, logger: silentLogger(), worker: faults.worker });
  return { pool, faults, clock };
}

/** Starts a render that hangs on its worker, then aborts its execute as a lost leadership does. */
async function abandonHungRender(pool: PoolPipeline, faults: FaultSwitch, stores: StoreProvider): Promise<void> {
  faults.arm('hang');
  const leadership = new AbortController();
  const abandoned = pool.execute(leadership.signal, stores, 'reconcile').then(
    () => undefined,
    (error: unknown) => error,
  );
  await faults.claimed();
  leadership.abort();
  expect(await abandoned).toMatchObject({ name: 'AbortError' });
  expect(pool.rendersInFlight).toBe(1);
}

async function expectInline(result: PipelineResult, stores: StoreProvider): Promise<void> {
  const expected = await inline.execute(never, stores, 'reconcile');
  expect(result.storeVersion).toBe(stores.version);
  expect(result.haproxyConfig).toBe(expected.haproxyConfig);
  expect(result.auxiliaryFiles).toEqual(expected.auxiliaryFiles);
  expect(result.checksum).toBe(expected.checksum);
}

function syntheticStores(ingresses: number, seed: number): StoreProvider {
  const stores = new StoreProvider(set.stores);
  new SyntheticCluster({ ingresses, seed }).populate(stores);
  return stores;
}

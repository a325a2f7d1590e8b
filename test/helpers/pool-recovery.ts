// The check that a pool recovered from a dead worker, shared by the pool's fault tests.
import { expect } from 'vitest';
import type { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import type { PoolPipeline } from '../../src/main/pipeline/pool/pool-pipeline.js';
import type { StoreProvider } from '../../src/main/stores/store-provider.js';
import { SyntheticCluster } from '../../src/main/sources/synthetic/synthetic-cluster.js';

const never = new AbortController().signal;

/**
 * After one worker of a one-thread pool died mid-render: a change to the stores renders on its
 * replacement exactly as inline, through one full sync, and the dead worker counts as replaced.
 * (Syncing the change to the dead worker's handle ends only when its control port closes, which
 * retires it, so the count is settled once the execute returns.)
 */
export async function expectRecovery(pool: PoolPipeline, inline: InlinePipeline, stores: StoreProvider, before: { readonly fullSyncs: number }): Promise<PipelineResult> {
  stores.store('endpointslices').upsert(new SyntheticCluster({ ingresses: 1, seed: 1 }).endpointSlice(0, 99));
  const recovered = await pool.execute(never, stores, 'reconcile');
  const expected = await inline.execute(never, stores, 'reconcile');
  expect(recovered.storeVersion).toBe(stores.version);
  expect(recovered.haproxyConfig).toBe(expected.haproxyConfig);
  expect(recovered.auxiliaryFiles).toEqual(expected.auxiliaryFiles);
  expect(pool.stats.fullSyncs).toBe(before.fullSyncs + 1);
  expect(pool.stats.workersReplaced).toBe(1);
  return recovered;
}

// The served Ingresses (one name per Ingress) cross from the rendering worker only when they differ
// from those of the output the main thread holds: the pool puts the held list back otherwise.
import { describe, expect, it } from 'vitest';
import type { CheckedPipelineResult, PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { SyntheticCluster } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { poolAndInline } from '../../helpers/pool-and-inline.js';

const never = new AbortController().signal;
const pipelines = poolAndInline(1);

describe('PoolPipeline served Ingresses', () => {
  it('receives the served Ingresses only when they differ from those of the output it holds, and hands back the list the inline pipeline gives', async () => {
    const stores = new StoreProvider(pipelines.set.stores);
    const cluster = new SyntheticCluster({ ingresses: 30, seed: 11 });
    cluster.populate(stores);
    let last: PipelineResult = await pipelines.pool.execute(never, stores, 'reconcile');
    const both = async (): Promise<[CheckedPipelineResult, CheckedPipelineResult]> => {
      const baseline = { haproxyConfig: last.haproxyConfig, auxiliaryFiles: { ...last.auxiliaryFiles } };
      const [fromPool, fromInline] = await Promise.all([pipelines.pool.execute(never, stores, 'reconcile', { baseline }), pipelines.inline.execute(never, stores, 'reconcile', { baseline })]);
      expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
      expect(fromPool.servedIngresses).toEqual(fromInline.servedIngresses);
      last = fromPool;
      return [fromPool, fromInline];
    };
    const reusedBefore = pipelines.pool.stats.servedReused;
    // An endpoint change and a path change keep the served set; a new Ingress changes it.
    stores.store('endpointslices').upsert(cluster.endpointSlice(2, 100));
    await both();
    stores.store('ingresses').upsert(cluster.ingress(4, 200));
    const [kept] = await both();
    expect(pipelines.pool.stats.servedReused - reusedBefore).toBe(2);
    const extra = { ...cluster.ingress(5, 1), metadata: { ...cluster.ingress(5, 1).metadata, name: 'extra-app', uid: 'extra-uid' } };
    stores.store('ingresses').upsert(extra);
    const [grown] = await both();
    expect(pipelines.pool.stats.servedReused - reusedBefore).toBe(2);
    expect(grown.servedIngresses).toContain(`${extra.metadata.namespace}/extra-app`);
    expect(grown.servedIngresses?.length).toBe((kept.servedIngresses?.length ?? 0) + 1);
  });
});

// The served Ingresses (one name per Ingress) cross from the rendering worker only when they differ
// from those of the output the main thread holds: the pool puts the held list back otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InlinePipeline } from '../../../src/main/pipeline/inline-pipeline.js';
import type { CheckedPipelineResult, PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { PoolPipeline } from '../../../src/main/pipeline/pool/pool-pipeline.js';
import { silentLogger } from '../../../src/main/core/logger.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { SyntheticCluster } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';
import type { TemplateSetSource } from '../../../src/worker/protocol.js';

const never = new AbortController().signal;
let set: TemplateSetSource;
let pool: PoolPipeline;
let inline: InlinePipeline;

beforeAll(async () => {
  set = await loadTemplateSet();
  pool = await PoolPipeline.create({ templateSet: set, threads: 1, logger: silentLogger() });
  inline = new InlinePipeline({ templateSet: set });
});

afterAll(async () => {
  await pool?.destroy();
});

describe('PoolPipeline served Ingresses', () => {
  it('receives the served Ingresses only when they differ from those of the output it holds, and hands back the list the inline pipeline gives', async () => {
    const stores = new StoreProvider(set.stores);
    const cluster = new SyntheticCluster({ ingresses: 30, seed: 11 });
    cluster.populate(stores);
    let last: PipelineResult = await pool.execute(never, stores, 'reconcile');
    const both = async (): Promise<[CheckedPipelineResult, CheckedPipelineResult]> => {
      const baseline = { haproxyConfig: last.haproxyConfig, auxiliaryFiles: { ...last.auxiliaryFiles } };
      const [fromPool, fromInline] = await Promise.all([pool.execute(never, stores, 'reconcile', { baseline }), inline.execute(never, stores, 'reconcile', { baseline })]);
      expect(fromPool.haproxyConfig).toBe(fromInline.haproxyConfig);
      expect(fromPool.servedIngresses).toEqual(fromInline.servedIngresses);
      last = fromPool;
      return [fromPool, fromInline];
    };
    const reusedBefore = pool.stats.servedReused;
    // An endpoint change and a path change keep the served set; a new Ingress changes it.
    stores.store('endpointslices').upsert(cluster.endpointSlice(2, 100));
    await both();
    stores.store('ingresses').upsert(cluster.ingress(4, 200));
    const [kept] = await both();
    expect(pool.stats.servedReused - reusedBefore).toBe(2);
    const extra = { ...cluster.ingress(5, 1), metadata: { ...cluster.ingress(5, 1).metadata, name: 'extra-app', uid: 'extra-uid' } };
    stores.store('ingresses').upsert(extra);
    const [grown] = await both();
    expect(pool.stats.servedReused - reusedBefore).toBe(2);
    expect(grown.servedIngresses).toContain(`${extra.metadata.namespace}/extra-app`);
    expect(grown.servedIngresses?.length).toBe((kept.servedIngresses?.length ?? 0) + 1);
  });
});

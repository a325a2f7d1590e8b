// One PoolPipeline and one InlinePipeline over the default template set, created before a test
// file's tests and the pool destroyed after them, for tests that compare the two pipelines.
import { afterAll, beforeAll } from 'vitest';
import { silentLogger } from '../../src/main/core/logger.js';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import { PoolPipeline } from '../../src/main/pipeline/pool/pool-pipeline.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import type { TemplateSetSource } from '../../src/worker/protocol.js';

export interface PoolAndInline {
  readonly set: TemplateSetSource;
  readonly pool: PoolPipeline;
  readonly inline: InlinePipeline;
}

/** Registers the hooks; the returned object's fields are set once `beforeAll` has run. */
export function poolAndInline(threads: number): PoolAndInline {
  const pipelines = {} as { set: TemplateSetSource; pool: PoolPipeline; inline: InlinePipeline };
  beforeAll(async () => {
    pipelines.set = await loadTemplateSet();
    pipelines.pool = await PoolPipeline.create({ templateSet: pipelines.set, threads, logger: silentLogger() });
    pipelines.inline = new InlinePipeline({ templateSet: pipelines.set });
  });
  afterAll(async () => {
    await pipelines.pool?.destroy();
  });
  return pipelines;
}

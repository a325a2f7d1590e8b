// InlinePipeline: the same pure render and validate code as the worker pool, run on the main
// thread. It is the baseline the benchmarks compare the PoolPipeline against, and a simple
// executor for tests and one-shot tools.
import type { TemplateSetSource } from '../../worker/protocol.js';
import { renderAndValidate } from '../../worker/render/renderer.js';
import { TemplateEngine } from '../../worker/templates/template-engine.js';
import { toPipelineResult, type ExecuteOptions, type PipelineExecutor, type PipelineMode, type CheckedPipelineResult } from './pipeline.js';
import type { StoreProvider } from '../stores/store-provider.js';
import { assertTemplateSetRenders } from '../template-set/template-check.js';

export interface InlinePipelineOptions {
  readonly templateSet: TemplateSetSource;
}

export class InlinePipeline implements PipelineExecutor {
  readonly #engine = new TemplateEngine();
  readonly #set: TemplateSetSource;

  constructor(options: InlinePipelineOptions) {
    this.#set = options.templateSet;
    assertTemplateSetRenders(this.#set, this.#engine);
  }

  async execute(signal: AbortSignal, stores: StoreProvider, _mode: PipelineMode, options: ExecuteOptions = {}): Promise<CheckedPipelineResult> {
    signal.throwIfAborted();
    const outcome = renderAndValidate(this.#engine, {
      set: this.#set,
      lookup: (name) => (stores.has(name) ? stores.store(name) : undefined),
      storeVersion: stores.version,
      baseline: options.baseline,
      exclusions: options.exclusions,
    });
    return toPipelineResult(outcome);
  }
}

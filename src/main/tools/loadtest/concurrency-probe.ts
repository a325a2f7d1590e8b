// ConcurrencyProbe: wraps the executor under test and records the most executes running at
// once, so the load test can check the Coordinator never runs two renders together. With a pool
// it also counts the worker tasks still running (an abandoned render keeps its worker busy).
import type { PipelineExecutor } from '../../pipeline/pipeline.js';
import type { PoolPipeline } from '../../pipeline/pool/pool-pipeline.js';

export class ConcurrencyProbe implements PipelineExecutor {
  max = 0;
  #running = 0;

  constructor(
    private readonly inner: PipelineExecutor,
    private readonly pool: PoolPipeline | undefined,
  ) {}

  async execute(...args: Parameters<PipelineExecutor['execute']>): ReturnType<PipelineExecutor['execute']> {
    this.#running++;
    this.max = Math.max(this.max, this.#running, (this.pool?.rendersInFlight ?? 0) + 1);
    try {
      return await this.inner.execute(...args);
    } finally {
      this.#running--;
    }
  }
}

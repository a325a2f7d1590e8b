// PoolPipeline: the product's PipelineExecutor. Rendering and validation run on a Piscina pool of
// worker threads, each holding a versioned replica of the stores. A worker is sent only the
// changes since its version (replica-sync.ts): the one an execute renders on, with its task, which
// names the store version to render; the others, batched, a little later (spare-sync.ts). So the
// cost grows with the number of changed objects, never with the size of the stores.
// Each execute renders on an idle worker it leases (worker-leases.ts), the sticky one while idle.
// A crashed, timed-out or out-of-memory worker is replaced by piscina; the replacement announces
// itself (worker-registry.ts), and the next execute gives it a full sync in the background.
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { ResourceLimits } from 'node:worker_threads';
import { Piscina, queueOptionsSymbol } from 'piscina';
import type { Logger } from 'pino';
import type { RenderTask, RenderTaskResult, TemplateSetSource } from '../../../worker/protocol.js';
import { abortError, raceAbort } from '../../core/async.js';
import { systemClock, type Clock } from '../../core/clock.js';
import { PipelineError } from '../../core/errors.js';
import { defaultLogger } from '../../core/logger.js';
import { toPipelineResult, type ExecuteOptions, type PipelineExecutor, type PipelineMode, type CheckedPipelineResult } from '../pipeline.js';
import type { StoreProvider } from '../../stores/store-provider.js';
import { assertTemplateSetRenders } from '../../template-set/template-check.js';
import { OutputReuse } from './output-reuse.js';
import { ReplicaSyncer, type Timed } from './replica-sync.js';
import { SpareSync } from './spare-sync.js';
import { WorkerLeases, type Lease } from './worker-leases.js';
import { workerModule, type PoolWorkerModule } from './worker-module.js';
import { WorkerRegistry } from './worker-registry.js';

export type { PoolWorkerModule } from './worker-module.js';

export interface PoolPipelineOptions {
  readonly templateSet: TemplateSetSource;
  /**
   * Worker threads, kept warm (min = max, no idle timeout).
   * @default min(2, available cores)
   */
  readonly threads?: number;
  /** A render running longer fails with phase `render`, and its worker is replaced. @default 30000 */
  readonly renderTimeoutMs?: number;
  /**
   * How long `create` waits for the workers to come up. An execute finding every worker busy waits
   * for a free one up to `renderTimeoutMs` plus this, then fails with code POOL_UNAVAILABLE.
   * @default 30000
   */
  readonly startTimeoutMs?: number;
  readonly logger?: Logger;
  /** Render timeouts and the start-up deadline. @default systemClock */
  readonly clock?: Clock;
  /**
   * The module the workers load, e.g. a test fixture that wraps the real worker.
   * @default `src/worker/pool-worker.ts` under tsx (or vitest), the built `pool-worker.js` otherwise
   */
  readonly worker?: PoolWorkerModule;
  /**
   * Heap limits of each worker thread; fields left out take the defaults. A worker that outgrows
   * them is terminated (ERR_WORKER_OUT_OF_MEMORY) instead of growing until the process runs out
   * of memory: its render fails with phase `render` (code WORKER_FAILED), piscina replaces it,
   * and the next execute fully syncs the replacement.
   * @default { maxOldGenerationSizeMb: 4096 }
   */
  readonly resourceLimits?: ResourceLimits;
}

export interface PoolPipelineStats {
  readonly executions: number;
  readonly fullSyncs: number;
  readonly deltaSyncs: number;
  readonly changesShipped: number;
  readonly staleRetries: number;
  readonly workersReplaced: number;
  /** Main-thread time of the last execute before the task was handed to the pool, in ms. */
  readonly lastDispatchMs: number;
  /** Files (the config included) a worker left out of a result because the pool held them already. */
  readonly filesReused: number;
  /** Results whose origin index a worker sent as the objects that changed since the output the pool held. */
  readonly originChanges: number;
  /** Results whose served Ingresses a worker left out because they were those of the output the pool held. */
  readonly servedReused: number;
}

/** About V8's default old-space limit on a 64-bit host: bounds a runaway worker, not a normal one. */
const DEFAULT_RESOURCE_LIMITS: ResourceLimits = Object.freeze({ maxOldGenerationSizeMb: 4096 });

const MAX_STALE_RETRIES = 3;

/** A task pinned to its execute's lease. Structured clone drops symbol keys: the pin stays here. */
type PinnedTask = RenderTask & { readonly [queueOptionsSymbol]: Lease };

export class PoolPipeline implements PipelineExecutor {
  readonly #pool: Piscina<PinnedTask, RenderTaskResult>;
  readonly #set: TemplateSetSource;
  readonly #timeoutMs: number;
  readonly #startTimeoutMs: number;
  readonly #logger: Logger;
  readonly #threads: number;
  readonly #clock: Clock;
  readonly #registry: WorkerRegistry;
  readonly #replicas: ReplicaSyncer;
  readonly #leases: WorkerLeases;
  readonly #spares: SpareSync;
  readonly #outputs = new OutputReuse();
  #destroyed = false;
  #inFlight = 0;
  /**
   * The worker an execute leases while it is idle. Sticking to one worker keeps its caches
   * (recent outputs, compiled fragments) warm; the others are synced for fail-over.
   */
  #preferredThread: number | undefined;
  readonly #stats = { executions: 0, staleRetries: 0, lastDispatchMs: 0 };

  /** Validates the template set on the main thread, then starts the pool and waits for its workers. */
  static async create(options: PoolPipelineOptions): Promise<PoolPipeline> {
    // A worker module that throws at load makes the next run() hang, so a bad template set
    // must be refused here, before any worker sees it.
    assertTemplateSetRenders(options.templateSet);
    const pipeline = new PoolPipeline(options);
    try {
      await pipeline.#registry.awaitStart(pipeline.#threads, pipeline.#startTimeoutMs);
    } catch (error) {
      await pipeline.destroy();
      throw error;
    }
    return pipeline;
  }

  private constructor(options: PoolPipelineOptions) {
    this.#set = options.templateSet;
    this.#timeoutMs = options.renderTimeoutMs ?? 30_000;
    this.#startTimeoutMs = options.startTimeoutMs ?? 30_000;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'pool-pipeline' });
    this.#threads = options.threads ?? Math.max(1, Math.min(2, availableParallelism()));
    if (!Number.isInteger(this.#threads) || this.#threads < 1) throw new TypeError(`threads must be a positive integer, got ${String(options.threads)}`);
    const worker = workerModule(options.worker);
    this.#pool = new Piscina<PinnedTask, RenderTaskResult>({
      ...worker,
      resourceLimits: { ...DEFAULT_RESOURCE_LIMITS, ...options.resourceLimits },
      minThreads: this.#threads,
      maxThreads: this.#threads,
      idleTimeout: Infinity,
      // With 'sync' atomics an idle worker blocks in Atomics.wait: its event loop stops, so
      // comlink messages go unanswered and its log lines are never flushed.
      atomics: 'disabled',
      concurrentTasksPerWorker: 1,
      loadBalancer: (task, workers) => this.#leases.pick(task, workers),
    });
    this.#replicas = new ReplicaSyncer(this.#set);
    this.#spares = new SpareSync({
      clock: this.#clock,
      logger: this.#logger,
      spares: () => [...this.#registry.handles()].filter((w) => !this.#leases.isLeased(w.threadId)),
      sync: (w, stores, target) => this.#replicas.sync(w, stores, target, (fn) => fn()),
    });
    this.#leases = new WorkerLeases({
      clock: this.#clock,
      available: () => [...this.#registry.handles()].map((w) => w.threadId).filter((id) => this.#isRunning(id)),
      running: (threadId) => this.#isRunning(threadId),
    });
    this.#registry = new WorkerRegistry(this.#pool, {
      logger: this.#logger,
      clock: this.#clock,
      onArrived: (threadId) => {
        this.#preferredThread ??= threadId;
        this.#leases.changed();
      },
      onRetired: (threadId) => {
        this.#outputs.forget(threadId);
        if (this.#preferredThread === threadId) this.#preferredThread = this.#registry.firstThreadId();
      },
    });
  }

  get stats(): PoolPipelineStats {
    return {
      ...this.#stats,
      ...this.#replicas.stats,
      workersReplaced: this.#registry.retired,
      filesReused: this.#outputs.filesReused,
      originChanges: this.#outputs.originChanges,
      servedReused: this.#outputs.servedReused,
    };
  }

  get threads(): number {
    return this.#threads;
  }

  /** The worker the next execute renders on while it is idle (the others are spares), if any. */
  get renderingThread(): number | undefined {
    return this.#preferredThread;
  }

  /** Render tasks handed to the pool and not yet settled. */
  get rendersInFlight(): number {
    return this.#inFlight;
  }

  /**
   * Renders waiting for a worker: executes waiting for a free one, plus piscina's `queueSize`
   * (tasks whose worker exited before they reached it). 0 while a worker is free.
   */
  get queueSize(): number {
    return this.#leases.waiting + this.#pool.queueSize;
  }

  /**
   * Piscina's `utilization`: the share of the pool's thread time spent running tasks since it
   * started (mean task run time × tasks run ÷ (uptime × threads)), from 0 to 1. 0 before the
   * first render; a long-run average, not the current load (see `rendersInFlight`).
   */
  get utilization(): number {
    return this.#pool.utilization;
  }

  /**
   * Replica version and heap of each worker, for diagnostics and benchmarks. With
   * `collectGarbage` each worker runs a full garbage collection first when the process runs
   * under `node --expose-gc` (`collected` says whether it did), so the heap is the live heap.
   */
  async workerStatus(options: { readonly collectGarbage?: boolean } = {}): Promise<{ threadId: number; version: number; heapUsedBytes: number; collected: boolean }[]> {
    return Promise.all(
      [...this.#registry.handles()].map(async (w) => {
        const status = await w.remote.status({ collectGarbage: options.collectGarbage === true });
        return { threadId: w.threadId, version: status.version, heapUsedBytes: status.heapUsedBytes, collected: status.collected };
      }),
    );
  }

  /** Writes a V8 heap snapshot of one worker into `directory`; resolves to its path. */
  async writeHeapSnapshot(threadId: number, directory: string): Promise<string> {
    const handle = [...this.#registry.handles()].find((w) => w.threadId === threadId);
    if (handle === undefined) throw new Error(`no worker with thread ID ${threadId}`);
    return handle.remote.heapSnapshot(directory);
  }

  async execute(signal: AbortSignal, stores: StoreProvider, mode: PipelineMode, options: ExecuteOptions = {}): Promise<CheckedPipelineResult> {
    if (this.#destroyed) throw new PipelineError('render', 'the worker pool has been destroyed', undefined, 'POOL_UNAVAILABLE');
    signal.throwIfAborted();
    this.#stats.executions++;
    this.#replicas.follow(stores, this.#registry.handles());
    const target = stores.version;
    const work = this.#renderAt(signal, stores, target, mode, options);
    // Leadership loss must not kill a worker (and its replica): a render already running finishes
    // in the background, holding its worker's lease, and its result is dropped.
    return raceAbort(work, signal);
  }

  /**
   * Terminates one worker (the preferred one by default), e.g. to recycle a thread that grew too
   * large. A render running on it fails with phase `render`; piscina starts a replacement, which
   * the next execute fully syncs. Resolves once the thread has exited.
   */
  async terminateWorker(threadId: number | undefined = this.#preferredThread): Promise<boolean> {
    const thread = this.#pool.threads.find((t) => t.threadId === threadId);
    if (thread === undefined) return false;
    await thread.terminate();
    return true;
  }

  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#leases.close();
    this.#spares.close();
    this.#registry.close();
    await this.#pool.destroy();
  }

  /**
   * Leases a worker, renders there, and ends the lease once the last task settled, also when
   * `signal` aborted meanwhile. The wait for a free worker is bounded: a leased worker is released
   * within renderTimeoutMs (its task's timer replaces it), and a replacement starts within
   * startTimeoutMs.
   */
  async #renderAt(signal: AbortSignal, stores: StoreProvider, target: number, mode: PipelineMode, options: ExecuteOptions): Promise<CheckedPipelineResult> {
    const lease = await this.#leases.acquire(this.#preferredThread, signal, this.#timeoutMs + this.#startTimeoutMs);
    let caughtUp: Promise<void> | undefined;
    try {
      const result = await this.#renderOn(lease, signal, stores, target, mode, options);
      // A spare that holds nothing yet (new, replaced, other stores) or lags far is synced before
      // the result is handed over, as it was in the first pool; the others only later.
      caughtUp = this.#spares.executed(stores);
      await caughtUp;
      return result;
    } finally {
      this.#leases.release(lease);
      if (caughtUp === undefined) void this.#spares.executed(stores);
    }
  }

  async #renderOn(lease: Lease, signal: AbortSignal, stores: StoreProvider, target: number, mode: PipelineMode, options: ExecuteOptions): Promise<CheckedPipelineResult> {
    let dispatchMs = 0;
    const timed: Timed = (fn) => {
      const t0 = this.#clock.monotonic();
      try {
        return fn();
      } finally {
        dispatchMs += this.#clock.monotonic() - t0;
      }
    };
    // Only the leased worker is brought to the stores before its render: mostly by the changes
    // riding on its task, over its control channel when it needs a template set or a full sync.
    // The others catch up later (spare-sync.ts); whoever leases one syncs it first. A task that
    // lands on a worker that is behind gets a stale answer, and that worker is synced before the retry.
    const own = this.#registry.get(lease.threadId);
    let riding: RenderTask['sync'];
    if (own !== undefined) {
      await this.#replicas.settled(own);
      riding = timed(() => this.#replicas.riding(own, stores, target));
      if (riding === undefined) await this.#replicas.sync(own, stores, target, timed);
    }
    const renderId = randomUUID();
    const baselineRef = options.baseline === undefined ? undefined : this.#outputs.idOf(options.baseline);
    let task: RenderTask = {
      renderId,
      templateSetHash: this.#set.hash,
      storeVersion: target,
      mode,
      ...(baselineRef !== undefined ? { baselineRef } : options.baseline !== undefined ? { baseline: options.baseline } : {}),
      receivedOutputs: this.#outputs.receivedOutputs(),
      ...(options.exclusions === undefined ? {} : { exclusions: options.exclusions }),
      ...(riding === undefined ? {} : { sync: riding }),
    };
    for (let attempt = 0; ; attempt++) {
      // An aborted execute starts no render; only one already running finishes.
      if (signal.aborted) throw abortError(signal);
      const result = await timed(() => this.#runTask({ ...task, [queueOptionsSymbol]: lease }));
      this.#stats.lastDispatchMs = dispatchMs;
      if ('stale' in result) {
        if (attempt >= MAX_STALE_RETRIES) {
          throw new PipelineError('render', `worker ${result.threadId} could not be brought to store version ${target} (missing ${result.missing})`, undefined, 'WORKER_FAILED');
        }
        this.#stats.staleRetries++;
        // The worker took or left the changes riding on the task: either way its answer tells its version.
        const { sync: sent, ...retry } = task;
        task = retry;
        const answered = this.#registry.get(result.threadId);
        if (answered !== undefined && sent !== undefined) answered.version = result.version;
        if (result.missing === 'baseline') {
          // Another worker (or a replaced one) rendered the baseline: send it by value.
          task = { ...task, baselineRef: undefined, baseline: options.baseline };
        } else {
          // The task reached a worker this execute had not synced (a fresh replacement).
          const handle = await this.#registry.arrival(result.threadId);
          await this.#replicas.sync(handle, stores, target, timed);
        }
        continue;
      }
      if (!result.ok) return toPipelineResult(result, renderId);
      return toPipelineResult(this.#outputs.accept(result, renderId), renderId);
    }
  }

  async #runTask(task: PinnedTask): Promise<RenderTaskResult> {
    const timeout = new AbortController();
    const timer = this.#clock.setTimeout(() => timeout.abort(), this.#timeoutMs);
    this.#inFlight++;
    try {
      const result = await this.#pool.run(task, { signal: timeout.signal });
      if (!('stale' in result)) this.#preferredThread = (result as { threadId?: number }).threadId ?? this.#preferredThread;
      return result;
    } catch (error) {
      if (timeout.signal.aborted) {
        // Aborting the task terminated its worker; piscina starts a replacement.
        throw new PipelineError('render', `render timed out after ${this.#timeoutMs} ms; its worker was replaced`, undefined, 'RENDER_TIMEOUT');
      }
      throw new PipelineError('render', `worker failed: ${(error as Error).message}`, undefined, 'WORKER_FAILED');
    } finally {
      this.#inFlight--;
      this.#clock.clearTimeout(timer);
    }
  }

  /** Whether piscina still runs the thread (it drops a worker as soon as it terminates it). */
  #isRunning(threadId: number): boolean {
    return this.#pool.threads.some((t) => t.threadId === threadId);
  }
}

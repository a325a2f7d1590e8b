// PoolPipeline: the product's PipelineExecutor. Rendering and validation run on a Piscina pool of
// worker threads, each holding a versioned replica of the stores. Per execute the main thread
// ships each worker only the changes since that worker's version (over a comlink control channel
// per worker), then runs a task naming the store version to render. Its cost grows with the
// number of changed objects, never with the size of the stores.
// A crashed or timed-out worker is replaced by piscina; the replacement announces itself, and the
// next execute gives it a full sync.
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { releaseRemote, wrapPort, type Remote } from '../../../worker/channel/comlink-node.js';
import type {
  AuxiliaryFiles,
  RenderSuccess,
  ReusedFiles,
  ControlPortAnnouncement,
  RenderTask,
  RenderTaskResult,
  ReplicaSync,
  TemplateSetSource,
  WorkerControl,
} from '../../../worker/protocol.js';
import { defaultLogger } from '../../core/logger.js';
import { PipelineError, toPipelineResult, type ExecuteOptions, type PipelineExecutor, type PipelineMode, type PipelineResult } from '../pipeline.js';
import type { StoreProvider } from '../../stores/store-provider.js';
import { assertTemplateSetRenders } from '../../template-set/template-check.js';

export interface PoolPipelineOptions {
  readonly templateSet: TemplateSetSource;
  /**
   * Worker threads, kept warm (min = max, no idle timeout).
   * @default min(2, available cores)
   */
  readonly threads?: number;
  /** A render running longer fails with phase `render`, and its worker is replaced. @default 30000 */
  readonly renderTimeoutMs?: number;
  /** How long `create` waits for the workers to come up. @default 30000 */
  readonly startTimeoutMs?: number;
  readonly logger?: Logger;
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
}

interface WorkerHandle {
  readonly threadId: number;
  readonly port: MessagePort;
  readonly remote: Remote<WorkerControl>;
  /** The replica version the worker acknowledged; -1 before its first full sync. */
  version: number;
  templateSetHash: string | null;
  /** Serialises syncs to one worker, so two executes never interleave deltas. */
  busy: Promise<void>;
  /** Resolves when the worker's control port closes (the thread exited). */
  readonly closed: Promise<void>;
}

const MAX_STALE_RETRIES = 3;

export class PoolPipeline implements PipelineExecutor {
  readonly #pool: Piscina<RenderTask, RenderTaskResult>;
  readonly #set: TemplateSetSource;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  readonly #threads: number;
  readonly #workers = new Map<number, WorkerHandle>();
  #provider: StoreProvider | undefined;
  #destroyed = false;
  #arrivalWaiters: (() => void)[] = [];
  /** The first pool error; while workers are starting it means they cannot load. */
  #startupError: Error | undefined;
  #inFlight = 0;
  /**
   * The worker reconcile renders go to while it is idle. Sticking to one worker keeps its
   * caches (recent outputs, compiled fragments) warm; the others are synced for fail-over.
   */
  #preferredThread: number | undefined;
  /** Render IDs of this pool's outputs, by the identity of their auxiliary files object. */
  readonly #outputIds = new WeakMap<object, string>();
  /**
   * The last output received from each worker: the worker leaves files equal to these out of
   * its next result, and they are put back here (one output per worker is held).
   */
  readonly #received = new Map<number, { readonly renderId: string; readonly output: { readonly haproxyConfig: string; readonly auxiliaryFiles: AuxiliaryFiles } }>();
  #stats = { executions: 0, fullSyncs: 0, deltaSyncs: 0, changesShipped: 0, staleRetries: 0, workersReplaced: 0, lastDispatchMs: 0, filesReused: 0 };

  /** Validates the template set on the main thread, then starts the pool and waits for its workers. */
  static async create(options: PoolPipelineOptions): Promise<PoolPipeline> {
    // A worker module that throws at load makes the next run() hang, so a bad template set
    // must be refused here, before any worker sees it.
    assertTemplateSetRenders(options.templateSet);
    const pipeline = new PoolPipeline(options);
    await pipeline.#awaitWorkers(options.startTimeoutMs ?? 30_000);
    return pipeline;
  }

  private constructor(options: PoolPipelineOptions) {
    this.#set = options.templateSet;
    this.#timeoutMs = options.renderTimeoutMs ?? 30_000;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'pool-pipeline' });
    this.#threads = options.threads ?? Math.max(1, Math.min(2, availableParallelism()));
    if (!Number.isInteger(this.#threads) || this.#threads < 1) throw new TypeError(`threads must be a positive integer, got ${String(options.threads)}`);
    const { filename, execArgv } = workerEntry();
    this.#pool = new Piscina<RenderTask, RenderTaskResult>({
      filename,
      execArgv,
      minThreads: this.#threads,
      maxThreads: this.#threads,
      idleTimeout: Infinity,
      // With 'sync' atomics an idle worker blocks in Atomics.wait: its event loop stops, so
      // comlink messages go unanswered and its log lines are never flushed.
      atomics: 'disabled',
      concurrentTasksPerWorker: 1,
      loadBalancer: (_task, workers) => {
        const idle = workers.filter((w) => w.currentUsage === 0 && !w.terminating && !w.destroyed);
        return idle.find((w) => w.id === this.#preferredThread) ?? idle[0] ?? null;
      },
    });
    this.#pool.on('message', (message: unknown) => this.#onWorkerMessage(message));
    // A control port closes when its thread exits, however it exits: that retires the handle.
    // (piscina's 'workerDestroy' reports threadId -1 for a thread that already exited.)
    this.#pool.on('error', (error: unknown) => {
      this.#startupError ??= error instanceof Error ? error : new Error(String(error));
      this.#logger.error({ err: error }, 'worker pool error');
      this.#wakeWaiters();
    });
  }

  get stats(): PoolPipelineStats {
    return { ...this.#stats };
  }

  get threads(): number {
    return this.#threads;
  }

  /** Render tasks handed to the pool and not yet settled. */
  get rendersInFlight(): number {
    return this.#inFlight;
  }

  /** Replica version and heap of each worker, for diagnostics and benchmarks. */
  async workerStatus(): Promise<{ threadId: number; version: number; heapUsedBytes: number }[]> {
    return Promise.all(
      [...this.#workers.values()].map(async (w) => {
        const status = await w.remote.status();
        return { threadId: w.threadId, version: status.version, heapUsedBytes: status.heapUsedBytes };
      }),
    );
  }

  async execute(signal: AbortSignal, stores: StoreProvider, mode: PipelineMode, options: ExecuteOptions = {}): Promise<PipelineResult> {
    if (this.#destroyed) throw new PipelineError('render', 'the worker pool has been destroyed');
    signal.throwIfAborted();
    this.#stats.executions++;
    if (this.#provider !== stores) {
      // A different store provider: every replica describes other stores now.
      this.#provider = stores;
      for (const w of this.#workers.values()) w.version = -1;
    }
    const target = stores.version;
    const work = this.#renderAt(stores, target, mode, options);
    // Leadership loss must not kill a worker (and its replica): the render finishes in the
    // background and its result is dropped.
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
    for (const w of this.#workers.values()) this.#release(w);
    this.#workers.clear();
    await this.#pool.destroy();
  }

  async #renderAt(stores: StoreProvider, target: number, mode: PipelineMode, options: ExecuteOptions): Promise<PipelineResult> {
    let dispatchMs = 0;
    const timed = <T>(fn: () => T): T => {
      const t0 = performance.now();
      try {
        return fn();
      } finally {
        dispatchMs += performance.now() - t0;
      }
    };
    // Only the worker the task will go to is waited for; the others catch up in the background
    // (syncs to one worker are serialised, so they stay in order), and are awaited only after
    // the render, so that their main-thread time still counts in this execute's dispatch time.
    // A task that lands on a worker that is behind gets a stale answer, and that worker is
    // synced before the retry.
    const preferred = this.#preferredThread === undefined ? undefined : this.#workers.get(this.#preferredThread);
    const waited: Promise<void>[] = [];
    const background: Promise<unknown>[] = [];
    for (const w of this.#workers.values()) {
      const sync = this.#syncWorker(w, stores, target, timed);
      if (preferred === undefined || w === preferred) waited.push(sync);
      else background.push(sync.catch((error: unknown) => this.#logger.warn({ err: error, threadId: w.threadId }, 'sync of a spare worker failed')));
    }
    await Promise.all(waited);
    const renderId = randomUUID();
    const baselineRef = options.baseline === undefined ? undefined : this.#outputIds.get(options.baseline.auxiliaryFiles);
    let task: RenderTask = {
      renderId,
      templateSetHash: this.#set.hash,
      storeVersion: target,
      mode,
      ...(baselineRef !== undefined ? { baselineRef } : options.baseline !== undefined ? { baseline: options.baseline } : {}),
      receivedOutputs: Object.fromEntries([...this.#received].map(([threadId, { renderId: id }]) => [threadId, id])),
    };
    for (let attempt = 0; ; attempt++) {
      const result = await timed(() => this.#runTask(task));
      await Promise.all(background);
      this.#stats.lastDispatchMs = dispatchMs;
      if ('stale' in result) {
        if (attempt >= MAX_STALE_RETRIES) {
          throw new PipelineError('render', `worker ${result.threadId} could not be brought to store version ${target} (missing ${result.missing})`);
        }
        this.#stats.staleRetries++;
        if (result.missing === 'baseline') {
          // Another worker (or a replaced one) rendered the baseline: send it by value.
          task = { ...task, baselineRef: undefined, baseline: options.baseline };
        } else {
          // The task reached a worker this execute had not synced (a fresh replacement).
          const handle = await this.#handleFor(result.threadId);
          await this.#syncWorker(handle, stores, target, timed);
        }
        continue;
      }
      if (!result.ok) return toPipelineResult(result, renderId);
      const full = this.#restore(result);
      this.#outputIds.set(full.auxiliaryFiles, renderId);
      if (full.threadId !== undefined) {
        this.#received.set(full.threadId, { renderId, output: { haproxyConfig: full.haproxyConfig, auxiliaryFiles: full.auxiliaryFiles } });
      }
      return toPipelineResult(full, renderId);
    }
  }

  /** Puts back the files a worker left out because this thread already held them. */
  #restore(result: RenderSuccess): RenderSuccess {
    const reused = result.reused;
    if (reused === undefined) return result;
    const held = result.threadId === undefined ? undefined : this.#received.get(result.threadId);
    if (held === undefined || held.renderId !== reused.from) {
      throw new PipelineError('render', `worker ${String(result.threadId)} left out files of output ${reused.from}, which the pool does not hold`);
    }
    const aux = { maps: { ...result.auxiliaryFiles.maps }, files: { ...result.auxiliaryFiles.files }, certificates: { ...result.auxiliaryFiles.certificates } };
    for (const id of reused.files) {
      const cut = id.indexOf('/');
      const kind = id.slice(0, cut) as keyof AuxiliaryFiles;
      const name = id.slice(cut + 1);
      const text = held.output.auxiliaryFiles[kind]?.[name];
      if (text === undefined) throw new PipelineError('render', `worker ${String(result.threadId)} reused ${id}, which output ${reused.from} does not have`);
      aux[kind][name] = text;
    }
    this.#stats.filesReused += reused.files.length + (reused.config ? 1 : 0);
    const restored: RenderSuccess & { reused?: ReusedFiles } = { ...result, haproxyConfig: reused.config ? held.output.haproxyConfig : result.haproxyConfig, auxiliaryFiles: aux };
    delete restored.reused;
    return restored;
  }

  async #runTask(task: RenderTask): Promise<RenderTaskResult> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.#timeoutMs);
    this.#inFlight++;
    try {
      const result = await this.#pool.run(task, { signal: timeout.signal });
      if (!('stale' in result)) this.#preferredThread = (result as { threadId?: number }).threadId ?? this.#preferredThread;
      return result;
    } catch (error) {
      if (timeout.signal.aborted) {
        // Aborting the task terminated its worker; piscina starts a replacement.
        throw new PipelineError('render', `render timed out after ${this.#timeoutMs} ms; its worker was replaced`);
      }
      throw new PipelineError('render', `worker failed: ${(error as Error).message}`);
    } finally {
      this.#inFlight--;
      clearTimeout(timer);
    }
  }

  /** Brings one worker to `target`: template set first, then a delta (or a full snapshot). */
  #syncWorker(w: WorkerHandle, stores: StoreProvider, target: number, timed: <T>(fn: () => T) => T): Promise<void> {
    const run = async (): Promise<void> => {
      if (w.templateSetHash !== this.#set.hash) {
        const loaded = await w.remote.loadTemplateSet(this.#set);
        if (!loaded.ok) throw new PipelineError('render', `worker ${w.threadId} refused the template set: ${loaded.message}`);
        w.templateSetHash = this.#set.hash;
      }
      if (w.version === target) return;
      const delta = w.version < 0 ? undefined : timed(() => stores.changesSince(w.version));
      if (delta !== undefined && delta.kind === 'delta') {
        const message: ReplicaSync = delta;
        const ack = await timed(() => w.remote.sync(message));
        this.#stats.deltaSyncs++;
        this.#stats.changesShipped += delta.changes.length;
        if (ack.accepted) {
          w.version = ack.version;
          return;
        }
      }
      const snapshot = timed(() => stores.snapshot());
      const ack = await timed(() => w.remote.sync({ kind: 'full', ...snapshot }));
      this.#stats.fullSyncs++;
      w.version = ack.version;
    };
    // A worker that exits mid-sync never answers: its sync ends with it. If a task then lands on
    // its replacement, the stale-replica answer brings that one up to date.
    const next = w.busy.then(() => Promise.race([run(), w.closed]));
    w.busy = next.catch(() => undefined);
    return next;
  }

  #onWorkerMessage(message: unknown): void {
    if (!isAnnouncement(message)) return;
    if (this.#destroyed) {
      message.port.close();
      return;
    }
    const previous = this.#workers.get(message.threadId);
    if (previous !== undefined) this.#release(previous);
    const remote = wrapPort<WorkerControl>(message.port);
    const closed = new Promise<void>((resolve) =>
      message.port.once('close', () => {
        resolve();
        this.#onWorkerGone(message.threadId, message.port);
      }),
    );
    this.#workers.set(message.threadId, {
      threadId: message.threadId,
      port: message.port,
      remote,
      version: -1,
      templateSetHash: null,
      busy: Promise.resolve(),
      closed,
    });
    this.#preferredThread ??= message.threadId;
    this.#wakeWaiters();
  }

  #wakeWaiters(): void {
    const waiters = this.#arrivalWaiters;
    this.#arrivalWaiters = [];
    for (const wake of waiters) wake();
  }

  #onWorkerGone(threadId: number, port: MessagePort): void {
    const handle = this.#workers.get(threadId);
    if (handle === undefined || handle.port !== port) return;
    this.#workers.delete(threadId);
    this.#received.delete(threadId);
    this.#release(handle);
    if (this.#preferredThread === threadId) this.#preferredThread = this.#workers.keys().next().value;
    if (!this.#destroyed) {
      this.#stats.workersReplaced++;
      this.#logger.warn({ threadId }, 'render worker exited; piscina replaces it and it will be fully synced');
    }
  }

  #release(handle: WorkerHandle): void {
    releaseRemote(handle.remote);
    handle.port.close();
  }

  /** The handle of a worker that ran a task; it may still be announcing itself. */
  async #handleFor(threadId: number): Promise<WorkerHandle> {
    for (let i = 0; i < 1000; i++) {
      const handle = this.#workers.get(threadId);
      if (handle !== undefined) return handle;
      await new Promise<void>((resolve) => this.#arrivalWaiters.push(resolve));
    }
    throw new PipelineError('render', `worker ${threadId} never announced its control channel`);
  }

  async #awaitWorkers(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.#workers.size < this.#threads) {
      const left = deadline - performance.now();
      if (this.#startupError !== undefined) {
        await this.destroy();
        throw new Error(`worker pool did not start: ${this.#startupError.message}`);
      }
      if (left <= 0) {
        await this.destroy();
        throw new Error(`worker pool did not start: ${this.#workers.size} of ${this.#threads} workers came up within ${timeoutMs} ms`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#arrivalWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

function isAnnouncement(message: unknown): message is ControlPortAnnouncement {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === 'haptic.control-port';
}


/** The worker module next to this one: `.ts` under tsx or vitest (loaded through tsx), `.js` once built. */
function workerEntry(): { filename: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const filename = new URL(`../../../worker/pool-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url).href;
  return { filename, execArgv: fromSource ? ['--import', 'tsx'] : [] };
}

/** Resolves or rejects with `work`, or rejects with an AbortError as soon as `signal` aborts. */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('the execute call was aborted', 'AbortError');
}

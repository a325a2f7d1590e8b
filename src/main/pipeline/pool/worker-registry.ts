// WorkerRegistry: one handle per live pool worker. A worker announces its comlink control port at
// load (piscina re-emits it as the pool's 'message' event); its handle is retired when that port
// closes, however the thread exited. `create` waits here for the workers to come up, and a task
// answered by a replacement that is still announcing itself waits here for its arrival.
// Subscribes: the pool's 'message' and 'error' events, each control port's 'close'.
import type { EventEmitter } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import type { Logger } from 'pino';
import { releaseRemote, wrapPort, type Remote } from '../../../worker/channel/comlink-node.js';
import type { ControlPortAnnouncement, WorkerControl } from '../../../worker/protocol.js';
import type { Clock } from '../../core/clock.js';
import { PipelineError } from '../../core/errors.js';

export interface WorkerHandle {
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

export interface WorkerRegistryOptions {
  readonly logger: Logger;
  /** The start-up deadline. */
  readonly clock: Clock;
  /** A worker announced itself: one of the first, or a replacement. */
  readonly onArrived: (threadId: number) => void;
  /** A worker's thread exited and its handle is gone. */
  readonly onRetired: (threadId: number) => void;
}

export class WorkerRegistry {
  readonly #workers = new Map<number, WorkerHandle>();
  readonly #options: WorkerRegistryOptions;
  #arrivalWaiters: (() => void)[] = [];
  /** The first pool error; while workers are starting it means they cannot load. */
  #startupError: Error | undefined;
  #closed = false;
  #retired = 0;

  constructor(pool: EventEmitter, options: WorkerRegistryOptions) {
    this.#options = options;
    pool.on('message', (message: unknown) => this.#onWorkerMessage(message));
    pool.on('error', (error: unknown) => {
      this.#startupError ??= error instanceof Error ? error : new Error(String(error));
      options.logger.error({ err: error }, 'worker pool error');
      this.#wakeWaiters();
    });
  }

  /** Workers whose thread exited while the registry was open; piscina replaced each. */
  get retired(): number {
    return this.#retired;
  }

  get(threadId: number): WorkerHandle | undefined {
    return this.#workers.get(threadId);
  }

  handles(): IterableIterator<WorkerHandle> {
    return this.#workers.values();
  }

  /** The longest-registered worker, if any. */
  firstThreadId(): number | undefined {
    return this.#workers.keys().next().value;
  }

  /** The handle of a worker that ran a task; it may still be announcing itself. */
  async arrival(threadId: number): Promise<WorkerHandle> {
    for (let i = 0; i < 1000; i++) {
      const handle = this.#workers.get(threadId);
      if (handle !== undefined) return handle;
      await new Promise<void>((resolve) => this.#arrivalWaiters.push(resolve));
    }
    throw new PipelineError('render', `worker ${threadId} never announced its control channel`, undefined, 'WORKER_FAILED');
  }

  /** Resolves once `threads` workers have announced themselves; rejects on a pool error or the deadline. */
  async awaitStart(threads: number, timeoutMs: number): Promise<void> {
    const clock = this.#options.clock;
    const deadline = clock.monotonic() + timeoutMs;
    while (this.#workers.size < threads) {
      const left = deadline - clock.monotonic();
      if (this.#startupError !== undefined) throw new Error(`worker pool did not start: ${this.#startupError.message}`);
      if (left <= 0) throw new Error(`worker pool did not start: ${this.#workers.size} of ${threads} workers came up within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = clock.setTimeout(resolve, left);
        this.#arrivalWaiters.push(() => {
          clock.clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Releases every control channel; announcements that still arrive are refused. */
  close(): void {
    this.#closed = true;
    for (const w of this.#workers.values()) release(w);
    this.#workers.clear();
  }

  #onWorkerMessage(message: unknown): void {
    if (!isAnnouncement(message)) return;
    if (this.#closed) {
      message.port.close();
      return;
    }
    const previous = this.#workers.get(message.threadId);
    if (previous !== undefined) release(previous);
    const remote = wrapPort<WorkerControl>(message.port);
    // A control port closes when its thread exits, however it exits: that retires the handle.
    // (piscina's 'workerDestroy' reports threadId -1 for a thread that already exited.)
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
    this.#options.onArrived(message.threadId);
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
    release(handle);
    this.#options.onRetired(threadId);
    if (!this.#closed) {
      this.#retired++;
      this.#options.logger.warn({ threadId }, 'render worker exited; piscina replaces it and it will be fully synced');
    }
  }
}

function release(handle: WorkerHandle): void {
  releaseRemote(handle.remote);
  handle.port.close();
}

function isAnnouncement(message: unknown): message is ControlPortAnnouncement {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === 'haptic.control-port';
}

// WorkerLeases: which pool worker each execute renders on. An execute leases one idle worker (the
// sticky one while it is idle) before it syncs anything, syncs only that one before its render,
// and hands piscina a task pinned to it (`pick` is the pool's load balancer); the lease ends when
// the execute's last task settles. A render left running by an aborted execute keeps its lease,
// so the next execute renders on another worker instead of queueing behind it, and waits only
// when every worker is leased: for the first lease to end or a replacement worker to arrive.
import { queueOptionsSymbol, type PiscinaTask } from 'piscina';
import { abortError } from '../../core/async.js';
import type { Clock } from '../../core/clock.js';
import { PipelineError } from '../../core/errors.js';

/** One execute's claim on a worker: its tasks run there, and no other execute's do. */
export interface Lease {
  /** Moved by `pick` when the worker exited before the task reached it. */
  threadId: number;
}

/** What the load balancer reads of a piscina worker. */
export interface BalancedWorker {
  readonly id: number;
  readonly currentUsage: number;
  readonly terminating: boolean;
  readonly destroyed: boolean;
}

export interface WorkerLeasesOptions {
  /** Thread IDs of the workers an execute can sync now (announced, still run by piscina), oldest first. */
  readonly available: () => readonly number[];
  /** Whether piscina still runs the thread, perhaps still starting. */
  readonly running: (threadId: number) => boolean;
  /** The deadline of a wait for a free worker. */
  readonly clock: Clock;
}

export class WorkerLeases {
  readonly #options: WorkerLeasesOptions;
  /**
   * Invariant: at most one lease per thread, and a task runs only on its lease's thread, so a
   * thread nobody leases runs no render.
   */
  readonly #leases = new Map<number, Lease>();
  #waiters: (() => void)[] = [];
  #waiting = 0;
  #closed = false;

  constructor(options: WorkerLeasesOptions) {
    this.#options = options;
  }

  /** Executes waiting for a free worker. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Whether an execute holds the worker (it renders there, or is about to). */
  isLeased(threadId: number): boolean {
    return this.#leases.has(threadId);
  }

  /**
   * Leases `preferred` when it is free, else the oldest free worker. When every worker is leased
   * it waits for the first one to be released (or to arrive), up to `timeoutMs`.
   * @throws AbortError when `signal` aborts first; PipelineError POOL_UNAVAILABLE on the deadline or `close`
   */
  async acquire(preferred: number | undefined, signal: AbortSignal, timeoutMs: number): Promise<Lease> {
    const clock = this.#options.clock;
    let deadline: number | undefined;
    for (;;) {
      if (this.#closed) throw new PipelineError('render', 'the worker pool has been destroyed', undefined, 'POOL_UNAVAILABLE');
      if (signal.aborted) throw abortError(signal);
      const free = this.#options.available().filter((id) => !this.#leases.has(id));
      const threadId = preferred !== undefined && free.includes(preferred) ? preferred : free[0];
      if (threadId !== undefined) {
        const lease: Lease = { threadId };
        this.#leases.set(threadId, lease);
        return lease;
      }
      deadline ??= clock.monotonic() + timeoutMs;
      const left = deadline - clock.monotonic();
      if (left <= 0) throw new PipelineError('render', `no worker became free within ${timeoutMs} ms`, undefined, 'POOL_UNAVAILABLE');
      this.#waiting++;
      await this.#nextChange(left, signal);
      this.#waiting--;
    }
  }

  /** Ends a lease (once its last task settled); a waiting execute may take the worker. */
  release(lease: Lease): void {
    if (this.#leases.get(lease.threadId) === lease) this.#leases.delete(lease.threadId);
    this.changed();
  }

  /** A worker arrived or a lease ended: executes waiting for a free worker look again. */
  changed(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** The pool is going away: waiting executes fail with POOL_UNAVAILABLE. */
  close(): void {
    this.#closed = true;
    this.changed();
  }

  /**
   * The pool's load balancer. A task runs on its lease's worker once that one is idle. If that
   * worker exited before the task reached it, the task takes (and its lease moves to) an idle
   * worker nobody holds, typically the replacement, whose stale answer then gets it synced.
   */
  pick<W extends BalancedWorker>(task: PiscinaTask, workers: readonly W[]): W | null {
    const idle = workers.filter((w) => w.currentUsage === 0 && !w.terminating && !w.destroyed);
    const lease = task[queueOptionsSymbol] as Lease | null;
    const held = lease !== null && this.#leases.get(lease.threadId) === lease;
    if (held) {
      const own = idle.find((w) => w.id === lease.threadId);
      // Not offered yet (still starting): piscina offers the task again when it is ready.
      if (own !== undefined || this.#options.running(lease.threadId)) return own ?? null;
    }
    const spare = idle.find((w) => !this.#leases.has(w.id));
    if (spare === undefined) return null;
    if (held) {
      this.#leases.delete(lease.threadId);
      lease.threadId = spare.id;
      this.#leases.set(spare.id, lease);
    }
    return spare;
  }

  /** Resolves when a lease ends or a worker arrives, after `ms`, or when `signal` aborts. */
  #nextChange(ms: number, signal: AbortSignal): Promise<void> {
    const clock = this.#options.clock;
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clock.clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = clock.setTimeout(done, ms, { unref: true });
      signal.addEventListener('abort', done, { once: true });
      this.#waiters.push(done);
    });
  }
}

// Drives a SyntheticCluster's churn at a steady rate: every tick it applies each change due by
// then (so a tick that fires late, because the main thread was held, catches up, as a watcher
// does after a stall), reports each change to a sink and flushes the sink once per tick. The
// demo, the load test and the live-heap benchmark all churn through this one loop.
import { systemClock, type Clock, type TimerHandle } from '../../core/clock.js';
import type { StoreProvider } from '../../stores/store-provider.js';
import type { SyntheticChange, SyntheticCluster } from './synthetic-cluster.js';

/** Where changes are reported: a batch is recorded change by change, then flushed once. */
export interface ChangeSink {
  record(store: string, kind: SyntheticChange['kind']): void;
  flush(): void;
}

export interface ChurnOptions {
  readonly cluster: SyntheticCluster;
  readonly stores: StoreProvider;
  readonly sink: ChangeSink;
  /** Changes per second. */
  readonly rate: number;
  /** Stop after this many changes. @default unbounded */
  readonly total?: number;
  /** @default 10 */
  readonly tickMs?: number;
  readonly clock?: Clock;
  /**
   * Called once, right after the last change and before its flush, so a caller can note the
   * final store version before the render it triggers can run.
   */
  readonly onLastChange?: () => void;
}

export class SyntheticChurn {
  readonly #options: ChurnOptions;
  readonly #clock: Clock;
  readonly #total: number;
  #applied = 0;
  #startedAt = 0;
  #timer: TimerHandle | undefined;
  #running = false;
  #finished: ((at: number) => void) | undefined;

  constructor(options: ChurnOptions) {
    if (!(options.rate >= 0) || !Number.isFinite(options.rate)) throw new TypeError(`rate must be a non-negative number, got ${String(options.rate)}`);
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#total = options.total ?? Number.POSITIVE_INFINITY;
  }

  /** Changes applied so far. */
  get applied(): number {
    return this.#applied;
  }

  /** Seconds since `start`, on the churn's clock. */
  get elapsedSeconds(): number {
    return (this.#clock.monotonic() - this.#startedAt) / 1000;
  }

  /**
   * Starts ticking. The promise resolves with the monotonic time of the last change once `total`
   * changes were applied (never, without a total, unless `stop` is called: then with the stop time).
   */
  start(): Promise<number> {
    if (this.#running) throw new Error('the churn is already running');
    this.#running = true;
    this.#startedAt = this.#clock.monotonic();
    const done = new Promise<number>((resolve) => (this.#finished = resolve));
    this.#schedule();
    return done;
  }

  stop(): void {
    if (!this.#running) return;
    this.#running = false;
    this.#clock.clearTimeout(this.#timer);
    this.#finished?.(this.#clock.monotonic());
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => this.#tick(), this.#options.tickMs ?? 10);
  }

  #tick(): void {
    if (!this.#running) return;
    const { cluster, stores, sink, rate } = this.#options;
    const due = Math.min(this.#total, Math.floor((rate * (this.#clock.monotonic() - this.#startedAt)) / 1000));
    for (; this.#applied < due; this.#applied++) {
      const change = cluster.change(stores);
      sink.record(change.store, change.kind);
    }
    if (this.#applied >= this.#total) {
      const at = this.#clock.monotonic();
      this.#running = false;
      this.#options.onLastChange?.();
      sink.flush();
      this.#finished?.(at);
      return;
    }
    sink.flush();
    this.#schedule();
  }
}

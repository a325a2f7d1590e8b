// SpareSync: when the workers no execute renders on (the spares) catch up with the stores. They
// exist for fail-over and for renders that find the rendering worker busy, and an execute leasing
// one syncs it first anyway, so they need not follow every change: syncing them on every execute
// cost the main thread a round trip per spare and change. A spare is synced in the background
// once it falls `maxLag` store versions behind (at once for a new or replaced worker, which holds
// nothing yet), else within `delayMs` of the first execute it missed, with every change since in
// one delta. So a fail-over render first syncs at most that much.
// Subscribes: one timer while a spare is behind.
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { StoreProvider } from '../../stores/store-provider.js';
import type { WorkerHandle } from './worker-registry.js';

export interface SpareSyncOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The workers no execute holds now. */
  readonly spares: () => Iterable<WorkerHandle>;
  /** Brings one worker to the stores' version (replica-sync.ts). */
  readonly sync: (w: WorkerHandle, stores: StoreProvider, target: number) => Promise<void>;
  /** @default 200 */
  readonly delayMs?: number;
  /** Store versions a spare may lag before it is synced at once. @default 256, at most half the change log */
  readonly maxLag?: number;
}

export class SpareSync {
  readonly #options: SpareSyncOptions;
  readonly #delayMs: number;
  #stores: StoreProvider | undefined;
  #timer: TimerHandle | undefined;
  /** Spares this class is syncing now. */
  readonly #inFlight = new WeakSet<WorkerHandle>();
  #closed = false;

  constructor(options: SpareSyncOptions) {
    this.#options = options;
    this.#delayMs = options.delayMs ?? 200;
  }

  /**
   * An execute rendered `stores`: spares far behind are synced now (the promise settles when
   * they are; it never rejects), the others within `delayMs`.
   */
  async executed(stores: StoreProvider): Promise<void> {
    if (this.#closed) return;
    this.#stores = stores;
    const maxLag = Math.min(this.#options.maxLag ?? 256, Math.floor(stores.changeLogCapacity / 2));
    let behind = false;
    const now: Promise<void>[] = [];
    for (const w of this.#options.spares()) {
      if (this.#inFlight.has(w) || (w.version >= 0 && stores.version - w.version <= maxLag)) behind ||= w.version < stores.version;
      else now.push(this.#sync(w, stores));
    }
    if (behind && this.#timer === undefined) this.#timer = this.#options.clock.setTimeout(() => this.#due(), this.#delayMs, { unref: true });
    await Promise.all(now);
  }

  /** Stops the timer; nothing is synced after. */
  close(): void {
    this.#closed = true;
    this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #due(): void {
    this.#timer = undefined;
    const stores = this.#stores;
    if (this.#closed || stores === undefined) return;
    for (const w of this.#options.spares()) if (!this.#inFlight.has(w) && w.version < stores.version) void this.#sync(w, stores);
  }

  #sync(w: WorkerHandle, stores: StoreProvider): Promise<void> {
    this.#inFlight.add(w);
    return this.#options
      .sync(w, stores, stores.version)
      .catch((error: unknown) => this.#options.logger.warn({ err: error, threadId: w.threadId }, 'sync of a spare worker failed'))
      .finally(() => this.#inFlight.delete(w));
  }
}

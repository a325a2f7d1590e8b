// EndpointLatency (the Deployer's, leader only): endpoint-change-to-applied latency. An endpoint
// update is recorded with the store version current when it is seen and its event time; applying
// a render of store version V reports the time since the earliest record at or below V.
// Subscribes (in watch, leader-only, lossy: a missed update only costs a sample): resource.index.updated
// Publishes: nothing (calls `onApplied`)
import type { EventBus } from '../bus/event-bus.js';
import type { Clock } from '../core/clock.js';
import type { ControllerEvent } from '../events/events.js';

export interface EndpointLatencyOptions {
  /** The store provider's version now. */
  readonly storeVersion: () => number;
  /** Receives each observation, in seconds. */
  readonly onApplied: (seconds: number) => void;
  readonly clock: Clock;
  /** The store whose updates are endpoint changes. @default 'endpointslices' */
  readonly endpointStore?: string;
  /** @default 1024 */
  readonly capacity?: number;
}

interface ChangeRecord {
  version: number;
  /** Event time (ms since the epoch) of the earliest update merged into this record. */
  readonly at: number;
}

/**
 * Records are kept in version order (versions only grow); a flood between two renders keeps at
 * most `capacity` records, merging the newest ones (the earliest time survives).
 */
export class EndpointLatency {
  readonly #storeVersion: () => number;
  readonly #onApplied: (seconds: number) => void;
  readonly #clock: Clock;
  readonly #endpointStore: string;
  readonly #capacity: number;
  /** Ascending by version; `#head` is the oldest not yet applied. */
  #records: ChangeRecord[] = [];
  #head = 0;

  constructor(options: EndpointLatencyOptions) {
    this.#storeVersion = options.storeVersion;
    this.#onApplied = options.onApplied;
    this.#clock = options.clock;
    this.#endpointStore = options.endpointStore ?? 'endpointslices';
    this.#capacity = options.capacity ?? 1024;
    if (!Number.isInteger(this.#capacity) || this.#capacity < 1) throw new TypeError(`capacity must be a positive integer, got ${String(options.capacity)}`);
  }

  /** Records pending changes. */
  get size(): number {
    return this.#records.length - this.#head;
  }

  /** An endpoint update was seen; `at` is its event time. */
  seen(at: number): void {
    const version = this.#storeVersion();
    const last = this.#records[this.#records.length - 1];
    if (this.size > 0 && last !== undefined) {
      // Already covered: the same version, recorded earlier.
      if (last.version >= version) return;
      if (this.size >= this.#capacity) {
        last.version = version;
        return;
      }
    }
    this.#records.push({ version, at });
  }

  /** Records endpoint updates (initial-sync ones excluded) until `term` aborts. */
  async watch(bus: EventBus<ControllerEvent>, term: AbortSignal): Promise<void> {
    const updates = bus.subscribe('endpoint-latency', { types: ['resource.index.updated'], leaderOnly: true, lossy: true, bufferSize: 1024 });
    try {
      for (;;) {
        const event = await updates.next(term);
        if (event === undefined) return;
        if (event.resourceTypeName === this.#endpointStore && !event.changeStats.isInitialSync) this.seen(event.timestamp);
      }
    } finally {
      updates.close();
    }
  }

  /** A render of `storeVersion` was applied now: reports the seconds since the earliest change it includes, if any is new. */
  applied(storeVersion: number): void {
    const seconds = this.#since(storeVersion, this.#clock.now());
    if (seconds !== undefined) this.#onApplied(seconds);
  }

  #since(storeVersion: number, now: number): number | undefined {
    let earliest: number | undefined;
    while (this.#head < this.#records.length) {
      const record = this.#records[this.#head] as ChangeRecord;
      if (record.version > storeVersion) break;
      earliest = earliest === undefined ? record.at : Math.min(earliest, record.at);
      this.#head++;
    }
    if (this.#head > 64 && this.#head * 2 > this.#records.length) {
      this.#records = this.#records.slice(this.#head);
      this.#head = 0;
    }
    return earliest === undefined ? undefined : Math.max(0, now - earliest) / 1000;
  }

  clear(): void {
    this.#records = [];
    this.#head = 0;
  }
}

/** The tracker a Deployer's options ask for: none without `onEndpointChangeApplied`, which needs `storeVersion`. */
export function endpointLatencyFor(
  options: { readonly onEndpointChangeApplied?: (seconds: number) => void; readonly storeVersion?: () => number; readonly endpointStore?: string },
  clock: Clock,
): EndpointLatency | undefined {
  const onApplied = options.onEndpointChangeApplied;
  if (onApplied === undefined) return undefined;
  if (options.storeVersion === undefined) throw new TypeError('onEndpointChangeApplied needs storeVersion');
  return new EndpointLatency({ storeVersion: options.storeVersion, onApplied, clock, ...(options.endpointStore === undefined ? {} : { endpointStore: options.endpointStore }) });
}

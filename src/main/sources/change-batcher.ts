// Turns individual store changes into `resource.index.updated` events, one per store per flush,
// the way a watcher reports a batch of changes it applied. Sources call `record` per change and
// `flush` at the end of a batch (a debounce tick, a synthetic burst).
// Publishes: resource.index.updated
import type { EventBus } from '../bus/event-bus.js';
import { systemClock, type Clock } from '../core/clock.js';
import { newEvent, type ControllerEvent } from '../events/events.js';

type Counts = { created: number; modified: number; deleted: number };

export class ChangeBatcher {
  readonly #bus: EventBus<ControllerEvent>;
  readonly #pending = new Map<string, Counts>();
  readonly #clock: Clock;

  constructor(bus: EventBus<ControllerEvent>, clock: Clock = systemClock) {
    this.#bus = bus;
    this.#clock = clock;
  }

  record(store: string, kind: keyof Counts): void {
    let counts = this.#pending.get(store);
    if (counts === undefined) {
      counts = { created: 0, modified: 0, deleted: 0 };
      this.#pending.set(store, counts);
    }
    counts[kind]++;
  }

  /** Publishes one event per store that changed since the last flush; returns how many. */
  flush(isInitialSync = false): number {
    let published = 0;
    for (const [store, counts] of this.#pending) {
      this.#bus.publish(newEvent('resource.index.updated', { resourceTypeName: store, changeStats: { ...counts, isInitialSync } }, undefined, this.#clock));
      published++;
    }
    this.#pending.clear();
    return published;
  }
}

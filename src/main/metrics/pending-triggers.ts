// PendingTriggers: when each reconciliation trigger was published, kept until it starts, so the
// metrics adapter can observe how long a trigger waited in the Coordinator's mailbox.
// Bounded by design, because coalesced triggers never start: starting a trigger drops every
// older one (the mailbox is FIFO, so nothing older can start afterwards), and past the capacity
// an entry from the middle of the run is evicted (see `#insert`).

export class PendingTriggers {
  readonly #capacity: number;
  /**
   * Coalescible and non-coalescible triggers, by eventId -> timestamp, each in publish order and
   * never longer than #capacity. Kept apart so that a flood of coalescible triggers never evicts
   * a non-coalescible one: the mailbox never replaces those, so they are the ones that wait longest.
   */
  readonly #coalescible = new Map<string, number>();
  readonly #other = new Map<string, number>();

  /** @param capacity entries kept per kind (coalescible or not). @default 4096 */
  constructor(capacity = 4096) {
    if (!Number.isInteger(capacity) || capacity < 2) {
      throw new TypeError(`capacity must be an integer of at least 2, got ${String(capacity)}`);
    }
    this.#capacity = capacity;
  }

  /** Triggers held, both kinds together; never more than twice the capacity. */
  get size(): number {
    return this.#coalescible.size + this.#other.size;
  }

  add(eventId: string, timestamp: number, coalescible: boolean): void {
    this.#insert(coalescible ? this.#coalescible : this.#other, eventId, timestamp);
  }

  /**
   * The timestamp of the trigger that started, or undefined when it is not held (published
   * before this term, or evicted). Forgets it and every trigger published before it.
   */
  take(eventId: string): number | undefined {
    const [own, other] = this.#coalescible.has(eventId) ? [this.#coalescible, this.#other] : [this.#other, this.#coalescible];
    const timestamp = own.get(eventId);
    if (timestamp === undefined) return undefined;
    // Publish order is exact within one map; across the two only timestamps order the entries,
    // and an entry with the same millisecond may be newer, so it stays.
    for (const key of own.keys()) {
      own.delete(key);
      if (key === eventId) break;
    }
    for (const [key, at] of other) {
      if (at >= timestamp) break;
      other.delete(key);
    }
    return timestamp;
  }

  /** Forgets everything: triggers of an earlier leadership term never start. */
  clear(): void {
    this.#coalescible.clear();
    this.#other.clear();
  }

  #insert(map: Map<string, number>, eventId: string, timestamp: number): void {
    map.set(eventId, timestamp);
    if (map.size <= this.#capacity) return;
    // Evict the second oldest. The oldest may be the trigger an idle Coordinator took straight
    // from its mailbox and is about to start while the flood is still being published; the
    // newest is the one coalescing keeps; those in between are the ones coalescing drops.
    const keys = map.keys();
    keys.next();
    const second = keys.next();
    if (second.done !== true) map.delete(second.value);
  }
}

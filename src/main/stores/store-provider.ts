// StoreProvider: the named stores of one controller, one monotonically increasing version, and a
// bounded log of the changes behind each version. Executors read "changes since version v" to
// ship deltas to worker replicas, at a cost proportional to the changes, not the stores' size.
// A reader that fell behind the log's window is told to take a full snapshot instead.
import { IndexedStore, objectKey } from '../../worker/store/indexed-store.js';
import type { KubeObject, StoreChange, StoreDefinition } from '../../worker/protocol.js';

export interface StoreProviderOptions {
  /**
   * Changes kept for delta readers. A reader further behind gets `{ kind: 'full' }`.
   * By default the capacity follows the stores' size: as many changes as there are objects
   * (at least 4,096, at most 200,000). Past that point a delta is no cheaper than a snapshot,
   * and every logged change keeps its object alive, so a larger log only costs memory.
   */
  readonly changeLogCapacity?: number;
}

export type ChangesSince =
  | { readonly kind: 'delta'; readonly fromVersion: number; readonly toVersion: number; readonly changes: StoreChange[] }
  | { readonly kind: 'full'; readonly toVersion: number };

/** A store whose writes are versioned and logged by its provider. */
export class Store extends IndexedStore {
  readonly #record: (change: StoreChange) => void;

  constructor(name: string, indexBy: readonly string[], record: (change: StoreChange) => void) {
    super(name, indexBy);
    this.#record = record;
  }

  /**
   * Inserts or replaces an object and bumps the provider's version. The store keeps the object
   * by reference: callers must not mutate it afterwards.
   */
  override upsert(object: KubeObject, key: string = objectKey(object)): boolean {
    const created = super.upsert(object, key);
    this.#record({ op: 'upsert', store: this.name, key, object });
    return created;
  }

  /** Removes an object by its `namespace/name` key; a missing key changes nothing. */
  override delete(key: string): boolean {
    const removed = super.delete(key);
    if (removed) this.#record({ op: 'delete', store: this.name, key });
    return removed;
  }

  /** Removes every object, one logged delete each. */
  override clear(): void {
    for (const object of [...this.list()]) this.delete(objectKey(object));
  }
}

export class StoreProvider {
  readonly #stores = new Map<string, Store>();
  /** A fixed capacity, or undefined to follow the stores' size. */
  readonly #capacity: number | undefined;
  /** `#log[i]` is the change that produced version `#firstVersion + i`. */
  #log: StoreChange[] = [];
  #firstVersion = 1;
  #version = 0;

  constructor(definitions: readonly Pick<StoreDefinition, 'name' | 'indexBy'>[] = [], options: StoreProviderOptions = {}) {
    const capacity = options.changeLogCapacity;
    if (capacity !== undefined && (!Number.isInteger(capacity) || capacity < 1)) {
      throw new TypeError(`changeLogCapacity must be a positive integer, got ${String(capacity)}`);
    }
    this.#capacity = capacity;
    for (const def of definitions) this.define(def.name, def.indexBy);
  }

  /** Bumped once per change in any store. */
  get version(): number {
    return this.#version;
  }

  /** The oldest version a delta reader may still be at. */
  get oldestDeltaVersion(): number {
    return this.#firstVersion - 1;
  }

  /** Adds a store; defining an existing name with the same index is a no-op. */
  define(name: string, indexBy: readonly string[] = ['metadata.namespace', 'metadata.name']): Store {
    const existing = this.#stores.get(name);
    if (existing !== undefined) {
      if (existing.indexBy.join('\0') !== indexBy.join('\0')) {
        throw new TypeError(`store ${name} is already defined with indexBy [${existing.indexBy.join(', ')}]`);
      }
      return existing;
    }
    const store = new Store(name, indexBy, (change) => this.#append(change));
    this.#stores.set(name, store);
    return store;
  }

  /** The named store; throws a TypeError naming the known stores when it does not exist. */
  store(name: string): Store {
    const store = this.#stores.get(name);
    if (store === undefined) {
      throw new TypeError(`unknown store ${JSON.stringify(name)}; known stores: ${[...this.#stores.keys()].join(', ')}`);
    }
    return store;
  }

  has(name: string): boolean {
    return this.#stores.has(name);
  }

  names(): string[] {
    return [...this.#stores.keys()];
  }

  definitions(): { name: string; indexBy: readonly string[] }[] {
    return [...this.#stores.values()].map((s) => ({ name: s.name, indexBy: s.indexBy }));
  }

  /** Object counts per store. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [name, store] of this.#stores) counts[name] = store.size;
    return counts;
  }

  /**
   * The changes that bring a reader at `version` to the current version, collapsed so each
   * object appears once (its last change). Costs O(changes since `version`).
   */
  changesSince(version: number): ChangesSince {
    if (version > this.#version || version < this.#firstVersion - 1 || !Number.isInteger(version)) {
      return { kind: 'full', toVersion: this.#version };
    }
    const start = version - (this.#firstVersion - 1);
    const raw = this.#log.slice(start);
    return { kind: 'delta', fromVersion: version, toVersion: this.#version, changes: collapse(raw) };
  }

  /** Every object of every store, for a full sync. O(objects). */
  snapshot(): { toVersion: number; stores: Record<string, { indexBy: readonly string[]; objects: KubeObject[] }> } {
    const stores: Record<string, { indexBy: readonly string[]; objects: KubeObject[] }> = {};
    for (const [name, store] of this.#stores) stores[name] = { indexBy: store.indexBy, objects: [...store.list()] };
    return { toVersion: this.#version, stores };
  }

  #append(change: StoreChange): void {
    this.#version++;
    this.#log.push(change);
    // Trim in batches so the amortised cost per change stays O(1).
    if (this.#log.length < 2 * (this.#capacity ?? MIN_ADAPTIVE_CAPACITY)) return;
    const capacity = this.changeLogCapacity;
    if (this.#log.length >= capacity * 2) {
      const drop = this.#log.length - capacity;
      this.#log = this.#log.slice(drop);
      this.#firstVersion += drop;
    }
  }

  /** The change log's current capacity (fixed, or following the number of objects). */
  get changeLogCapacity(): number {
    if (this.#capacity !== undefined) return this.#capacity;
    let objects = 0;
    for (const store of this.#stores.values()) objects += store.size;
    return Math.min(MAX_ADAPTIVE_CAPACITY, Math.max(MIN_ADAPTIVE_CAPACITY, objects));
  }
}

const MIN_ADAPTIVE_CAPACITY = 4096;
const MAX_ADAPTIVE_CAPACITY = 200_000;

/** Keeps the last change per (store, key), in the order of those last changes. */
function collapse(changes: readonly StoreChange[]): StoreChange[] {
  if (changes.length < 2) return [...changes];
  const last = new Map<string, number>();
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as StoreChange;
    last.set(`${c.store}\0${c.key}`, i);
  }
  if (last.size === changes.length) return [...changes];
  const out: StoreChange[] = [];
  for (let i = 0; i < changes.length; i++) {
    const c = changes[i] as StoreChange;
    if (last.get(`${c.store}\0${c.key}`) === i) out.push(c);
  }
  return out;
}

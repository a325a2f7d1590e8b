// StoreProvider: the named stores of one controller, one monotonically increasing version, and a
// bounded log of the changes behind each version. Executors read "changes since version v" to
// ship deltas to worker replicas, at a cost proportional to the changes, not the stores' size.
// A reader that fell behind the log's window is told to take a full snapshot instead.
// Every write is admitted by the store's definition (kind and apiVersion) before it is logged:
// the embedding API, the manifest loader and the sources all write through Store.upsert.
import { IndexedStore, objectKey, type StoreKind } from '../../worker/store/indexed-store.js';
import type { KubeObject, ReplicaStoreSnapshot, StoreChange, StoreDefinition } from '../../worker/protocol.js';

/**
 * What a store is defined by. `kind` and `apiVersion` should always be given (a StoreDefinition):
 * a store without them admits any named object, and no render shows its objects until a
 * template set declares the store's kind.
 */
export type StoreSpec = Pick<StoreDefinition, 'name' | 'indexBy'> & Partial<Pick<StoreDefinition, 'kind' | 'apiVersion'>>;

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

  constructor(name: string, indexBy: readonly string[], record: (change: StoreChange) => void, definition?: StoreKind) {
    super(name, indexBy, definition);
    this.#record = record;
  }

  /**
   * Admits an object, inserts or replaces it, and bumps the provider's version. An object
   * without `kind`/`apiVersion` is stored as a copy carrying the store's; an object of another
   * kind, or without a name, is refused with a StoreRefusal (a TypeError) and nothing changes.
   * The store keeps the object by reference: callers must not mutate it afterwards.
   */
  override upsert(raw: KubeObject, key?: string): boolean {
    const object = this.admit(raw);
    const at = key ?? objectKey(object);
    const created = super.upsert(object, at);
    this.#record({ op: 'upsert', store: this.name, key: at, object });
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

  constructor(definitions: readonly StoreSpec[] = [], options: StoreProviderOptions = {}) {
    const capacity = options.changeLogCapacity;
    if (capacity !== undefined && (!Number.isInteger(capacity) || capacity < 1)) {
      throw new TypeError(`changeLogCapacity must be a positive integer, got ${String(capacity)}`);
    }
    this.#capacity = capacity;
    for (const def of definitions) this.define(def);
  }

  /** Bumped once per change in any store. */
  get version(): number {
    return this.#version;
  }

  /** The oldest version a delta reader may still be at. */
  get oldestDeltaVersion(): number {
    return this.#firstVersion - 1;
  }

  /**
   * Adds a store from its definition; defining an existing store again with the same index (and
   * kind, when both have one) is a no-op that returns it.
   * The `(name, indexBy)` form is kept for callers that only name a store: it returns an existing
   * store, or creates one without a kind (see StoreSpec).
   */
  define(definition: StoreSpec): Store;
  /** @deprecated Pass the whole StoreDefinition (kind and apiVersion included). */
  define(name: string, indexBy?: readonly string[]): Store;
  define(spec: StoreSpec | string, indexBy: readonly string[] = DEFAULT_INDEX): Store {
    const def: StoreSpec = typeof spec === 'string' ? { name: spec, indexBy } : spec;
    const kind = def.kind === undefined ? undefined : { kind: def.kind, apiVersion: def.apiVersion ?? '' };
    if (kind !== undefined && (typeof kind.kind !== 'string' || kind.kind === '' || kind.apiVersion === '')) {
      throw new TypeError(`store ${def.name}: a definition needs both kind and apiVersion, got ${JSON.stringify({ kind: def.kind, apiVersion: def.apiVersion })}`);
    }
    const existing = this.#stores.get(def.name);
    if (existing !== undefined) {
      if (existing.indexBy.join('\0') !== def.indexBy.join('\0')) {
        throw new TypeError(`store ${def.name} is already defined with indexBy [${existing.indexBy.join(', ')}]`);
      }
      if (kind !== undefined) {
        const held = existing.adopt(kind);
        if (held.kind !== kind.kind || held.apiVersion !== kind.apiVersion) {
          throw new TypeError(`store ${def.name} is already defined for ${held.apiVersion} ${held.kind}, not ${kind.apiVersion} ${kind.kind}`);
        }
      }
      return existing;
    }
    const store = new Store(def.name, def.indexBy, (change) => this.#append(change), kind);
    this.#stores.set(def.name, store);
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

  /** Each store's name, index and (when it has one) kind and apiVersion. */
  definitions(): StoreSpec[] {
    return [...this.#stores.values()].map((s) => ({ name: s.name, indexBy: s.indexBy, ...s.definition }));
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

  /** Every object of every store, with each store's definition, for a full sync. O(objects). */
  snapshot(): { toVersion: number; stores: Record<string, ReplicaStoreSnapshot & { objects: KubeObject[] }> } {
    const stores: Record<string, ReplicaStoreSnapshot & { objects: KubeObject[] }> = {};
    for (const [name, store] of this.#stores) stores[name] = { indexBy: store.indexBy, ...store.definition, objects: [...store.list()] };
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

const DEFAULT_INDEX: readonly string[] = ['metadata.namespace', 'metadata.name'];
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

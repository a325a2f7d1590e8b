// A worker's replica of the main thread's stores, at a known version. It applies the deltas the
// main thread ships over the control channel; a delta that does not start at the replica's
// version is refused, which makes the main thread send a full snapshot instead.
// The replica re-checks, it does not trust: each store is rebuilt with the definition the
// snapshot names, every object goes through admission again, and the guard checks it by that
// store's kind before any render reads it. An object admission refuses is not held.
// Each object is held once, in compact form (compact-object.ts): as text until a render reads it,
// so a spare worker that never renders holds text alone.
import { IndexedStore, StoreRefusal } from './indexed-store.js';
import type { KubeObject, ReplicaSync, ReplicaSyncAck } from '../protocol.js';

export class StoreReplica {
  readonly #stores = new Map<string, IndexedStore>();
  /** -1 until the first full sync: a fresh replica can only take a snapshot. */
  #version = -1;
  /** Objects admission refused since the replica started (the main thread admits them first). */
  #refused = 0;

  get version(): number {
    return this.#version;
  }

  get refused(): number {
    return this.#refused;
  }

  store(name: string): IndexedStore | undefined {
    return this.#stores.get(name);
  }

  apply(sync: ReplicaSync): ReplicaSyncAck {
    if (sync.kind === 'full') {
      this.#stores.clear();
      for (const [name, snapshot] of Object.entries(sync.stores)) {
        const { indexBy, kind, apiVersion, objects } = snapshot;
        const store = new IndexedStore(name, indexBy, kind === undefined || apiVersion === undefined ? undefined : { kind, apiVersion }, { dormant: true });
        this.#stores.set(name, store);
        for (const object of objects) this.#upsert(store, object, undefined);
      }
      this.#version = sync.toVersion;
      return { accepted: true, version: this.#version };
    }
    if (sync.fromVersion !== this.#version) return { accepted: false, version: this.#version };
    for (const change of sync.changes) {
      const store = this.#stores.get(change.store);
      if (store === undefined) return { accepted: false, version: (this.#version = -1) };
      if (change.op === 'upsert') this.#upsert(store, change.object, change.key);
      else store.delete(change.key);
    }
    this.#version = sync.toVersion;
    return { accepted: true, version: this.#version };
  }

  /** A refused object replaces nothing: what the key held before is removed, never kept stale. */
  #upsert(store: IndexedStore, object: KubeObject, key: string | undefined): void {
    try {
      store.upsert(object, key);
    } catch (error) {
      if (!(error instanceof StoreRefusal)) throw error;
      this.#refused++;
      if (key !== undefined) store.delete(key);
    }
  }
}

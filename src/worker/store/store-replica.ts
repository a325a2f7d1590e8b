// A worker's replica of the main thread's stores, at a known version. It applies the deltas the
// main thread ships over the control channel; a delta that does not start at the replica's
// version is refused, which makes the main thread send a full snapshot instead.
import { IndexedStore } from './indexed-store.js';
import type { ReplicaSync, ReplicaSyncAck } from '../protocol.js';

export class StoreReplica {
  readonly #stores = new Map<string, IndexedStore>();
  /** -1 until the first full sync: a fresh replica can only take a snapshot. */
  #version = -1;

  get version(): number {
    return this.#version;
  }

  store(name: string): IndexedStore | undefined {
    return this.#stores.get(name);
  }

  apply(sync: ReplicaSync): ReplicaSyncAck {
    if (sync.kind === 'full') {
      this.#stores.clear();
      for (const [name, { indexBy, objects }] of Object.entries(sync.stores)) {
        const store = new IndexedStore(name, indexBy);
        this.#stores.set(name, store);
        for (const object of objects) store.upsert(object);
      }
      this.#version = sync.toVersion;
      return { accepted: true, version: this.#version };
    }
    if (sync.fromVersion !== this.#version) return { accepted: false, version: this.#version };
    for (const change of sync.changes) {
      const store = this.#stores.get(change.store);
      if (store === undefined) return { accepted: false, version: (this.#version = -1) };
      if (change.op === 'upsert') store.upsert(change.object, change.key);
      else store.delete(change.key);
    }
    this.#version = sync.toVersion;
    return { accepted: true, version: this.#version };
  }
}

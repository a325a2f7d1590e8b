// Which cached Ingress entries a store change invalidates. Each entry is registered under the
// dependency keys of the store reads it made (recorded-reads.ts); the stores' change journals
// say which keys changed since the last build, and a changed object marks the entries that read
// it, or that looked it up by index values it now has. When a journal no longer reaches back, or
// a store was replaced, it cannot tell: the builder then starts over.
import type { IndexedStore } from '../store/indexed-store.js';
import type { ModelSource } from './model-source.js';
import { lookupKey, objectDepKey } from './recorded-reads.js';

/** An entry as the dependents see it: its key and the dependency keys it is registered under. */
export interface Dependent {
  readonly key: string;
  readonly deps: readonly string[];
}

export class EntryDependents {
  /** Dependency key -> the key (or keys) of the entries that read it. */
  readonly #dependents = new Map<string, string | Set<string>>();
  /** The stores seen by the last build and their generations then. */
  readonly #stores = new Map<string, { store: IndexedStore | undefined; generation: number }>();

  /** Keys of entries to compute again, from the changes of the stores `names`; undefined when it cannot tell (every entry is then forgotten). */
  invalidate(source: ModelSource, names: readonly string[]): Set<string> | undefined {
    const dirty = new Set<string>();
    let reset = false;
    for (const name of names) {
      const store = source.store(name);
      const known = this.#stores.get(name);
      this.#stores.set(name, { store, generation: store?.generation ?? 0 });
      if (known === undefined || known.store !== store) {
        reset = true;
        continue;
      }
      if (store === undefined || reset) continue;
      const changed = store.changedSince(known.generation);
      if (changed === undefined) {
        reset = true;
        continue;
      }
      for (const key of new Set(changed)) {
        this.#mark(objectDepKey(name, key), dirty);
        const object = store.get(key);
        if (object === undefined) continue;
        const values = store.indexValues(object);
        for (let length = 1; length <= values.length; length++) this.#mark(lookupKey(name, values.slice(0, length)), dirty);
      }
    }
    if (!reset) return dirty;
    this.#dependents.clear();
    return undefined;
  }

  #mark(dep: string, dirty: Set<string>): void {
    const keys = this.#dependents.get(dep);
    if (typeof keys === 'string') dirty.add(keys);
    else if (keys !== undefined) for (const key of keys) dirty.add(key);
  }

  // Most dependency keys have one dependent: it is stored as is, and a Set only when shared.
  register(entry: Dependent): void {
    for (const dep of entry.deps) {
      const keys = this.#dependents.get(dep);
      if (keys === undefined) this.#dependents.set(dep, entry.key);
      else if (typeof keys !== 'string') keys.add(entry.key);
      else if (keys !== entry.key) this.#dependents.set(dep, new Set([keys, entry.key]));
    }
  }

  unregister(entry: Dependent): void {
    for (const dep of entry.deps) {
      const keys = this.#dependents.get(dep);
      if (keys === entry.key) {
        this.#dependents.delete(dep);
      } else if (keys !== undefined && typeof keys !== 'string') {
        keys.delete(entry.key);
        if (keys.size === 1) this.#dependents.set(dep, keys.values().next().value as string);
      }
    }
  }
}

// A list derived from one store, kept in the store's key order between renders and patched from
// its change journal: a render pays for the keys that changed since the previous one (a binary
// search and a splice each), not for the store's size. The guarded reader's lists
// (guarded-lists.ts) and the served Ingresses (routing/served-ingresses.ts) are kept this way.
import { compareKeys, type IndexedStore } from './indexed-store.js';
import { recordReplacements } from './list-replacements.js';
import { lowerBound } from './sorted-search.js';

/** What the list holds for a key, or undefined when the key is not in it (absent, rejected, filtered out). */
export type EntryOf<T> = (key: string, store: IndexedStore) => T | undefined;

export class SortedJournalList<T> {
  readonly #store: IndexedStore;
  readonly #entryOf: EntryOf<T>;
  #generation: number;
  readonly #keys: string[] = [];
  readonly #values: T[] = [];
  /** The values as handed out: the same array until something in the list changes. */
  #snapshot: readonly T[] | undefined;

  /** The list of every key of `store` that `entryOf` keeps, computed whole. */
  constructor(store: IndexedStore, entryOf: EntryOf<T>) {
    this.#store = store;
    this.#entryOf = entryOf;
    this.#generation = store.generation;
    for (const key of [...store.keys()].sort(compareKeys)) {
      const value = entryOf(key, store);
      if (value === undefined) continue;
      this.#keys.push(key);
      this.#values.push(value);
    }
  }

  /**
   * The values in key order, after the changes since the last call; undefined when the journal
   * no longer reaches back (the caller builds the list again). The array is shared: do not mutate it.
   */
  current(): readonly T[] | undefined {
    const store = this.#store;
    if (store.generation !== this.#generation) {
      const changed = store.changedSince(this.#generation);
      if (changed === undefined) return undefined;
      this.#generation = store.generation;
      let touched = false;
      /** Positions of values replaced in place, while no key came or went (undefined after). */
      let replaced: number[] | undefined = [];
      for (const key of new Set(changed)) {
        const at = this.#position(key);
        const present = this.#keys[at] === key;
        const value = this.#entryOf(key, store);
        if (present && value !== undefined) {
          if (this.#values[at] === value) continue;
          this.#values[at] = value;
          replaced?.push(at);
        } else if (present) {
          this.#keys.splice(at, 1);
          this.#values.splice(at, 1);
          replaced = undefined;
        } else if (value !== undefined) {
          this.#keys.splice(at, 0, key);
          this.#values.splice(at, 0, value);
          replaced = undefined;
        } else {
          continue;
        }
        touched = true;
      }
      const previous = this.#snapshot;
      if (touched && previous !== undefined) {
        const snapshot = Object.freeze(this.#values.slice());
        // A key that came or went moved the positions after it: no record, and the old one is dropped.
        recordReplacements(snapshot, previous, replaced);
        this.#snapshot = snapshot;
      } else if (touched) {
        this.#snapshot = undefined;
      }
    }
    this.#snapshot ??= Object.freeze(this.#values.slice());
    return this.#snapshot;
  }

  /** Where `key` is, or would be inserted (binary search). */
  #position(key: string): number {
    return lowerBound(this.#keys, key, compareKeys);
  }
}

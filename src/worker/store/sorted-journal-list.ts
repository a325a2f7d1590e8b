// A list derived from one store, kept in the store's key order between renders and patched from
// its change journal: a render pays for the keys that changed since the previous one (a binary
// search and a splice each), not for the store's size. The guarded reader's lists
// (guarded-lists.ts) and the served Ingresses (routing/served-ingresses.ts) are kept this way.
import { compareKeys, type IndexedStore } from './indexed-store.js';
import { lowerBound } from './sorted-search.js';

/**
 * Per snapshot: the snapshot handed out before it and the positions (ascending) where the two
 * differ, when the changes between them only replaced values (no key came or went). Only the
 * latest snapshot of a list has one, so no chain of older snapshots is kept alive.
 */
const replacements = new WeakMap<readonly unknown[], { readonly previous: readonly unknown[]; readonly at: readonly number[] }>();

/**
 * The positions where `list` holds another value than `previous`, when `list` is a snapshot
 * handed out by a SortedJournalList right after `previous`, with values replaced and no key
 * added or removed; undefined when that is not known (the caller compares the lists itself).
 */
export function replacedSince<T>(list: readonly T[], previous: readonly T[]): readonly number[] | undefined {
  const known = replacements.get(list);
  return known !== undefined && known.previous === previous ? known.at : undefined;
}

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
        replacements.delete(previous);
        const snapshot = Object.freeze(this.#values.slice());
        if (replaced !== undefined) replacements.set(snapshot, { previous, at: replaced.sort((a, b) => a - b) });
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

// A running sum over the Ingress entries of each build, for the budgets the namespaces share
// (output-budget.ts, slot-budget.ts): while everything fits, a build pays for the entries that
// changed since the last one, not for a map per namespace over every entry. The entries of a
// build are in key order (the Ingress list's), so the last build's are found again by a merge:
// the same object is the same size; any other that left is taken out, any new one added in.
// Only identity counts, so the sum is exact even if the order were not kept.
import { compareKeys } from '../store/indexed-store.js';
import { replacedSince } from '../store/list-replacements.js';

interface Keyed {
  readonly key: string;
}

/** Replaced entries handled one by one at most; past this the merge runs. */
const QUICK_LIMIT = 64;

export class EntryTally<E extends Keyed> {
  readonly #sizeOf: (entry: E) => number;
  readonly #left: ((entry: E) => void) | undefined;
  readonly #came: ((entry: E) => void) | undefined;
  #last: readonly E[] = [];
  /** The size of each entry of `#last`; owned, so edited in place. */
  #sizes: number[] = [];
  #total = 0;

  /** `left` and `came` hear of each entry taken out of the sum and put into it. */
  constructor(sizeOf: (entry: E) => number, left?: (entry: E) => void, came?: (entry: E) => void) {
    this.#sizeOf = sizeOf;
    this.#left = left;
    this.#came = came;
  }

  /** The sum of the sizes of `entries`, updated for the entries that changed since the last call. */
  update(entries: readonly E[]): number {
    const last = this.#last;
    if (entries === last) return this.#total;
    const quick = this.#replaced(entries);
    if (quick !== undefined) return quick;
    const sizes = this.#sizes;
    const next = new Array<number>(entries.length);
    let total = this.#total;
    const left: E[] = [];
    const came: E[] = [];
    let j = 0;
    const drop = (): void => {
      total -= sizes[j] as number;
      left.push(last[j] as E);
      j++;
    };
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as E;
      if (last[j] !== entry) {
        while (j < last.length && last[j] !== entry && compareKeys((last[j] as E).key, entry.key) <= 0) drop();
      }
      if (last[j] === entry) {
        next[i] = sizes[j] as number;
        j++;
        continue;
      }
      const size = this.#sizeOf(entry);
      next[i] = size;
      total += size;
      came.push(entry);
    }
    while (j < last.length) drop();
    // All that left first: an entry found out of order leaves and comes back, and is in.
    if (this.#left !== undefined) for (const entry of left) this.#left(entry);
    if (this.#came !== undefined) for (const entry of came) this.#came(entry);
    this.#last = entries;
    this.#sizes = next;
    this.#total = total;
    return total;
  }

  /**
   * The sum when `entries` are the last ones with a few replaced, each by an entry of the same
   * key at its place (what the merge finds then: each replaced one left, its successor came);
   * undefined otherwise. The replaced positions (known from the list, or found by a pointer walk)
   * are sized again in place, instead of the merge.
   */
  #replaced(entries: readonly E[]): number | undefined {
    const last = this.#last;
    if (entries.length !== last.length) return undefined;
    // Entries made from the last ones by replacing a few say where (list-replacements.ts).
    const known = replacedSince(entries, last);
    let at: readonly number[];
    if (known !== undefined) {
      if (known.length > QUICK_LIMIT) return undefined;
      for (const i of known) if ((entries[i] as E).key !== (last[i] as E).key) return undefined;
      at = known;
    } else {
      const found: number[] = [];
      for (let i = 0; i < entries.length; i++) {
        if (entries[i] === last[i]) continue;
        if (found.length === QUICK_LIMIT || (entries[i] as E).key !== (last[i] as E).key) return undefined;
        found.push(i);
      }
      at = found;
    }
    // Sized before anything is edited: a throw leaves the tally as it was.
    const fresh = at.map((i) => this.#sizeOf(entries[i] as E));
    const sizes = this.#sizes;
    let total = this.#total;
    at.forEach((i, k) => {
      total += (fresh[k] as number) - (sizes[i] as number);
      sizes[i] = fresh[k] as number;
    });
    if (this.#left !== undefined) for (const i of at) this.#left(last[i] as E);
    if (this.#came !== undefined) for (const i of at) this.#came(entries[i] as E);
    this.#last = entries;
    this.#sizes = sizes;
    this.#total = total;
    return total;
  }
}

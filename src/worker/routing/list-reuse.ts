// What a walk over a sorted list of objects remembered for each object, found again on the next
// walk by identity: the two lists are merged in order, so a list of 10,000 objects of which one
// changed costs 10,000 pointer comparisons and a few key comparisons, not 10,000 hash lookups.
// The model builder keeps each Ingress's entry this way between builds (model-builder.ts).
import { replacedSince } from '../store/list-replacements.js';

export class ListReuse<O, V> {
  readonly #compare: (a: O, b: O) => number;
  #objects: readonly O[] = [];
  #values: readonly V[] = [];
  /**
   * Whether #values is this object's alone (no caller holds it): then `rememberReplaced` edits
   * it in place. Only a `remember` told so, or a copy made here, gives such an array.
   */
  #owned = false;

  /** `compare` orders the lists (any two objects of one list compare unequal). */
  constructor(compare: (a: O, b: O) => number) {
    this.#compare = compare;
  }

  /**
   * Per element of `list`, the value remembered for the very same object by the last `remember`,
   * or undefined for an object it did not hold. Forgets what it remembered: the caller
   * remembers the new walk's values once it has them, so that a walk cut short leaves nothing stale.
   */
  take(list: readonly O[]): (V | undefined)[] {
    const last = this.#objects;
    const values = this.#values;
    this.forget();
    const out = new Array<V | undefined>(list.length);
    let j = 0;
    for (let i = 0; i < list.length; i++) {
      const object = list[i] as O;
      if (last[j] !== object) {
        // Skip what was removed (it sorts before), then a replaced object (it compares equal).
        while (j < last.length && last[j] !== object && this.#compare(last[j] as O, object) < 0) j++;
        if (j < last.length && last[j] !== object && this.#compare(last[j] as O, object) === 0) j++;
        if (last[j] !== object) continue;
      }
      out[i] = values[j];
      j++;
    }
    return out;
  }

  /**
   * Remembers each object of `list` with the value at its position in `values`. `handOver`: the
   * caller gives `values` up (it keeps no reference and hands it to no one), so a later
   * `rememberReplaced` may edit it in place; otherwise `values` is never modified here.
   */
  remember(list: readonly O[], values: readonly V[], handOver = false): void {
    this.#objects = list;
    this.#values = values;
    this.#owned = handOver;
  }

  /**
   * Remembers `list`, the remembered list with the objects at `positions` (no repeats)
   * replaced: `valueAt` gives the value at each of them, and every other position keeps its
   * remembered value. Costs the positions alone once the values array is this object's (see
   * `remember`), else one copy of it. Forgets everything first, so a throw from `valueAt`
   * leaves nothing remembered (and nothing half-edited that anyone can read).
   */
  rememberReplaced(list: readonly O[], positions: readonly number[], valueAt: (at: number) => V): void {
    if (list.length !== this.#values.length) throw new RangeError(`rememberReplaced: ${list.length} objects for ${this.#values.length} values`);
    const values = (this.#owned ? this.#values : this.#values.slice()) as V[];
    this.forget();
    for (const at of positions) values[at] = valueAt(at);
    this.#objects = list;
    this.#values = values;
    this.#owned = true;
  }

  /**
   * The positions where `list` holds another object than the remembered list, when it is that
   * list with at most `limit` objects replaced, each by one that compares equal (the same
   * length, nothing added or removed); undefined otherwise. At every other position `take`
   * would give the remembered value (`remembered`). Remembers and forgets nothing.
   */
  replaced(list: readonly O[], limit: number): number[] | undefined {
    const last = this.#objects;
    if (list.length !== last.length || list.length !== this.#values.length) return undefined;
    if (list === last) return [];
    // A store list's snapshot knows where it differs from the one before (sorted-journal-list.ts).
    const known = replacedSince(list, last);
    if (known !== undefined) {
      if (known.length > limit) return undefined;
      for (const i of known) if (this.#compare(list[i] as O, last[i] as O) !== 0) return undefined;
      return [...known];
    }
    const at: number[] = [];
    for (let i = 0; i < list.length; i++) {
      if (list[i] === last[i]) continue;
      if (at.length === limit || this.#compare(list[i] as O, last[i] as O) !== 0) return undefined;
      at.push(i);
    }
    return at;
  }

  /**
   * The values of the last `remember` or `rememberReplaced`, by position in its list. Read it
   * before the next of those calls and do not keep it: `rememberReplaced` may edit it in place.
   */
  get remembered(): readonly V[] {
    return this.#values;
  }

  /** Where the remembered list holds `object` itself, or -1 (a binary search: the list is sorted). */
  positionOf(object: O): number {
    const last = this.#objects;
    let lo = 0;
    let hi = last.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#compare(last[mid] as O, object) < 0) lo = mid + 1;
      else hi = mid;
    }
    return last[lo] === object ? lo : -1;
  }

  forget(): void {
    this.#objects = [];
    this.#values = [];
    this.#owned = false;
  }
}

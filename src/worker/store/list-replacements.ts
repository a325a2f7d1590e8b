// Where a list differs from the list it was made from, when it was made by replacing a few of its
// items in place (the same length, nothing added or removed): a store list's snapshot after the
// journal replaced values (sorted-journal-list.ts), the model builder's entries after a quick walk
// (routing/quick-walk.ts). Whoever walked the list before can then visit those positions alone
// instead of comparing every position. Only the latest list made from a list keeps a record,
// and recording one drops the record of the list it was made from, so no chain of older lists
// stays alive.

/** Per list: the list it was made from and the positions (ascending) where the two differ. */
const replacements = new WeakMap<readonly unknown[], { readonly previous: readonly unknown[]; readonly at: readonly number[] }>();

/** Per list made by inserting, removing or replacing items anywhere: the list it was made from and how many items at each end it kept. */
const keptEnds = new WeakMap<readonly unknown[], KeptEnds & { readonly previous: readonly unknown[] }>();

/** A list's first `prefix` and last `suffix` items are those of the list it was made from (the same items, in the same order). */
export interface KeptEnds {
  readonly prefix: number;
  readonly suffix: number;
}

/**
 * Records that `list` is `previous` with the items at `at` replaced, and at no other position
 * (`list` must not be modified afterwards). `at` may be unsorted, with repeats, and may hold
 * positions where the item is in fact the same: they are left out. Undefined `at`: `list` was
 * made from `previous` some other way, and nothing is recorded.
 */
export function recordReplacements<T>(list: readonly T[], previous: readonly T[], at: readonly number[] | undefined): void {
  replacements.delete(previous);
  keptEnds.delete(previous);
  if (at === undefined || list.length !== previous.length) return;
  const differing = [...new Set(at)].filter((i) => list[i] !== previous[i]).sort((a, b) => a - b);
  replacements.set(list, { previous, at: differing });
}

/**
 * The positions (ascending) where `list` holds another item than `previous`, when `list` was
 * recorded as made from `previous`; undefined when that is not known (the caller compares the
 * lists itself).
 */
export function replacedSince<T>(list: readonly T[], previous: readonly T[]): readonly number[] | undefined {
  const known = replacements.get(list);
  return known !== undefined && known.previous === previous ? known.at : undefined;
}

/**
 * The positions (ascending) where `list` and `previous` (of one length) hold other items: none
 * when they are one list, the recorded ones when `list` was recorded as made from `previous`,
 * else found by comparing every position, stopping once more than `limit` are found.
 */
export function replacedPositions<T>(list: readonly T[], previous: readonly T[], limit = Infinity): readonly number[] {
  if (list === previous) return [];
  const known = replacedSince(list, previous);
  if (known !== undefined) return known;
  const at: number[] = [];
  for (let i = 0; i < list.length; i++) if (list[i] !== previous[i] && at.push(i) > limit) break;
  return at;
}

/**
 * Whether `list` is `previous` itself, or was recorded as made from it with a few items replaced,
 * none of them counting (`idle`) before or after: then the items that count are the very items
 * of `previous`, in the same order.
 */
export function replacedOnlyIdle<T>(list: readonly T[], previous: readonly T[], idle: (item: T) => boolean): boolean {
  if (list === previous) return true;
  const at = replacedSince(list, previous);
  if (at === undefined) return false;
  for (const i of at) if (!idle(list[i] as T) || !idle(previous[i] as T)) return false;
  return true;
}

/**
 * Records that `list` (not to be modified afterwards) is `previous` with items inserted, removed
 * or replaced between its first `prefix` and last `suffix` items, which are the items of
 * `previous` at its ends. Drops the record of the list `previous` was made from.
 */
export function recordKeptEnds<T>(list: readonly T[], previous: readonly T[], prefix: number, suffix: number): void {
  replacements.delete(previous);
  keptEnds.delete(previous);
  const max = Math.min(list.length, previous.length);
  if (!(Number.isInteger(prefix) && Number.isInteger(suffix) && prefix >= 0 && suffix >= 0 && prefix + suffix <= max)) return;
  keptEnds.set(list, { previous, prefix, suffix });
}

/**
 * How many items at the start and at the end `list` kept from `previous`, when `list` was
 * recorded as made from it (by replacements or by kept ends); undefined when that is not known.
 * The counts may be short of the longest (items put back as they were), never over it.
 */
export function keptEndsSince<T>(list: readonly T[], previous: readonly T[]): KeptEnds | undefined {
  const ends = keptEnds.get(list);
  if (ends !== undefined) return ends.previous === previous ? ends : undefined;
  const at = replacedSince(list, previous);
  if (at === undefined) return undefined;
  const n = list.length;
  return at.length === 0 ? { prefix: n, suffix: 0 } : { prefix: at[0] as number, suffix: n - 1 - (at[at.length - 1] as number) };
}

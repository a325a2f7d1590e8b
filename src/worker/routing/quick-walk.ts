// The model builder's walk over the Ingress list when the list is the last walk's with a few
// objects replaced by objects of the same key, and a few entries invalidated: only those
// positions are visited, and each visited entry takes its predecessor's place in a copy of the
// last build's entries (a native copy, not a walk that looks at every Ingress; the last build's
// readers keep theirs) and in the remembered values (edited in place: no one else reads them). Anything else
// (an Ingress added, removed or changing class, an entry that may not stay one, too many
// changes) is left to the whole walk, so the entries are those the whole walk gives.
import type { KubeObject } from '../protocol.js';
import { objectKey } from '../store/indexed-store.js';
import type { ListReuse } from './list-reuse.js';
import { recordReplacements } from '../store/list-replacements.js';

/** Positions visited at most; past this the whole walk is cheaper than its bookkeeping. */
const QUICK_LIMIT = 64;

interface WalkedEntry {
  readonly key: string;
  readonly ingress: KubeObject;
}

/** What the last whole or quick walk gave: its entries, and per list position the entry's index among them (-1: none). */
export interface LastWalk<E> {
  readonly entries: readonly E[];
  readonly entryAt: Int32Array;
}

/**
 * The entries of `list`, or undefined to walk it whole. `listed` remembers the last walk (its
 * values: an entry, or `other` for an Ingress of another class); `dirty` are the entries to
 * compute again; `eligible` says whether an Ingress is sure to give an entry when visited
 * (`visit`). On success `listed` remembers this walk.
 */
export function quickWalk<E extends WalkedEntry, X>(
  listed: ListReuse<KubeObject, E | X>,
  last: LastWalk<E> | undefined,
  list: readonly KubeObject[],
  dirty: Iterable<E>,
  eligible: (ingress: KubeObject) => boolean,
  visit: (ingress: KubeObject) => E,
): E[] | undefined {
  if (last === undefined || last.entryAt.length !== list.length) return undefined;
  const positions = listed.replaced(list, QUICK_LIMIT);
  if (positions === undefined) return undefined;
  const remembered = listed.remembered;
  for (const entry of dirty) {
    const at = listed.positionOf(entry.ingress);
    if (at < 0 || remembered[at] !== entry) return undefined;
    positions.push(at);
  }
  if (positions.length > QUICK_LIMIT) return undefined;
  for (const at of positions) {
    const was = remembered[at] as E | X | undefined;
    const ingress = list[at] as KubeObject;
    if (last.entryAt[at] === -1 || (was as E).key !== objectKey(ingress) || !eligible(ingress)) return undefined;
  }
  const entries = last.entries.slice();
  const replaced: number[] = [];
  // The remembered values are edited at these positions alone (list-reuse.ts); cut short by a
  // throw, nothing is remembered and the next walk is a whole one.
  listed.rememberReplaced(list, [...new Set(positions)], (at) => {
    const entry = visit(list[at] as KubeObject);
    const index = last.entryAt[at] as number;
    entries[index] = entry;
    replaced.push(index);
    return entry;
  });
  // The walks over the entries (the budgets' tallies) then visit these positions alone.
  recordReplacements(entries, last.entries, replaced);
  return entries;
}

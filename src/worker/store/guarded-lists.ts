// The guarded reader's `list()` kept between renders: each store's accepted objects (their
// accepted views) in key order, patched from the store's change journal, so listing a store of
// 10,000 objects after one changed costs that one object's verdict, not 10,000 lookups. Kept per
// store while the guard context, the store's kind and the annotation checks stay the same (a
// verdict depends on nothing else); otherwise built again.
import { annotationChecksGeneration } from './annotation-checks.js';
import type { GuardContext } from './guard-context.js';
import type { IndexedStore } from './indexed-store.js';
import { guardObject } from './object-guard.js';
import { SortedJournalList } from './sorted-journal-list.js';
import type { KubeObject } from '../protocol.js';

interface Kept {
  readonly context: GuardContext;
  readonly kind: string | undefined;
  readonly checks: number;
  readonly list: SortedJournalList<KubeObject>;
}

const kept = new WeakMap<IndexedStore, Kept>();

/** The accepted view of every object of `store` the guard accepts, in key order. The array is shared and frozen. */
export function guardedList(store: IndexedStore, context: GuardContext): readonly KubeObject[] {
  const kind = store.definition?.kind;
  const checks = annotationChecksGeneration();
  const known = kept.get(store);
  if (known !== undefined && known.context === context && known.kind === kind && known.checks === checks) {
    const current = known.list.current();
    if (current !== undefined) return current;
  }
  const list = new SortedJournalList<KubeObject>(store, (key, from) => {
    const object = from.get(key);
    if (object === undefined) return undefined;
    const verdict = guardObject(object, context);
    return verdict.ok ? verdict.object : undefined;
  });
  kept.set(store, { context, kind, checks, list });
  return list.current() as readonly KubeObject[];
}

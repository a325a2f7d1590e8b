// The guarded list's snapshots say where they differ from the snapshot before them when only
// values were replaced (sorted-journal-list.ts), and the walks over a store list (list-reuse.ts)
// take that answer instead of comparing every position: after random upserts, deletes and
// reads, the answer is always the positions a comparison finds, it is given whenever no key came
// or went, and the walk reports what it reports over a list compared position by position.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys, IndexedStore, objectKey } from '../../../src/worker/store/indexed-store.js';
import { DEFAULT_CONTEXT } from '../../../src/worker/store/guard-context.js';
import { guardedList } from '../../../src/worker/store/guarded-lists.js';
import { replacedSince } from '../../../src/worker/store/list-replacements.js';
import { ListReuse } from '../../../src/worker/routing/list-reuse.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { ingress, rule } from '../../helpers/cluster.js';

const KIND = { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1' };

const step = fc.record({
  del: fc.boolean(),
  name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
  read: fc.integer({ min: 0, max: 2 }),
  limit: fc.integer({ min: 0, max: 3 }),
});

/** Positions where the lists differ, when they have the same length. */
function differing(list: readonly KubeObject[], last: readonly KubeObject[]): number[] | undefined {
  return list.length === last.length ? list.flatMap((object, i) => (object === last[i] ? [] : [i])) : undefined;
}

describe('store list snapshots and the positions they replaced', () => {
  it('are the positions a comparison finds, known whenever no key came or went, and walked over as a comparison would', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        const store = new IndexedStore('ingresses', undefined, KIND);
        const reuse = new ListReuse<KubeObject, number>((a, b) => compareKeys(objectKey(a), objectKey(b)));
        let previous: readonly KubeObject[] | undefined;
        let older: readonly KubeObject[] | undefined;
        let cameOrWent = false;
        let generation = 0;
        for (const s of steps) {
          const key = `ns/${s.name}`;
          const present = store.get(key) !== undefined;
          if (s.del) {
            if (store.delete(key)) cameOrWent = true;
          } else {
            store.upsert(ingress('ns', s.name, { rules: [rule(`h${++generation}.example.com`, { path: '/', service: 'web' })] }));
            if (!present) cameOrWent = true;
          }
          if (s.read === 0) continue;
          const now = guardedList(store, DEFAULT_CONTEXT);
          if (previous !== undefined && now !== previous) {
            const known = replacedSince(now, previous);
            if (known !== undefined) expect(known).toEqual(differing(now, previous));
            if (!cameOrWent) expect(known).toBeDefined();
            // Only the snapshot right before it.
            if (older !== undefined && older !== previous) expect(replacedSince(now, older)).toBeUndefined();
          }
          if (previous !== undefined) {
            const diff = differing(now, previous);
            const sameKeys = diff !== undefined && diff.every((i) => objectKey(now[i] as KubeObject) === objectKey(previous?.[i] as KubeObject));
            expect(reuse.replaced(now, s.limit)).toStrictEqual(sameKeys && diff.length <= s.limit ? diff : undefined);
          }
          reuse.remember(now, now.map((_, i) => i));
          older = previous;
          previous = now;
          cameOrWent = false;
        }
      }),
      { numRuns: 400 },
    );
  });
});

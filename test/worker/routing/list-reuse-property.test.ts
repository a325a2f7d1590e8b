// ListReuse (the model builder's walk over the Ingresses) against a cold lookup by identity:
// after random insertions, removals and replacements in a sorted list, every object it reports
// remembered is the very object remembered with that value, and every object of the last walk
// still in the list is found.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListReuse } from '../../../src/worker/routing/list-reuse.js';

interface Item {
  readonly key: number;
  readonly version: number;
}

const compare = (a: Item, b: Item): number => a.key - b.key;

const edit = fc.record({ op: fc.constantFrom('insert', 'remove', 'replace'), key: fc.integer({ min: 0, max: 30 }) });

describe('the walk that finds each object of the last walk again', () => {
  it('finds exactly the objects remembered, with their values, after any edits', () => {
    fc.assert(
      fc.property(fc.array(fc.array(edit, { maxLength: 6 }), { minLength: 1, maxLength: 12 }), fc.boolean(), (rounds, cutShort) => {
        const reuse = new ListReuse<Item, string>(compare);
        let list: Item[] = [];
        let version = 0;
        let remembered = new Map<Item, string>();
        for (const edits of rounds) {
          // A new list each round, as the guarded reader hands out: the remembered one is never edited.
          list = [...list];
          for (const { op, key } of edits) {
            const at = list.findIndex((item) => item.key >= key);
            const present = at >= 0 && list[at]?.key === key;
            if (op === 'remove' && present) list.splice(at, 1);
            else if (op === 'replace' && present) list.splice(at, 1, { key, version: ++version });
            else if (op !== 'remove' && !present) list.splice(at < 0 ? list.length : at, 0, { key, version: ++version });
          }
          const found = reuse.take(list);
          expect(found.length).toBe(list.length);
          list.forEach((item, i) => expect(found[i]).toBe(remembered.get(item)));
          if (cutShort && version % 3 === 0) {
            // A walk that did not finish remembers nothing: the next finds nothing.
            remembered = new Map();
            continue;
          }
          const values = list.map((item) => `${item.key}@${item.version}`);
          reuse.remember(list, values);
          remembered = new Map(list.map((item, i) => [item, values[i] as string]));
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });

  it('reports the replaced positions only when the list is the last one with objects replaced by equal ones, and finds each remembered object', () => {
    fc.assert(
      fc.property(fc.array(edit, { maxLength: 6 }), fc.integer({ min: 0, max: 4 }), (edits, limit) => {
        const reuse = new ListReuse<Item, string>(compare);
        const last = Array.from({ length: 12 }, (_, i) => ({ key: i * 3, version: 0 }));
        reuse.remember(last, last.map((item) => `${item.key}`));
        last.forEach((item, i) => expect(reuse.positionOf(item)).toBe(i));
        expect(reuse.positionOf({ key: 3, version: 0 })).toBe(-1);
        const list = [...last];
        let version = 0;
        for (const { op, key } of edits) {
          const at = list.findIndex((item) => item.key >= key);
          const present = at >= 0 && list[at]?.key === key;
          if (op === 'remove' && present) list.splice(at, 1);
          else if (op === 'replace' && present) list.splice(at, 1, { key, version: ++version });
          else if (op !== 'remove' && !present) list.splice(at < 0 ? list.length : at, 0, { key, version: ++version });
        }
        const differing = list.length === last.length ? list.flatMap((item, i) => (item === last[i] ? [] : [i])) : undefined;
        const sameKeys = differing !== undefined && differing.every((i) => list[i]?.key === last[i]?.key);
        expect(reuse.replaced(list, limit)).toStrictEqual(sameKeys && differing.length <= limit ? differing : undefined);
      }),
      { numRuns: 500, seed: 23 },
    );
  });
});

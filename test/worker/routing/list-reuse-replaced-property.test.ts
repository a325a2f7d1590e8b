// ListReuse.rememberReplaced (the quick walk's edit of the remembered values, in place once the
// array is its own) against remembering a fresh copy each time: after any mix of whole walks,
// quick walks and walks cut short by a throw, `take` and `remembered` give what the copies give,
// and an array a caller still holds (remembered without handing it over) is never modified.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListReuse } from '../../../src/worker/routing/list-reuse.js';

interface Item {
  readonly key: number;
  readonly version: number;
}

const compare = (a: Item, b: Item): number => a.key - b.key;

const LENGTH = 10;

const step = fc.oneof(
  fc.record({ kind: fc.constant('whole' as const), handOver: fc.boolean() }),
  fc.record({ kind: fc.constant('quick' as const), at: fc.uniqueArray(fc.integer({ min: 0, max: LENGTH - 1 }), { maxLength: 4 }), throws: fc.boolean() }),
);

describe('the remembered values edited at the replaced positions', () => {
  it('gives after any whole and quick walks what remembering a fresh copy gives, and never edits an array a caller holds', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        const reuse = new ListReuse<Item, string>(compare);
        let list: Item[] = Array.from({ length: LENGTH }, (_, key) => ({ key, version: 0 }));
        let version = 0;
        /** What a ListReuse that copies every time remembers: undefined once it forgot. */
        let expected: string[] | undefined;
        /** Arrays handed to `remember` and kept, with their content then. */
        const held: { readonly array: readonly string[]; readonly content: readonly string[] }[] = [];
        for (const s of steps) {
          if (s.kind === 'whole' || expected === undefined) {
            const values = list.map((item) => `${item.key}@${item.version}`);
            reuse.remember(list, values, s.kind === 'whole' && s.handOver);
            if (!(s.kind === 'whole' && s.handOver)) held.push({ array: values, content: [...values] });
            expected = [...values];
            continue;
          }
          const next = [...list];
          for (const at of s.at) next[at] = { key: at, version: ++version };
          const thrown = s.throws && s.at.length > 0;
          let visited = 0;
          const call = (): void => {
            reuse.rememberReplaced(next, s.at, (at) => {
              if (thrown && ++visited === s.at.length) throw new Error('cut short');
              return `${at}@${(next[at] as Item).version}`;
            });
          };
          if (thrown) {
            expect(call).toThrow('cut short');
            expected = undefined;
          } else {
            call();
            expected = next.map((item, i) => (s.at.includes(i) ? `${item.key}@${item.version}` : (expected as string[])[i] as string));
          }
          list = next;
          if (expected === undefined) {
            expect(reuse.remembered).toStrictEqual([]);
            expect([...reuse.take(list)]).toStrictEqual(new Array(LENGTH).fill(undefined));
            continue;
          }
          expect([...reuse.remembered]).toStrictEqual(expected);
          expect(reuse.take(list)).toStrictEqual(expected);
          reuse.remember(list, expected, false);
          held.push({ array: expected, content: [...expected] });
          expected = [...expected];
        }
        for (const { array, content } of held) expect([...array]).toStrictEqual(content);
      }),
      { numRuns: 400, seed: 17 },
    );
  });
});

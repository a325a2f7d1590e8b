// A running sum over entries (entry-tally.ts) fed lists made from the last one by replacing a few
// entries, with the replaced positions recorded (list-replacements.ts, as the model builder's
// quick walk records them), or not recorded, or made some other way: after any sequence, the sum
// is the sum of the entries given and the entries it heard leave and come are exactly those that
// left and came.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EntryTally } from '../../../src/worker/routing/entry-tally.js';
import { recordReplacements } from '../../../src/worker/store/list-replacements.js';

interface Entry {
  readonly key: string;
  readonly size: number;
}

const KEYS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

const step = fc.record({
  how: fc.constantFrom('recorded', 'unrecorded', 'rebuilt', 'same'),
  at: fc.array(fc.nat({ max: KEYS.length - 1 }), { maxLength: 3 }),
  sizes: fc.array(fc.nat({ max: 100 }), { minLength: KEYS.length, maxLength: KEYS.length }),
  present: fc.array(fc.boolean(), { minLength: KEYS.length, maxLength: KEYS.length }),
});

describe('a running sum over entries made by replacing a few', () => {
  it('is the sum of the entries given, and hears of exactly the entries that left and came, after any sequence', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 15 }), (steps) => {
        const left: Entry[] = [];
        const came: Entry[] = [];
        const tally = new EntryTally<Entry>((entry) => entry.size, (entry) => left.push(entry), (entry) => came.push(entry));
        let list: readonly Entry[] = [];
        for (const s of steps) {
          const before = list;
          if (s.how === 'rebuilt' || before.length === 0) {
            list = KEYS.flatMap((key, i) => (s.present[i] === true ? [{ key, size: s.sizes[i] as number }] : []));
          } else if (s.how !== 'same') {
            const next = [...before];
            const at = s.at.map((i) => i % next.length);
            for (const i of at) next[i] = { key: (next[i] as Entry).key, size: s.sizes[i] as number };
            if (s.how === 'recorded') recordReplacements(next, before, at);
            list = next;
          }
          left.length = 0;
          came.length = 0;
          expect(tally.update(list)).toBe(list.reduce((sum, entry) => sum + entry.size, 0));
          const now = new Set(list);
          const was = new Set(before);
          expect(new Set(left)).toEqual(new Set(before.filter((entry) => !now.has(entry))));
          expect(new Set(came)).toEqual(new Set(list.filter((entry) => !was.has(entry))));
        }
      }),
      { numRuns: 500 },
    );
  });
});

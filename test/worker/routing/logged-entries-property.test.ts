// Which entries have a log to replay (logged-entries.ts), kept between builds: over any sequence
// of entry lists made from the last one by replacing a few (recorded as the quick walk records
// them, or not), rebuilt, or the same list again, the positions are those a scan of every entry finds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LoggedEntries } from '../../../src/worker/routing/logged-entries.js';
import { recordReplacements } from '../../../src/worker/store/list-replacements.js';

interface Entry {
  readonly log: readonly string[];
}

const entry = fc.boolean().map((logged): Entry => ({ log: logged ? ['a warning'] : [] }));

const step = fc.record({
  how: fc.constantFrom('recorded', 'recorded', 'unrecorded', 'rebuilt', 'same'),
  replace: fc.array(fc.record({ at: fc.nat({ max: 30 }), entry }), { maxLength: 4 }),
  rebuilt: fc.array(entry, { maxLength: 12 }),
});

describe('the entries with a log, kept between builds', () => {
  it('are at the positions a scan of every entry finds, after any sequence of lists', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), fc.array(step, { minLength: 1, maxLength: 15 }), (start, steps) => {
        const logged = new LoggedEntries<Entry>();
        let list: readonly Entry[] = start;
        for (const s of steps) {
          if (s.how === 'rebuilt') list = s.rebuilt;
          else if (s.how !== 'same' && list.length > 0) {
            const next = [...list];
            const at = s.replace.map((r) => r.at % next.length);
            s.replace.forEach((r, k) => (next[at[k] as number] = r.entry));
            if (s.how === 'recorded') recordReplacements(next, list, at);
            list = next;
          }
          expect(logged.positions(list)).toEqual(list.flatMap((e, i) => (e.log.length > 0 ? [i] : [])));
        }
      }),
      { numRuns: 500 },
    );
  });
});

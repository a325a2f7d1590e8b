// The long lines of a file found again from its changed lines: after any sequence of edits, in
// one file or several, they are the lines a scan of the whole text finds, with the same numbers
// and lengths, whether the edit adds, removes or changes lines before, inside or after long ones.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChangedWindows } from '../../../src/worker/render/changed-windows.js';
import { LongLineDeltas } from '../../../src/worker/validate/incremental/long-line-deltas.js';
import { longLines } from '../../../src/worker/validate/line-limits.js';

/** Lines longer than this are recorded (line-limits.ts's WATCHED_LENGTH). */
const WATCHED = 512;

const length = fc.oneof(
  { weight: 6, arbitrary: fc.nat(40) },
  { weight: 2, arbitrary: fc.integer({ min: WATCHED - 2, max: WATCHED + 2 }) },
  { weight: 1, arbitrary: fc.integer({ min: 600, max: 1500 }) },
);

/** An edit of a list of line lengths: `remove` lines at `at` replaced by `insert`. */
const edit = fc.record({ at: fc.nat(40), remove: fc.nat(3), insert: fc.array(length, { maxLength: 3 }), trailing: fc.boolean(), file: fc.nat(1) });

/** A line of `n` characters, told apart from its neighbours by its letter. */
function lineOf(n: number, salt: number): string {
  return String.fromCharCode(97 + (salt % 26)).repeat(n);
}

describe('the long lines of a file found from its changed lines', () => {
  it('are those of a scan of the whole text after every random edit', () => {
    let spliced = 0;
    fc.assert(
      fc.property(fc.array(length, { maxLength: 40 }), fc.array(edit, { minLength: 1, maxLength: 12 }), (start, edits) => {
        const deltas = new LongLineDeltas();
        const windows = new ChangedWindows();
        const files = [start.map((n, i) => lineOf(n, i)), start.map((n, i) => lineOf(n, i + 3)).reverse()];
        const trailing = [true, true];
        let salt = 0;
        for (const e of edits) {
          const lines = files[e.file] as string[];
          lines.splice(Math.min(e.at, lines.length), e.remove, ...e.insert.map((n) => lineOf(n, ++salt)));
          trailing[e.file] = e.trailing;
          windows.clear();
          deltas.begin();
          for (let f = 0; f < files.length; f++) {
            const text = (files[f] as string[]).join('\n') + (trailing[f] === true ? '\n' : '');
            expect(deltas.lines(`maps/${f}.map`, text, windows)).toStrictEqual(longLines(text));
          }
          deltas.end();
        }
        spliced += deltas.spliced;
      }),
      { numRuns: 500, seed: 17 },
    );
    // Most edits were read from the changed lines, not by scanning the text again.
    expect(spliced).toBeGreaterThan(1000);
  });

  it('numbers a long line after the changed lines by the lines they gained', () => {
    const deltas = new LongLineDeltas();
    const windows = new ChangedWindows();
    const long = 'x'.repeat(2000);
    deltas.begin();
    expect(deltas.lines('maps/a.map', `a 1\nb 2\n${long}\n`, windows)).toStrictEqual([{ line: 3, length: 2000 }]);
    deltas.end();
    windows.clear();
    deltas.begin();
    expect(deltas.lines('maps/a.map', `a 1\nnew 3\nmore 4\nb 2\n${long}\n`, windows)).toStrictEqual([{ line: 5, length: 2000 }]);
    deltas.end();
  });
});

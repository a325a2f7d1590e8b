// The scan for long lines jumps over windows of short lines instead of walking every line: it
// finds exactly the lines, with their numbers and lengths, that splitting the text on newlines
// finds, whatever the mix of short, long, empty and last lines.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longLines } from '../../../src/worker/validate/line-limits.js';

/** Lines longer than this are recorded (line-limits.ts's WATCHED_LENGTH). */
const WATCHED = 512;

function splitScan(text: string): { line: number; length: number }[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines.flatMap((line, i) => (line.length > WATCHED ? [{ line: i + 1, length: line.length }] : []));
}

const line = fc.oneof(
  { weight: 6, arbitrary: fc.nat(40) },
  { weight: 2, arbitrary: fc.integer({ min: WATCHED - 2, max: WATCHED + 2 }) },
  { weight: 1, arbitrary: fc.integer({ min: 600, max: 3000 }) },
);

describe('the long-line scan', () => {
  it('finds the same long lines as splitting the text on newlines', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), fc.boolean(), (lengths, trailing) => {
        const text = lengths.map((length, i) => String.fromCharCode(97 + (i % 26)).repeat(length)).join('\n') + (trailing ? '\n' : '');
        expect(longLines(text)).toStrictEqual(splitScan(text));
      }),
      { numRuns: 1000, seed: 41 },
    );
  });
});

// The tokenizer's words for lines without quotes or backslashes: the runs between blanks (space,
// tab, CR), up to a `#` that starts a comment. Lines of spaces alone take a shorter path than
// lines with tabs, CRs or comments; both must give these words.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenizeLine } from '../../../src/worker/validate/tokenizer.js';

const blankRuns = (line: string): string[] => line.split(/[ \t\r]+/).filter((word) => word !== '');
const words = (line: string): string[] => {
  const out: string[] = [];
  expect(tokenizeLine(line, out)).toBeNull();
  return out;
};
const lineOf = (chars: readonly string[]) => fc.array(fc.constantFrom(...chars), { maxLength: 60 }).map((parts) => parts.join(''));
const WORD_CHARS = ['a', 'b', 'srv1', '10.0.0.1:80', '(', ')', ',', '%[', ']', '{', '}', '!', '-', 'é'];

describe('tokenizer on lines without quotes or backslashes', () => {
  it('gives the runs between spaces for a line of words and spaces', () => {
    fc.assert(
      fc.property(lineOf([...WORD_CHARS, ' ', ' ', '   ']), (line) => {
        expect(words(line)).toEqual(blankRuns(line));
      }),
      { numRuns: 2000 },
    );
  });

  it('splits on tabs and CRs as on spaces', () => {
    fc.assert(
      fc.property(lineOf([...WORD_CHARS, ' ', '\t', '\r']), (line) => {
        expect(words(line)).toEqual(blankRuns(line));
      }),
      { numRuns: 2000 },
    );
  });

  it('ends the words at a # that starts a word or follows one', () => {
    fc.assert(
      fc.property(lineOf([...WORD_CHARS, ' ', '\t']), lineOf([...WORD_CHARS, ' ', '#']), (before, comment) => {
        expect(words(`${before}#${comment}`)).toEqual(blankRuns(before));
      }),
      { numRuns: 2000 },
    );
  });

  it('reuses the list it is given, holding only the words of the last line', () => {
    const out = ['left', 'over', 'words', 'from', 'before'];
    expect(tokenizeLine('  server srv1 10.0.0.1:80  ', out)).toBeNull();
    expect(out).toEqual(['server', 'srv1', '10.0.0.1:80']);
    expect(tokenizeLine('   ', out)).toBeNull();
    expect(out).toEqual([]);
  });
});

// A keyed loop's text and element ends spliced from its latest, over any sequence of edits of its
// list (elements replaced, inserted or removed anywhere, texts growing or shrinking), against
// the text and ends joined afresh from the whole list: the ends are edited in place from one
// splice to the next, so the sequence is what matters.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endsOf, splicedEnds } from '../../../src/worker/templates/end-offsets.js';
import { MemoCache, spliced, type LastList } from '../../../src/worker/templates/memo-cache.js';
import { recordReplacements } from '../../../src/worker/store/list-replacements.js';

interface Element {
  readonly text: string;
}

const textOf = (value: unknown): string => (value as Element).text;

/** What a join of every element gives. */
function joined(list: readonly Element[]): { text: string; ends: number[] } {
  let at = 0;
  return { text: list.map(textOf).join(''), ends: list.map((e) => (at += e.text.length)) };
}

const line = fc.string({ maxLength: 12 }).map((s) => ({ text: `${s}\n` }));

/** An edit of the list: `count` elements at `at` (a share of the length) replaced by `items`. */
const edit = fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), count: fc.nat({ max: 3 }), items: fc.array(line, { maxLength: 3 }) });

function applied(list: readonly Element[], { at, count, items }: { at: number; count: number; items: Element[] }): Element[] {
  const from = Math.min(list.length, Math.floor(at * (list.length + 1)));
  return [...list.slice(0, from), ...items, ...list.slice(from + count)];
}

describe('a keyed loop spliced from its latest text', () => {
  it('gives the text and element ends a join of the whole list gives, after any sequence of edits', () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 40 }), fc.array(edit, { minLength: 1, maxLength: 12 }), (start, edits) => {
        let list = start;
        const first = joined(list);
        let last: LastList = { list, text: first.text, ends: endsOf(list.map((e) => e.text.length)) };
        for (const change of edits) {
          list = applied(list, change);
          const next = spliced(last, list, textOf);
          const expected = joined(list);
          if (next === undefined) {
            last = { list, text: expected.text, ends: endsOf(list.map((e) => e.text.length)) };
            continue;
          }
          expect(next.text).toBe(expected.text);
          expect(Array.from(next.ends)).toEqual(expected.ends);
          last = next;
        }
      }),
    );
  });

  it('renders through the cache the text of a fresh join, every time, whatever came before', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), fc.array(edit, { minLength: 1, maxLength: 12 }), (start, edits) => {
        const cache = new MemoCache();
        let list = start;
        expect(cache.keyedText('m#0', list, textOf)).toBe(joined(list).text);
        for (const change of edits) {
          list = applied(list, change);
          expect(cache.keyedText('m#0', list, textOf)).toBe(joined(list).text);
        }
      }),
    );
  });
});

/** A replacement in place: the elements at `at` (shares of the length) replaced by `items`. */
const replacement = fc.record({ at: fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { maxLength: 4 }), items: fc.array(line, { minLength: 4, maxLength: 4 }), recorded: fc.boolean() });

describe('a keyed loop over a list recorded as replaced in places', () => {
  it('gives the text and element ends a join of the whole list gives, after any sequence of replacements', () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 40 }), fc.array(replacement, { minLength: 1, maxLength: 12 }), (start, replacements) => {
        let list = start;
        const first = joined(list);
        let last: LastList = { list, text: first.text, ends: endsOf(list.map((e) => e.text.length)) };
        for (const { at, items, recorded } of replacements) {
          const positions = at.map((share) => Math.floor(share * list.length));
          const next = list.slice();
          positions.forEach((i, k) => (next[i] = items[k] as Element));
          // Recorded or not, and with positions where nothing is replaced (the record leaves them out).
          recordReplacements(next, list, recorded ? positions : undefined);
          list = next;
          const out = spliced(last, list, textOf);
          const expected = joined(list);
          if (out === undefined) {
            last = { list, text: expected.text, ends: endsOf(list.map((e) => e.text.length)) };
            continue;
          }
          expect(out.text).toBe(expected.text);
          expect(Array.from(out.ends)).toEqual(expected.ends);
          last = out;
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });
});

describe('element ends edited in place', () => {
  it('are the ends cut, joined and shifted as arrays, whether the buffer has room or not', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 50 }), { maxLength: 60 }), fc.array(fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), removed: fc.nat({ max: 20 }), mid: fc.array(fc.nat({ max: 50 }), { maxLength: 30 }) }), { maxLength: 8 }), fc.boolean(), (lengths, splices, plain) => {
        let expected = joined(lengths.map((n) => ({ text: 'x'.repeat(n) }))).ends;
        let ends: ArrayLike<number> = plain ? expected.slice() : endsOf(lengths);
        for (const { at, removed: wanted, mid: midLengths } of splices) {
          const from = Math.min(expected.length, Math.floor(at * (expected.length + 1)));
          const removed = Math.min(wanted, expected.length - from);
          const start = from === 0 ? 0 : (expected[from - 1] as number);
          const oldEnd = from + removed === 0 ? 0 : (expected[from + removed - 1] as number);
          let end = start;
          const mid = midLengths.map((n) => (end += n));
          const shift = end - oldEnd;
          const want = [...expected.slice(0, from), ...mid, ...expected.slice(from + removed).map((e) => e + shift)];
          ends = splicedEnds(ends, from, removed, mid, shift);
          expect(Array.from(ends)).toEqual(want);
          expected = want;
        }
      }),
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockText } from '../../../src/main/pipeline/pool/block-text.js';
import type { TextEdit } from '../../../src/worker/protocol.js';
import { applyEdits } from '../../../src/worker/render/text-window.js';

/** Non-overlapping edits of a text of `length`, from random cut points. */
const editsOf = (length: number): fc.Arbitrary<TextEdit[]> =>
  fc
    .array(fc.tuple(fc.nat({ max: length }), fc.nat({ max: 40 }), fc.string({ maxLength: 60 })), { maxLength: 6 })
    .map((raw) => {
      const sorted = [...raw].sort((a, b) => a[0] - b[0]);
      const out: TextEdit[] = [];
      let end = 0;
      for (const [at, remove, text] of sorted) {
        if (at < end) continue;
        const cut = Math.min(remove, length - at);
        out.push({ at, remove: cut, text });
        end = at + cut;
      }
      // Any order is accepted: reversed half of the time (when no two start at the same offset, whose order counts).
      const distinct = new Set(out.map((e) => e.at)).size === out.length;
      return distinct && raw.length % 2 === 0 ? out.reverse() : out;
    });

describe('BlockText', () => {
  it('gives the same text, slices and removed texts as applying the edits to the whole string, after any edit sequence', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.integer({ min: 1, max: 24 }), fc.array(fc.nat(), { maxLength: 8 }), (initial, blockChars, seeds) => {
        let whole = initial;
        let text = BlockText.of(initial, blockChars);
        for (const seed of seeds) {
          const edits = fc.sample(editsOf(whole.length), { numRuns: 1, seed })[0] as TextEdit[];
          const next = text.edited(edits);
          expect(next).toBeDefined();
          const expected = applyEdits(whole, edits) as string;
          expect(next?.removed).toEqual(edits.map((e) => whole.slice(e.at, e.at + e.remove)));
          whole = expected;
          text = (next as NonNullable<typeof next>).text;
          expect(text.length).toBe(whole.length);
          const from = seed % (whole.length + 1);
          expect(text.slice(from, from + 17)).toBe(whole.slice(from, from + 17));
        }
        expect(text.text).toBe(whole);
      }),
      { seed: 17, numRuns: 300 },
    );
  });

  it('refuses overlapping and out-of-range edits as applyEdits does', () => {
    const text = BlockText.of('abcdefghij', 3);
    expect(text.edited([{ at: 2, remove: 3, text: 'x' }, { at: 4, remove: 1, text: 'y' }])).toBeUndefined();
    expect(text.edited([{ at: 9, remove: 2, text: 'x' }])).toBeUndefined();
    expect(text.edited([{ at: 1.5, remove: 0, text: 'x' }])).toBeUndefined();
  });

  it('leaves the text it was edited from unchanged', () => {
    const before = BlockText.of('one\ntwo\nthree\n', 4);
    const after = before.edited([{ at: 4, remove: 3, text: 'TWO' }]);
    expect(after?.text.text).toBe('one\nTWO\nthree\n');
    expect(before.text).toBe('one\ntwo\nthree\n');
  });

  it('keeps the block count bounded by the text length over many small edits', () => {
    const line = 'server s1 10.0.0.1:80 check\n';
    let whole = line.repeat(2_000);
    let text = BlockText.of(whole, 1_024);
    for (let i = 0; i < 500; i++) {
      const at = ((i * 7919) % Math.max(1, Math.floor(whole.length / line.length) - 1)) * line.length;
      const edit = { at, remove: line.length, text: i % 3 === 0 ? '' : `server s1 10.0.${i % 250}.${i % 7}:80 check\n` };
      whole = applyEdits(whole, [edit]) as string;
      text = (text.edited([edit]) as NonNullable<ReturnType<BlockText['edited']>>).text;
    }
    expect(text.text).toBe(whole);
    expect(text.blockCount).toBeLessThanOrEqual(Math.ceil(whole.length / 256) + 1);
  });
});

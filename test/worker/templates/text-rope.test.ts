// A large text kept as chunks: after any sequence of splices, its text and every read of it
// (slice, indexOf, lastIndexOf) are those of the same string built by hand, and the rope it was
// spliced from still reads as it did.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextRope } from '../../../src/worker/templates/text-rope.js';

/** A text of `lines` lines of varied lengths (some longer than a chunk's share), from a seed. */
function textOf(seed: number, lines: number): string {
  const out: string[] = [];
  let x = seed >>> 0 || 1;
  for (let i = 0; i < lines; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(`k${i} ${'v'.repeat(x % 97 === 0 ? 70_000 : x % 300)}\n`);
  }
  return out.join('');
}

/** A share in [0, max], spread evenly (a double's generator favours its bounds). */
const share = (max: number): fc.Arbitrary<number> => fc.integer({ min: 0, max: 100_000 }).map((n) => (n / 100_000) * max);

/** A splice: from a share of the length, a share of what follows removed, and a text put in. */
const splice = fc.record({
  at: share(1),
  remove: share(0.05),
  insert: fc.oneof(fc.constant(''), fc.string({ maxLength: 40 }), fc.nat({ max: 200_000 }).map((n) => 'i\n'.repeat(n >> 1))),
});

/** Reads to check: offsets as shares of the length. */
const read = fc.record({
  a: share(1.01),
  b: share(1.01),
  span: fc.nat({ max: 300 }),
  needle: fc.constantFrom('\n', 'k1', 'v\nk', 'i\ni', 'zz', ''),
});

function checkReads(rope: TextRope, text: string, reads: readonly { a: number; b: number; span: number; needle: string }[]): void {
  expect(rope.length).toBe(text.length);
  for (const { a, b, span, needle } of reads) {
    const from = Math.floor(Math.min(a, b) * text.length);
    const to = Math.min(text.length, Math.floor(Math.max(a, b) * text.length));
    expect(rope.slice(from, to)).toBe(text.slice(from, to));
    // A short read, as the render's readers make around a change (often inside one chunk).
    const near = Math.min(text.length, from + span);
    expect(rope.slice(from, near)).toBe(text.slice(from, near));
    const at = Math.floor(a * (text.length + 2)) - 1;
    expect(rope.indexOf(needle, at)).toBe(text.indexOf(needle, at));
    expect(rope.lastIndexOf(needle, at)).toBe(text.lastIndexOf(needle, at));
  }
}

describe('a text rope', () => {
  it('reads as the string it stands for, after any sequence of splices, and leaves the rope it came from as it was', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 0, max: 3_000 }), fc.array(splice, { minLength: 1, maxLength: 8 }), fc.array(read, { minLength: 1, maxLength: 6 }), (seed, lines, splices, reads) => {
        let text = textOf(seed, lines);
        let rope = TextRope.of(text);
        checkReads(rope, text, reads);
        for (const { at, remove, insert } of splices) {
          const start = Math.floor(at * text.length);
          const end = Math.min(text.length, start + Math.floor(remove * text.length));
          const next = rope.splice(start, end, insert);
          const expected = text.slice(0, start) + insert + text.slice(end);
          expect(next.text).toBe(expected);
          checkReads(next, expected, reads);
          // The earlier rope is what the previous render's readers read.
          checkReads(rope, text, reads);
          rope = next;
          text = expected;
        }
      }),
      { numRuns: 60 },
    );
  });

  it('rebuilds only the chunks a splice touches: a one-line change keeps the chunk count and shares the rest', () => {
    const text = textOf(7, 20_000);
    const rope = TextRope.of(text);
    const at = text.indexOf('\nk10000 ') + 1;
    const next = rope.splice(at, at + 3, 'K99');
    expect(next.chunkCount).toBe(rope.chunkCount);
    expect(next.text).toBe(text.slice(0, at) + 'K99' + text.slice(at + 3));
    // Every chunk but the one changed is the very slice of the original: equal reads far from the change.
    expect(next.slice(0, 1000)).toBe(text.slice(0, 1000));
    expect(next.slice(text.length - 1000, text.length)).toBe(text.slice(text.length - 1000));
  });

  it('cuts a chunk that grows past twice its size, and joins one that shrinks to a quarter with the next', () => {
    const text = 'a\n'.repeat(200_000);
    const rope = TextRope.of(text);
    const grown = rope.splice(10, 10, 'b\n'.repeat(150_000));
    expect(grown.chunkCount).toBeGreaterThan(rope.chunkCount + 3);
    expect(grown.text).toBe(text.slice(0, 10) + 'b\n'.repeat(150_000) + text.slice(10));
    const shrunk = rope.splice(100, 60_000, '');
    expect(shrunk.chunkCount).toBe(rope.chunkCount - 1);
    expect(shrunk.text).toBe(text.slice(0, 100) + text.slice(60_000));
  });

  it('finds a match that crosses a chunk boundary, searching forwards and backwards', () => {
    // The first chunk ends at 65,536: the needle starts one character before it.
    const text = `${'x'.repeat(65_535)}ab${'y'.repeat(70_000)}ab`;
    const rope = TextRope.of(text);
    expect(rope.chunkCount).toBeGreaterThan(1);
    expect(rope.indexOf('ab', 10)).toBe(65_535);
    expect(rope.indexOf('ab', 65_536)).toBe(text.length - 2);
    expect(rope.lastIndexOf('ab', 100_000)).toBe(65_535);
    expect(rope.lastIndexOf('ab', 65_534)).toBe(-1);
    expect(rope.slice(65_530, 65_540)).toBe(text.slice(65_530, 65_540));
  });

  it('of an empty text reads as the empty string, and splices into one', () => {
    const rope = TextRope.of('');
    expect(rope.length).toBe(0);
    expect(rope.text).toBe('');
    expect(rope.slice(0, 0)).toBe('');
    expect(rope.indexOf('\n', 0)).toBe(-1);
    expect(rope.lastIndexOf('\n', 5)).toBe(-1);
    expect(rope.splice(0, 0, 'x\n').text).toBe('x\n');
  });
});

// The rope of blocks: its text, block starts, offsets and spans agree with the joined blocks
// after any sequence of replacements, at sizes that are and are not powers of two.
import { describe, expect, it } from 'vitest';
import { BlockRope } from '../../../src/worker/render/block-rope.js';

describe('BlockRope', () => {
  for (const count of [1, 2, 7, 64, 100]) {
    it(`keeps its text, starts and offsets those of the joined blocks over replacements (${count} blocks)`, () => {
      const blocks = Array.from({ length: count }, (_, i) => `block ${i} ${'x'.repeat(i % 13)}\n\n`);
      const base = blocks.join('');
      const rope = new BlockRope(base, blocks.map((_, i) => blocks.slice(0, i).join('').length));
      for (let step = 0; step <= 3 * count; step++) {
        const text = blocks.join('');
        expect(rope.text).toBe(text);
        expect(rope.count).toBe(count);
        expect(rope.starts()).toEqual(blocks.map((_, i) => blocks.slice(0, i).join('').length));
        for (let i = 0; i < count; i += Math.max(1, Math.floor(count / 9))) {
          const start = rope.start(i);
          expect(rope.leaf(i)).toBe(blocks[i]);
          const { text: within, from, to } = rope.span(i);
          expect(within.slice(from, to)).toBe(blocks[i]);
          expect(rope.locate(start)).toEqual({ index: i, offset: 0 });
          expect(rope.locate(start + (blocks[i] as string).length - 1)).toEqual({ index: i, offset: (blocks[i] as string).length - 1 });
        }
        const index = (step * 31) % count;
        blocks[index] = `block ${index} changed ${'y'.repeat(step % 40)}\n\n`;
        rope.replace(index, blocks[index]);
      }
    });
  }
});

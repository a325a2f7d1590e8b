import { describe, expect, it } from 'vitest';
import { textWindow } from '../../../src/main/gate/text-window.js';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';

/** The common prefix and suffix, character by character. */
function naive(a: string, b: string): { start: number; endA: number; endB: number } {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let suffix = 0;
  while (suffix < a.length - start && suffix < b.length - start && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  return { start, endA: a.length - suffix, endB: b.length - suffix };
}

describe('textWindow', () => {
  it('finds the same common prefix and suffix as a comparison character by character, on texts over several 64 KiB slices', () => {
    const random = seededRandom(7);
    const base = Array.from({ length: 200_000 }, () => 'ab\n'[Math.floor(random() * 3)]).join('');
    for (let trial = 0; trial < 40; trial++) {
      const at = Math.floor(random() * base.length);
      const cut = Math.floor(random() * 50);
      const insert = 'xyz\n'.slice(0, Math.floor(random() * 4));
      const next = base.slice(0, at) + insert + base.slice(at + cut);
      const window = textWindow(base, next);
      expect(window).toEqual(naive(base, next));
      expect(base.slice(0, window.start) + next.slice(window.start, window.endB) + base.slice(window.endA)).toBe(next);
    }
    expect(textWindow(base, base)).toEqual({ start: base.length, endA: base.length, endB: base.length });
  });
});

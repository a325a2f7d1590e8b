// A large keyed loop (a map of a big cluster) spliced as a rope: its text is always that of a
// join of the whole list; each splice it reports says truly which ends it kept and reads as its
// texts; and the render's changed lines, found from that report without comparing the whole
// texts, are those a comparison of the two strings finds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChangedWindows } from '../../../src/worker/render/changed-windows.js';
import { changedLines } from '../../../src/worker/render/text-window.js';
import { MemoCache, ROPE_MIN } from '../../../src/worker/templates/memo-cache.js';
import { recordReplacements } from '../../../src/worker/store/list-replacements.js';

interface Element {
  readonly text: string;
}

const textOf = (value: unknown): string => (value as Element).text;

/** Map lines of a few KiB each, so that some tens of them make a text past ROPE_MIN. */
const element = fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 2_000, max: 9_000 })).map(([key, width]) => ({ text: `${key} ${'b'.repeat(width)}\n` }));

const edit = fc.record({
  at: fc.integer({ min: 0, max: 10_000 }).map((n) => n / 10_000),
  count: fc.nat({ max: 2 }),
  items: fc.array(element, { maxLength: 2 }),
  // Replacements in place are recorded as such (list-replacements.ts), as the stores record them.
  recorded: fc.boolean(),
});

function applied(list: readonly Element[], change: { at: number; count: number; items: Element[]; recorded: boolean }): Element[] {
  const from = Math.min(list.length, Math.floor(change.at * (list.length + 1)));
  const next = [...list.slice(0, from), ...change.items, ...list.slice(from + change.count)];
  if (change.recorded && change.items.length === change.count && from + change.count <= list.length) {
    recordReplacements(next, list, change.items.map((_, i) => from + i));
  }
  return next;
}

describe('a large keyed loop kept as a rope', () => {
  it('renders the text of a fresh join, and reports each splice with ends it truly kept and views that read as its texts', () => {
    let ropes = 0;
    fc.assert(
      fc.property(fc.array(element, { minLength: 40, maxLength: 120 }), fc.array(edit, { minLength: 1, maxLength: 10 }), (start, edits) => {
        const cache = new MemoCache();
        let list = start;
        let text = cache.keyedText('maps/m.map#1', list, textOf);
        expect(text).toBe(list.map(textOf).join(''));
        for (const change of edits) {
          list = applied(list, change);
          cache.beginRender();
          const next = cache.keyedText('maps/m.map#1', list, textOf);
          expect(next).toBe(list.map(textOf).join(''));
          for (const splice of cache.takeSplices()) {
            expect(splice.before).toBe(text);
            expect(splice.after).toBe(next);
            expect(splice.prefix + splice.suffix).toBeLessThanOrEqual(Math.min(text.length, next.length));
            expect(next.slice(0, splice.prefix)).toBe(text.slice(0, splice.prefix));
            expect(next.slice(next.length - splice.suffix)).toBe(text.slice(text.length - splice.suffix));
            expect(splice.beforeView.slice(0, text.length)).toBe(text);
            expect(splice.afterView.slice(0, next.length)).toBe(next);
            if (next.length >= ROPE_MIN && typeof splice.afterView !== 'string') ropes++;
          }
          text = next;
        }
      }),
      { numRuns: 40 },
    );
    // Large texts did go the rope's way.
    expect(ropes).toBeGreaterThan(20);
  });

  it('gives, from the splices it reports, the changed lines a comparison of the whole texts gives', () => {
    fc.assert(
      fc.property(fc.array(element, { minLength: 40, maxLength: 120 }), fc.array(edit, { minLength: 1, maxLength: 6 }), (start, edits) => {
        const cache = new MemoCache();
        const windows = new ChangedWindows();
        let list = start;
        let text = cache.keyedText('maps/m.map#1', list, textOf);
        for (const change of edits) {
          list = applied(list, change);
          cache.beginRender();
          windows.clear();
          const next = cache.keyedText('maps/m.map#1', list, textOf);
          windows.hint(cache.takeSplices());
          expect(windows.lines('maps/m.map', text, next)).toEqual(changedLines(text, next));
          const views = windows.views('maps/m.map', text, next);
          expect(views.before.slice(0, text.length)).toBe(text);
          expect(views.after.slice(0, next.length)).toBe(next);
          text = next;
        }
      }),
      { numRuns: 40 },
    );
  });

  it('finds no changed lines when a splice gives back the very text it replaced', () => {
    const list = Array.from({ length: 80 }, (_, i) => ({ text: `k${i} ${'b'.repeat(5_000)}\n` }));
    const cache = new MemoCache();
    const windows = new ChangedWindows();
    const text = cache.keyedText('maps/m.map#1', list, textOf);
    // Two elements swapped for one with both texts: the same text, spliced anew.
    const merged = [...list.slice(0, 10), { text: textOf(list[10]) + textOf(list[11]) }, ...list.slice(12)];
    cache.beginRender();
    const next = cache.keyedText('maps/m.map#1', merged, textOf);
    expect(next).toBe(text);
    windows.hint(cache.takeSplices());
    expect(windows.lines('maps/m.map', text, next)).toBeUndefined();
  });
});

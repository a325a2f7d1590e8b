import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chainEdits, chainPatches } from '../../../src/main/deploy/patch-chain.js';
import type { TextEdit } from '../../../src/worker/protocol.js';
import { applyEdits } from '../../../src/worker/render/text-window.js';

/** Sorted, apart edits of a text of `length` characters (adjacent and empty ones included). */
function editsOf(length: number): fc.Arbitrary<TextEdit[]> {
  return fc.array(fc.tuple(fc.nat(length), fc.nat(6), fc.string({ maxLength: 6, unit: fc.constantFrom('a', 'b', '\n', 'x') })), { maxLength: 6 }).map((raw) => {
    const out: TextEdit[] = [];
    let end = 0;
    for (const [at, remove, text] of [...raw].sort((x, y) => x[0] - y[0])) {
      if (at < end) continue;
      const cut = Math.min(remove, length - at);
      out.push({ at, remove: cut, text });
      end = at + cut;
    }
    return out;
  });
}

const chain = fc
  .string({ maxLength: 40, unit: fc.constantFrom('a', 'b', 'c', '\n') })
  .chain((a) => editsOf(a.length).chain((first) => {
    const b = applyEdits(a, first) as string;
    return editsOf(b.length).map((second) => ({ a, first, second }));
  }));

describe('chainEdits', () => {
  it('gives the edits of the first text that yield what the two edit lists yield one after the other', () => {
    fc.assert(
      fc.property(chain, ({ a, first, second }) => {
        const chained = chainEdits(first, second);
        expect(chained).toBeDefined();
        const b = applyEdits(a, first) as string;
        expect(applyEdits(a, chained as TextEdit[])).toBe(applyEdits(b, second));
      }),
      { numRuns: 3000 },
    );
  });

  it('gives sorted edits that neither overlap nor touch', () => {
    fc.assert(
      fc.property(chain, ({ first, second }) => {
        const chained = chainEdits(first, second) as TextEdit[];
        for (let k = 1; k < chained.length; k++) expect((chained[k] as TextEdit).at).toBeGreaterThan((chained[k - 1] as TextEdit).at + (chained[k - 1] as TextEdit).remove);
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps apart edits apart: a change in another place is a second edit', () => {
    expect(chainEdits([{ at: 2, remove: 1, text: 'XY' }], [{ at: 10, remove: 2, text: '' }])).toEqual([
      { at: 2, remove: 1, text: 'XY' },
      { at: 9, remove: 2, text: '' },
    ]);
  });

  it('refuses overlapping edits', () => {
    expect(chainEdits([{ at: 0, remove: 3, text: '' }, { at: 2, remove: 1, text: '' }], [])).toBeUndefined();
  });
});

describe('chainPatches', () => {
  it('chains a patch of the render the first one produced, file by file', () => {
    const first = { from: 'A', edits: { config: [{ at: 0, remove: 1, text: 'x' }], 'files/a': [{ at: 1, remove: 0, text: 'q' }] } };
    const second = { from: 'B', edits: { config: [{ at: 1, remove: 1, text: 'y' }], 'maps/m': [{ at: 0, remove: 0, text: 'k v\n' }] } };
    expect(chainPatches(first, 'B', second)).toEqual({
      from: 'A',
      edits: { config: [{ at: 0, remove: 2, text: 'xy' }], 'files/a': [{ at: 1, remove: 0, text: 'q' }], 'maps/m': [{ at: 0, remove: 0, text: 'k v\n' }] },
    });
  });

  it('gives nothing for a patch of another render', () => {
    expect(chainPatches({ from: 'A', edits: {} }, 'B', { from: 'C', edits: {} })).toBeUndefined();
  });
});

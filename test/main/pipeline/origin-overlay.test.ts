import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FLATTEN_AT, withChangedObjects } from '../../../src/main/pipeline/pool/origin-overlay.js';
import { withSections } from '../../../src/worker/render/origin-index.js';
import type { OriginIndex, OriginObject } from '../../../src/worker/protocol.js';

const object = (name: string, version: string): OriginObject => ({ kind: 'Ingress', namespace: 'ns', name, version });
const invalid = (index: number): Error => new Error(`no object ${index}`);
const start = (size: number): OriginIndex => ({ objects: Array.from({ length: size }, (_, i) => object(`o${i}`, '1')), names: { b: 0 }, sections: [] });

describe('a pool result origin index made of the held index and the changed objects', () => {
  it('reads as the held objects with every change of every result since applied in turn, and leaves each earlier index as it was', () => {
    const batch = (size: number) => fc.array(fc.tuple(fc.nat({ max: size - 1 }), fc.string({ maxLength: 3 })), { maxLength: 40 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }).chain((size) => fc.tuple(fc.constant(size), fc.array(batch(size), { maxLength: 30 }), fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }))), ([size, batches, reads]) => {
        let index: OriginIndex = start(size);
        let expected = index.objects.slice();
        const history: { index: OriginIndex; expected: OriginObject[] }[] = [];
        batches.forEach((changes, i) => {
          const next = withChangedObjects(index, changes.map(([at, v]) => [at, object(`o${at}`, v)] as const), invalid);
          expected = expected.slice();
          for (const [at, v] of changes) expected[at] = object(`o${at}`, v);
          // Reading some indexes early (as the gate does on a refusal) must not change what later ones read.
          if (reads[i] === true) expect(next.objects).toEqual(expected);
          expect(next.names).toBe(index.names);
          history.push({ index: next, expected });
          index = next;
        });
        for (const { index: earlier, expected: objects } of history) expect(earlier.objects).toEqual(objects);
      }),
      { numRuns: 300 },
    );
  });

  it('copies no objects until they are read, and copies them once', () => {
    const held = start(1000);
    const next = withChangedObjects(held, [[3, object('o3', '2')]], invalid);
    expect(typeof Object.getOwnPropertyDescriptor(next, 'objects')?.get).toBe('function');
    const read = next.objects;
    expect(read).toHaveLength(1000);
    expect(read[3]?.version).toBe('2');
    expect(next.objects).toBe(read);
    expect(held.objects[3]?.version).toBe('1');
  });

  it('copies the objects at once when the changes merged since the last copy reach the limit, so the merged changes stay bounded', () => {
    let index: OriginIndex = start(FLATTEN_AT * 2);
    for (let i = 0; i < FLATTEN_AT - 1; i++) {
      index = withChangedObjects(index, [[i, object(`o${i}`, '2')]], invalid);
      expect(Object.getOwnPropertyDescriptor(index, 'objects')?.get, `change ${i}`).toBeDefined();
    }
    index = withChangedObjects(index, [[FLATTEN_AT - 1, object('x', '2')]], invalid);
    expect(Object.getOwnPropertyDescriptor(index, 'objects')?.get).toBeUndefined();
    expect(index.objects.filter((o) => o.version === '2')).toHaveLength(FLATTEN_AT);
    // The next change starts a new overlay on the copied array.
    const after = withChangedObjects(index, [[FLATTEN_AT, object('y', '3')]], invalid);
    expect(typeof Object.getOwnPropertyDescriptor(after, 'objects')?.get).toBe('function');
    expect(after.objects[FLATTEN_AT]?.version).toBe('3');
    expect(after.objects[0]?.version).toBe('2');
  });

  it('refuses a change at a position the held index does not have', () => {
    const held = start(4);
    for (const at of [4, -1, 1.5, Number.NaN]) expect(() => withChangedObjects(held, [[at, object('x', '1')]], invalid)).toThrow(`no object ${at}`);
  });

  it('keeps its objects unread when given sections, as the pipeline does with every result, and serialises them', () => {
    const lazy = withChangedObjects(start(10), [[5, object('o5', '7')]], invalid);
    const sectioned = withSections(lazy, 'global\n');
    expect(typeof Object.getOwnPropertyDescriptor(sectioned, 'objects')?.get).toBe('function');
    expect(sectioned.objects[5]?.version).toBe('7');
    expect(JSON.parse(JSON.stringify(sectioned)).objects[5].version).toBe('7');
    expect(structuredClone(sectioned).objects[5]?.version).toBe('7');
  });
});

// The guarded list kept between renders (guarded-lists.ts, patched from the store's journal)
// against a cold filter of the whole store, after random sequences of upserts and deletes of
// accepted, partly rejected and wholly rejected objects, in dormant and plain stores.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT } from '../../../src/worker/store/guard-context.js';
import { guardedList } from '../../../src/worker/store/guarded-lists.js';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { guardObject } from '../../../src/worker/store/object-guard.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { ingress, rule } from '../../helpers/cluster.js';

const KIND = { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1' };

/** An accepted Ingress, one with a rejected annotation (accepted in part) or one rejected whole. */
function variant(namespace: string, name: string, which: number, generation: number): KubeObject {
  const spec = { rules: [rule(`h${generation}.example.com`, { path: '/', service: 'web' })] };
  if (which === 1) return ingress(namespace, name, { rules: [...spec.rules, { host: 'bad host\n' }] });
  if (which === 2) return ingress(namespace, name, spec, { annotations: { 'haproxy.org/timeout-server': 'forever' } });
  return ingress(namespace, name, spec);
}

function cold(store: IndexedStore): KubeObject[] {
  return store.list().flatMap((object) => {
    const verdict = guardObject(object, DEFAULT_CONTEXT);
    return verdict.ok ? [verdict.object] : [];
  });
}

const step = fc.record({
  del: fc.boolean(),
  namespace: fc.constantFrom('a', 'b', 'c'),
  name: fc.constantFrom('x', 'y', 'z', 'w'),
  which: fc.integer({ min: 0, max: 2 }),
  read: fc.integer({ min: 0, max: 3 }),
});

describe('the guarded list kept between renders', () => {
  it('equals a cold filter of the store after any sequence of changes', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(step, { minLength: 1, maxLength: 40 }), (dormant, steps) => {
        const store = new IndexedStore('ingresses', undefined, KIND, { dormant });
        let generation = 0;
        for (const s of steps) {
          if (s.del) store.delete(`${s.namespace}/${s.name}`);
          else store.upsert(variant(s.namespace, s.name, s.which, ++generation));
          // Not every change is followed by a render.
          if (s.read === 0) continue;
          expect(guardedList(store, DEFAULT_CONTEXT)).toEqual(cold(store));
        }
        expect(guardedList(store, DEFAULT_CONTEXT)).toEqual(cold(store));
      }),
      { numRuns: 150, seed: 17 },
    );
  });

  it('leaves rejected objects out and keeps the accepted view of partly rejected ones', () => {
    const store = new IndexedStore('ingresses', undefined, KIND);
    store.upsert(variant('a', 'x', 0, 1));
    store.upsert(variant('a', 'y', 1, 2));
    store.upsert(variant('a', 'z', 2, 3));
    const list = guardedList(store, DEFAULT_CONTEXT);
    expect(list.map((object) => object.metadata.name)).toEqual(['x', 'y']);
    expect((list[1]?.spec as { rules: unknown[] }).rules).toHaveLength(1);
  });

  it('hands out the same array while the store is unchanged, and a new one after a change', () => {
    const store = new IndexedStore('ingresses', undefined, KIND);
    store.upsert(variant('a', 'x', 0, 1));
    const first = guardedList(store, DEFAULT_CONTEXT);
    expect(guardedList(store, DEFAULT_CONTEXT)).toBe(first);
    store.upsert(variant('a', 'y', 0, 2));
    const second = guardedList(store, DEFAULT_CONTEXT);
    expect(second).not.toBe(first);
    expect(first.map((object) => object.metadata.name)).toEqual(['x']);
    expect(Object.isFrozen(second)).toBe(true);
  });

  it('builds the list again when the journal no longer reaches back', () => {
    const store = new IndexedStore('ingresses', undefined, KIND);
    store.upsert(variant('a', 'x', 0, 0));
    guardedList(store, DEFAULT_CONTEXT);
    for (let i = 1; i <= 10_000; i++) store.upsert(variant('a', `n${i % 50}`, i % 3, i));
    store.delete('a/x');
    expect(guardedList(store, DEFAULT_CONTEXT)).toEqual(cold(store));
  });
});

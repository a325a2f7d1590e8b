// IndexedStore's index tree: objects sharing every index value sit in one leaf, and lookups,
// replacements and deletions give the same answers whether a leaf holds one object or several.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import type { KubeObject } from '../../../src/worker/protocol.js';

const BY_SERVICE = ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name'];

function slice(namespace: string, name: string, service: string, rev = 0): KubeObject {
  return { metadata: { name, namespace, labels: { 'kubernetes.io/service-name': service } }, rev };
}

const names = (objects: readonly KubeObject[]): string[] => objects.map((o) => `${o.metadata.name}@${String(o['rev'])}`);

describe('IndexedStore index leaves', () => {
  it('finds every object that shares the same index values, sorted by name', () => {
    const store = new IndexedStore('endpointslices', BY_SERVICE);
    store.upsert(slice('ns', 'web-b', 'web'));
    store.upsert(slice('ns', 'web-a', 'web'));
    store.upsert(slice('ns', 'api-a', 'api'));

    expect(names(store.fetch(['ns', 'web']))).toEqual(['web-a@0', 'web-b@0']);
    expect(names(store.fetch(['ns', 'api']))).toEqual(['api-a@0']);
    expect(store.getSingle(['ns', 'web'])).toBeUndefined();
    expect(names(store.fetch(['ns']))).toEqual(['api-a@0', 'web-a@0', 'web-b@0']);
  });

  it('replaces an object in place, whether it shares its leaf or holds it alone', () => {
    const store = new IndexedStore('endpointslices', BY_SERVICE);
    store.upsert(slice('ns', 'api-a', 'api'));
    store.upsert(slice('ns', 'web-a', 'web'));
    store.upsert(slice('ns', 'web-b', 'web'));
    store.upsert(slice('ns', 'api-a', 'api', 1));
    store.upsert(slice('ns', 'web-b', 'web', 2));

    expect(names(store.fetch(['ns', 'api']))).toEqual(['api-a@1']);
    expect(names(store.fetch(['ns', 'web']))).toEqual(['web-a@0', 'web-b@2']);
  });

  it('moves an object whose index value changed out of its old leaf', () => {
    const store = new IndexedStore('endpointslices', BY_SERVICE);
    store.upsert(slice('ns', 'one', 'web'));
    store.upsert(slice('ns', 'two', 'web'));
    store.upsert(slice('ns', 'two', 'api'));

    expect(names(store.fetch(['ns', 'web']))).toEqual(['one@0']);
    expect(names(store.fetch(['ns', 'api']))).toEqual(['two@0']);
    expect(store.getSingle(['ns', 'web'])?.metadata.name).toBe('one');
  });

  it('keeps the others of a leaf when one is deleted, and forgets the branch when the last goes', () => {
    const store = new IndexedStore('endpointslices', BY_SERVICE);
    for (const name of ['a', 'b', 'c']) store.upsert(slice('ns', name, 'web'));
    store.delete('ns/b');
    expect(names(store.fetch(['ns', 'web']))).toEqual(['a@0', 'c@0']);
    store.delete('ns/a');
    expect(names(store.fetch(['ns', 'web']))).toEqual(['c@0']);
    store.delete('ns/c');
    expect(store.fetch(['ns', 'web'])).toEqual([]);
    expect(store.fetch(['ns'])).toEqual([]);
    store.upsert(slice('ns', 'd', 'web'));
    expect(names(store.fetch(['ns', 'web']))).toEqual(['d@0']);
  });

  it('indexes by a single field, keying objects by the key they were stored under', () => {
    const store = new IndexedStore('things', ['metadata.name']);
    store.upsert({ metadata: { name: 'x' } }, 'first');
    store.upsert({ metadata: { name: 'x' } }, 'second');
    store.delete('first');

    expect(store.fetch(['x'])).toEqual([{ metadata: { name: 'x' } }]);
    expect([...store.keys()]).toEqual(['second']);
  });
});

describe('a dormant IndexedStore (as worker replicas hold objects)', () => {
  const dormant = (): IndexedStore => new IndexedStore('endpointslices', BY_SERVICE, undefined, { dormant: true });

  it('answers every lookup with an object equal to the one stored, the same object each time', () => {
    const store = dormant();
    const stored = slice('ns', 'web-a', 'web');
    store.upsert(stored);
    store.upsert(slice('ns', 'web-b', 'web'));

    const fetched = store.fetch(['ns', 'web']);
    expect(fetched).toEqual([stored, slice('ns', 'web-b', 'web')]);
    expect(store.get('ns/web-a')).toBe(fetched[0]);
    expect(store.list()[0]).toBe(fetched[0]);
    expect(store.fetch(['ns', 'web'])[1]).toBe(fetched[1]);
  });

  it('hands out objects the guard knows as admitted by this store', async () => {
    const { storeOf } = await import('../../../src/worker/store/store-admission.js');
    const store = new IndexedStore('endpointslices', BY_SERVICE, { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' }, { dormant: true });
    store.upsert(slice('ns', 'web-a', 'web'));

    const held = store.get('ns/web-a') as KubeObject;
    expect(storeOf(held)?.name).toBe('endpointslices');
    expect(held).toMatchObject({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' });
  });

  it("gives back the store's own kind and apiVersion, fields in their order, on objects that carry them", () => {
    const store = new IndexedStore('endpointslices', BY_SERVICE, { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' }, { dormant: true });
    const stamped = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', ...slice('ns', 'a', 'web') };
    store.upsert(stamped);

    const held = store.get('ns/a') as KubeObject;
    expect(held).toEqual(stamped);
    expect(Object.keys(held)).toEqual(Object.keys(stamped));
  });

  it('moves, replaces and deletes objects it has not handed out yet', () => {
    const store = dormant();
    store.upsert(slice('ns', 'one', 'web'));
    store.upsert(slice('ns', 'two', 'web'));
    store.upsert(slice('ns', 'two', 'api', 3));
    store.delete('ns/one');

    expect(store.fetch(['ns', 'web'])).toEqual([]);
    expect(names(store.fetch(['ns', 'api']))).toEqual(['two@3']);
    expect(store.size).toBe(1);
  });

  it('gives a changed object afresh, and keeps handing out the unchanged ones it gave before', () => {
    const store = dormant();
    store.upsert(slice('ns', 'a', 'web'));
    store.upsert(slice('ns', 'b', 'web'));
    const [a, b] = store.list();
    store.upsert(slice('ns', 'b', 'web', 1));

    const [a2, b2] = store.list();
    expect(a2).toBe(a);
    expect(b2).not.toBe(b);
    expect(b2?.['rev']).toBe(1);
  });

  it('holds the object it was given unregistered once it keeps its text, and registers the one it hands out', async () => {
    const { storeOf } = await import('../../../src/worker/store/store-admission.js');
    const store = new IndexedStore('endpointslices', BY_SERVICE, { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' }, { dormant: true });
    const given = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', ...slice('ns', 'a', 'web') };
    store.upsert(given);

    expect(storeOf(given)).toBeUndefined();
    expect(storeOf(store.get('ns/a') as KubeObject)?.name).toBe('endpointslices');
  });

  it('hands out what a store holding the objects themselves hands out, fields in their order, for any JSON objects', () => {
    const name = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('"', '\\', ':', '":', 'metadata', 'name', '\u0002'));
    const value = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, fc.oneof(name, fc.integer(), fc.boolean(), fc.constant(null)), fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(name, tie('v'), { maxKeys: 4 })),
    })).v;
    const object = fc.record({ name: fc.string({ minLength: 1, maxLength: 5 }), extra: fc.dictionary(name, value, { maxKeys: 6 }) }).map(({ name: n, extra }) => ({ ...extra, metadata: { namespace: 'ns', name: n, labels: { 'kubernetes.io/service-name': 'web' } } }) as KubeObject);
    fc.assert(
      fc.property(fc.array(object, { minLength: 1, maxLength: 8 }), (objects) => {
        const definition = { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' };
        const plain = new IndexedStore('endpointslices', BY_SERVICE, definition);
        const held = new IndexedStore('endpointslices', BY_SERVICE, definition, { dormant: true });
        for (const o of objects) {
          plain.upsert(structuredClone(o));
          held.upsert(structuredClone(o));
        }
        const want = plain.fetch(['ns', 'web']);
        const got = held.fetch(['ns', 'web']);
        expect(got).toEqual(want);
        expect(got.map((o) => JSON.stringify(o))).toEqual(want.map((o) => JSON.stringify(o)));
      }),
      { numRuns: 500 },
    );
  });

  it('answers lookups as a store holding the objects does, through any upserts and deletes before and after its first lookup', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('upsert' as const), ns: fc.constantFrom('a', 'b'), name: fc.constantFrom('x', 'y', 'z', 'w'), service: fc.constantFrom('web', 'api', 'db'), rev: fc.nat(9) }),
      fc.record({ kind: fc.constant('delete' as const), ns: fc.constantFrom('a', 'b'), name: fc.constantFrom('x', 'y', 'z', 'w') }),
      fc.record({ kind: fc.constant('fetch' as const), keys: fc.constantFrom<string[]>([], ['a'], ['b'], ['a', 'web'], ['b', 'api'], ['a', 'db'], ['c']) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const plain = new IndexedStore('endpointslices', BY_SERVICE);
        const held = dormant();
        for (const o of ops) {
          if (o.kind === 'upsert') {
            plain.upsert(slice(o.ns, o.name, o.service, o.rev));
            held.upsert(slice(o.ns, o.name, o.service, o.rev));
          } else if (o.kind === 'delete') {
            expect(held.delete(`${o.ns}/${o.name}`)).toBe(plain.delete(`${o.ns}/${o.name}`));
          } else {
            expect(names(held.fetch(o.keys))).toEqual(names(plain.fetch(o.keys)));
          }
        }
        for (const keys of [['a'], ['b'], ['a', 'web'], ['b', 'db']]) expect(names(held.fetch(keys))).toEqual(names(plain.fetch(keys)));
      }),
      { numRuns: 500 },
    );
  });
});

// IndexedStore's index tree: objects sharing every index value sit in one leaf, and lookups,
// replacements and deletions give the same answers whether a leaf holds one object or several.
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

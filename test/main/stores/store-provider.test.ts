import { describe, expect, it } from 'vitest';
import { StoreProvider, type ChangesSince } from '../../../src/main/stores/store-provider.js';
import { IndexedStore, compareKeys, objectKey, parseFieldPath } from '../../../src/worker/store/indexed-store.js';
import type { KubeObject, StoreChange } from '../../../src/worker/protocol.js';

function obj(namespace: string | undefined, name: string, extra: Partial<KubeObject> = {}, labels?: Record<string, string>): KubeObject {
  return {
    ...extra,
    metadata: { name, ...(namespace === undefined ? {} : { namespace }), ...(labels === undefined ? {} : { labels }) },
  };
}

const names = (objects: readonly KubeObject[]): string[] => objects.map(objectKey);

const SERVICE_NAME_LABEL = 'metadata.labels.kubernetes\\.io/service-name';

function slice(namespace: string, name: string, service: string | undefined): KubeObject {
  return obj(namespace, name, { kind: 'EndpointSlice' }, service === undefined ? {} : { 'kubernetes.io/service-name': service });
}

function delta(result: ChangesSince): Extract<ChangesSince, { kind: 'delta' }> {
  if (result.kind !== 'delta') throw new Error(`expected a delta, got ${JSON.stringify(result)}`);
  return result;
}

const summary = (changes: readonly StoreChange[]): string[] =>
  changes.map((c) => `${c.op} ${c.store}:${c.key}${c.op === 'upsert' && typeof c.object['rev'] === 'number' ? `@${c.object['rev']}` : ''}`);

describe('IndexedStore', () => {
  it('finds an object by an exact lookup on all index keys', () => {
    const store = new IndexedStore('services');
    const web = obj('default', 'web');
    store.upsert(web);
    store.upsert(obj('default', 'api'));
    store.upsert(obj('other', 'web'));

    expect(store.fetch(['default', 'web'])).toEqual([web]);
    expect(store.fetch(['default', 'web'])[0]).toBe(web);
    expect(store.fetch(['default', 'nope'])).toEqual([]);
    expect(store.fetch(['nowhere', 'web'])).toEqual([]);
  });

  it('a prefix lookup with fewer keys than index fields returns every match, sorted by name', () => {
    const store = new IndexedStore('services');
    for (const name of ['zeta', 'alpha', 'mid']) store.upsert(obj('default', name));
    store.upsert(obj('other', 'beta'));

    expect(names(store.fetch(['default']))).toEqual(['default/alpha', 'default/mid', 'default/zeta']);
    expect(names(store.fetch([]))).toEqual(['default/alpha', 'default/mid', 'default/zeta', 'other/beta']);
  });

  it('a lookup with more keys than index fields finds nothing', () => {
    const store = new IndexedStore('services');
    store.upsert(obj('default', 'web'));
    expect(store.fetch(['default', 'web', 'extra'])).toEqual([]);
  });

  it('getSingle returns the only match, or undefined for none or several', () => {
    const store = new IndexedStore('services');
    const web = obj('default', 'web');
    store.upsert(web);
    store.upsert(obj('default', 'api'));

    expect(store.getSingle(['default', 'web'])).toBe(web);
    expect(store.getSingle(['default', 'missing'])).toBeUndefined();
    expect(store.getSingle(['default'])).toBeUndefined();
  });

  it('indexes by a label whose name contains escaped dots, e.g. kubernetes\\.io/service-name', () => {
    const store = new IndexedStore('endpointslices', ['metadata.namespace', SERVICE_NAME_LABEL]);
    const webA = slice('default', 'web-a1b2', 'web');
    const webB = slice('default', 'web-c3d4', 'web');
    const api = slice('default', 'api-e5f6', 'api');
    const otherNs = slice('other', 'web-g7h8', 'web');
    for (const s of [webB, api, webA, otherNs]) store.upsert(s);

    expect(store.fetch(['default', 'web'])).toEqual([webA, webB]);
    expect(store.fetch(['default', 'api'])).toEqual([api]);
    expect(store.fetch(['other', 'web'])).toEqual([otherNs]);
    // The escaped path is one label, not labels.kubernetes -> io/service-name.
    expect(store.fetch(['default', 'io/service-name'])).toEqual([]);
  });

  it('parseFieldPath splits on unescaped dots only', () => {
    expect(parseFieldPath(SERVICE_NAME_LABEL)).toEqual(['metadata', 'labels', 'kubernetes.io/service-name']);
    expect(parseFieldPath('metadata.namespace')).toEqual(['metadata', 'namespace']);
    expect(parseFieldPath('a\\.b\\.c')).toEqual(['a.b.c']);
    expect(() => parseFieldPath('metadata..name')).toThrow(TypeError);
  });

  it('indexes an object missing the field under the empty value, never under a real one', () => {
    const store = new IndexedStore('endpointslices', ['metadata.namespace', SERVICE_NAME_LABEL]);
    const orphan = slice('default', 'orphan', undefined);
    store.upsert(orphan);
    store.upsert(slice('default', 'web-1', 'web'));

    expect(store.fetch(['default', ''])).toEqual([orphan]);
    expect(names(store.fetch(['default', 'web']))).toEqual(['default/web-1']);
  });

  it('matches numeric and boolean index values by their string form', () => {
    const store = new IndexedStore('ports', ['spec.port', 'spec.tls']);
    const https = obj('default', 'https', { spec: { port: 443, tls: true } });
    store.upsert(https);
    store.upsert(obj('default', 'http', { spec: { port: 80, tls: false } }));

    expect(store.fetch(['443', 'true'])).toEqual([https]);
    expect(names(store.fetch(['80']))).toEqual(['default/http']);
  });

  it('re-indexes an object replaced under the same key, and reports it as not new', () => {
    const store = new IndexedStore('endpointslices', ['metadata.namespace', SERVICE_NAME_LABEL]);
    expect(store.upsert(slice('default', 's1', 'web'))).toBe(true);

    const moved = slice('default', 's1', 'api');
    expect(store.upsert(moved)).toBe(false);

    expect(store.size).toBe(1);
    expect(store.fetch(['default', 'web'])).toEqual([]);
    expect(store.fetch(['default', 'api'])).toEqual([moved]);
    expect(store.get('default/s1')).toBe(moved);
  });

  it('delete removes the object from lookups and the list; deleting a missing key reports false', () => {
    const store = new IndexedStore('services');
    store.upsert(obj('default', 'web'));
    store.upsert(obj('default', 'api'));

    expect(store.delete('default/web')).toBe(true);
    expect(store.delete('default/web')).toBe(false);

    expect(store.fetch(['default', 'web'])).toEqual([]);
    expect(names(store.fetch(['default']))).toEqual(['default/api']);
    expect(names(store.list())).toEqual(['default/api']);
    expect(store.get('default/web')).toBeUndefined();
  });

  it('list() is sorted by namespace, then name, with cluster-scoped objects first', () => {
    const store = new IndexedStore('mixed');
    for (const o of [obj('b', 'a'), obj('a-b', 'x'), obj('a', 'z'), obj(undefined, 'node-2'), obj('a', 'm'), obj(undefined, 'node-1')]) {
      store.upsert(o);
    }

    // Not a plain sort of the "namespace/name" strings: "a-b/x" < "a/m" as strings, but namespace "a" < "a-b".
    expect(names(store.list())).toEqual(['node-1', 'node-2', 'a/m', 'a/z', 'a-b/x', 'b/a']);
    expect(compareKeys('a/z', 'a-b/x')).toBeLessThan(0);
    expect(compareKeys('a/m', 'a/m')).toBe(0);
  });

  it('list() reflects every change', () => {
    const store = new IndexedStore('services');
    store.upsert(obj('default', 'b'));
    const first = store.list();
    expect(store.list()).toBe(first);

    store.upsert(obj('default', 'a'));
    expect(names(store.list())).toEqual(['default/a', 'default/b']);
    store.delete('default/b');
    expect(names(store.list())).toEqual(['default/a']);
    store.clear();
    expect(store.list()).toEqual([]);
    expect(store.fetch([])).toEqual([]);
  });

  it('objectKey is namespace/name, or the name alone for cluster-scoped objects', () => {
    expect(objectKey(obj('default', 'web'))).toBe('default/web');
    expect(objectKey(obj(undefined, 'ingress-class'))).toBe('ingress-class');
    expect(objectKey(obj('', 'ingress-class'))).toBe('ingress-class');
  });

  it('refuses an empty indexBy', () => {
    expect(() => new IndexedStore('x', [])).toThrow(TypeError);
  });
});

describe('StoreProvider', () => {
  it('has one version counter bumped by every change in any store', () => {
    const provider = new StoreProvider([
      { name: 'ingresses', indexBy: ['metadata.namespace', 'metadata.name'] },
      { name: 'services', indexBy: ['metadata.namespace', 'metadata.name'] },
    ]);
    expect(provider.version).toBe(0);

    provider.store('ingresses').upsert(obj('default', 'web'));
    provider.store('services').upsert(obj('default', 'web'));
    provider.store('services').upsert(obj('default', 'web'));
    provider.store('ingresses').delete('default/web');

    expect(provider.version).toBe(4);
  });

  it('does not bump the version for a delete of a missing key', () => {
    const provider = new StoreProvider([{ name: 'services', indexBy: ['metadata.namespace', 'metadata.name'] }]);
    provider.store('services').upsert(obj('default', 'web'));

    expect(provider.store('services').delete('default/missing')).toBe(false);

    expect(provider.version).toBe(1);
    expect(delta(provider.changesSince(0)).changes).toHaveLength(1);
  });

  it('clear() logs one delete per object', () => {
    const provider = new StoreProvider();
    const store = provider.define('services');
    store.upsert(obj('default', 'a'));
    store.upsert(obj('default', 'b'));

    store.clear();

    expect(store.size).toBe(0);
    expect(provider.version).toBe(4);
    expect(summary(delta(provider.changesSince(2)).changes)).toEqual(['delete services:default/a', 'delete services:default/b']);
  });

  it('names its stores and refuses an unknown name with an error listing the known ones', () => {
    const provider = new StoreProvider([
      { name: 'ingresses', indexBy: ['metadata.namespace', 'metadata.name'] },
      { name: 'endpointslices', indexBy: ['metadata.namespace', SERVICE_NAME_LABEL] },
    ]);

    expect(provider.names()).toEqual(['ingresses', 'endpointslices']);
    expect(provider.has('ingresses')).toBe(true);
    expect(provider.has('secrets')).toBe(false);
    expect(() => provider.store('secrets')).toThrow(/unknown store "secrets"; known stores: ingresses, endpointslices/);
    expect(provider.definitions()).toEqual([
      { name: 'ingresses', indexBy: ['metadata.namespace', 'metadata.name'] },
      { name: 'endpointslices', indexBy: ['metadata.namespace', SERVICE_NAME_LABEL] },
    ]);
  });

  it('define() returns the existing store for the same index and refuses a different one', () => {
    const provider = new StoreProvider();
    const store = provider.define('services', ['metadata.namespace', 'metadata.name']);

    expect(provider.define('services', ['metadata.namespace', 'metadata.name'])).toBe(store);
    expect(() => provider.define('services', ['metadata.name'])).toThrow(TypeError);
  });

  it('counts objects per store', () => {
    const provider = new StoreProvider();
    provider.define('a').upsert(obj('ns', 'x'));
    provider.define('b');
    provider.store('a').upsert(obj('ns', 'y'));

    expect(provider.counts()).toEqual({ a: 2, b: 0 });
  });

  it('changesSince(current version) is an empty delta', () => {
    const provider = new StoreProvider();
    provider.define('services').upsert(obj('default', 'web'));

    expect(provider.changesSince(1)).toEqual({ kind: 'delta', fromVersion: 1, toVersion: 1, changes: [] });
  });

  it('changesSince returns only the changes after the reader version, in order', () => {
    const provider = new StoreProvider();
    const services = provider.define('services');
    services.upsert(obj('default', 'a', { rev: 1 }));
    services.upsert(obj('default', 'b', { rev: 2 }));
    services.upsert(obj('default', 'c', { rev: 3 }));

    const result = delta(provider.changesSince(1));

    expect(result.fromVersion).toBe(1);
    expect(result.toVersion).toBe(3);
    expect(summary(result.changes)).toEqual(['upsert services:default/b@2', 'upsert services:default/c@3']);
  });

  it('collapses the changes of one key into its last change, in the order of those last changes', () => {
    const provider = new StoreProvider();
    const services = provider.define('services');
    const ingresses = provider.define('ingresses');
    services.upsert(obj('default', 'x', { rev: 1 }));
    services.upsert(obj('default', 'y', { rev: 2 }));
    ingresses.upsert(obj('default', 'x', { rev: 3 }));
    services.upsert(obj('default', 'x', { rev: 4 }));
    services.delete('default/y');
    services.upsert(obj('default', 'x', { rev: 6 }));

    expect(summary(delta(provider.changesSince(0)).changes)).toEqual([
      'upsert ingresses:default/x@3',
      'delete services:default/y',
      'upsert services:default/x@6',
    ]);
    expect(summary(delta(provider.changesSince(4)).changes)).toEqual(['delete services:default/y', 'upsert services:default/x@6']);
  });

  it('a key deleted and re-created since the reader version appears once, as the upsert', () => {
    const provider = new StoreProvider();
    const services = provider.define('services');
    services.upsert(obj('default', 'web', { rev: 1 }));
    services.delete('default/web');
    services.upsert(obj('default', 'web', { rev: 3 }));

    expect(summary(delta(provider.changesSince(0)).changes)).toEqual(['upsert services:default/web@3']);
  });

  it('tells a reader ahead of the provider, or at a non-integer version, to take a full sync', () => {
    const provider = new StoreProvider();
    provider.define('services').upsert(obj('default', 'web'));

    expect(provider.changesSince(5)).toEqual({ kind: 'full', toVersion: 1 });
    expect(provider.changesSince(0.5)).toEqual({ kind: 'full', toVersion: 1 });
    expect(provider.changesSince(-1)).toEqual({ kind: 'full', toVersion: 1 });
  });

  it('keeps a bounded change log: a reader within the capacity gets a delta, a far-behind reader a full sync', () => {
    const provider = new StoreProvider([], { changeLogCapacity: 3 });
    const services = provider.define('services');
    for (let i = 1; i <= 50; i++) services.upsert(obj('default', `svc-${i}`));

    expect(provider.version).toBe(50);
    expect(provider.changesSince(0)).toEqual({ kind: 'full', toVersion: 50 });
    expect(provider.changesSince(40)).toEqual({ kind: 'full', toVersion: 50 });
    const recent = delta(provider.changesSince(47));
    expect(summary(recent.changes)).toEqual(['upsert services:default/svc-48', 'upsert services:default/svc-49', 'upsert services:default/svc-50']);
    // The window never shrinks below the capacity and never grows past twice the capacity.
    expect(provider.oldestDeltaVersion).toBeLessThanOrEqual(47);
    expect(provider.oldestDeltaVersion).toBeGreaterThanOrEqual(50 - 2 * 3);
    expect(provider.changesSince(provider.oldestDeltaVersion).kind).toBe('delta');
    expect(provider.changesSince(provider.oldestDeltaVersion - 1).kind).toBe('full');
  });

  it('sizes the default change log by the number of objects, so churn on a small cluster keeps little history alive', () => {
    const provider = new StoreProvider();
    const services = provider.define('services');
    for (let i = 0; i < 10; i++) services.upsert(obj('default', `svc-${i}`));
    expect(provider.changeLogCapacity).toBe(4096);
    // 30,000 modifications of 10 objects: the log is trimmed to between 1 and 2 times 4,096.
    for (let i = 0; i < 30_000; i++) services.upsert(obj('default', `svc-${i % 10}`));
    const window = provider.version - provider.oldestDeltaVersion;
    expect(window).toBeGreaterThanOrEqual(4096);
    expect(window).toBeLessThan(2 * 4096);
    expect(provider.changesSince(provider.version - 4096).kind).toBe('delta');
    expect(provider.changesSince(0).kind).toBe('full');

    // A large cluster gets a larger log: one change per object.
    const big = new StoreProvider();
    const pods = big.define('pods');
    for (let i = 0; i < 10_000; i++) pods.upsert(obj('default', `pod-${i}`));
    expect(big.changeLogCapacity).toBe(10_000);
    expect(big.changesSince(0).kind).toBe('delta');
  });

  it('refuses a changeLogCapacity below 1', () => {
    expect(() => new StoreProvider([], { changeLogCapacity: 0 })).toThrow(TypeError);
  });

  it('snapshot() holds every object of every store, sorted, with the index and the current version', () => {
    const provider = new StoreProvider([
      { name: 'services', indexBy: ['metadata.namespace', 'metadata.name'] },
      { name: 'endpointslices', indexBy: ['metadata.namespace', SERVICE_NAME_LABEL] },
    ]);
    provider.store('services').upsert(obj('default', 'web'));
    provider.store('services').upsert(obj('default', 'api'));
    provider.store('endpointslices').upsert(slice('default', 'web-1', 'web'));

    const snapshot = provider.snapshot();

    expect(snapshot.toVersion).toBe(3);
    expect(Object.keys(snapshot.stores)).toEqual(['services', 'endpointslices']);
    expect(names(snapshot.stores['services']?.objects ?? [])).toEqual(['default/api', 'default/web']);
    expect(names(snapshot.stores['endpointslices']?.objects ?? [])).toEqual(['default/web-1']);
    expect(snapshot.stores['endpointslices']?.indexBy).toEqual(['metadata.namespace', SERVICE_NAME_LABEL]);
  });

  it('a snapshot is a copy: later changes and edits of its arrays do not leak either way', () => {
    const provider = new StoreProvider();
    const services = provider.define('services');
    services.upsert(obj('default', 'web'));
    const snapshot = provider.snapshot();

    services.upsert(obj('default', 'api'));
    snapshot.stores['services']?.objects.pop();

    expect(names(provider.snapshot().stores['services']?.objects ?? [])).toEqual(['default/api', 'default/web']);
    expect(snapshot.toVersion).toBe(1);
  });
});

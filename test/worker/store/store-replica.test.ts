// A worker's StoreReplica: a full sync replaces everything, a delta applies only on top of the
// version it starts from, and anything the replica cannot apply makes it ask for a full sync.
import { describe, expect, it } from 'vitest';
import { StoreReplica } from '../../../src/worker/store/store-replica.js';
import { objectKey } from '../../../src/worker/store/indexed-store.js';
import type { KubeObject, ReplicaSync, StoreChange } from '../../../src/worker/protocol.js';

const BY_NAME = ['metadata.namespace', 'metadata.name'];
const BY_SERVICE = ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name'];

function obj(namespace: string, name: string, rev = 0, labels?: Record<string, string>): KubeObject {
  return { metadata: { name, namespace, ...(labels === undefined ? {} : { labels }) }, rev };
}

function full(toVersion: number, stores: Record<string, { indexBy?: string[]; objects: KubeObject[] }>): ReplicaSync {
  const entries = Object.entries(stores).map(([name, { indexBy = BY_NAME, objects }]) => [name, { indexBy, objects }] as const);
  return { kind: 'full', toVersion, stores: Object.fromEntries(entries) };
}

function delta(fromVersion: number, toVersion: number, ...changes: StoreChange[]): ReplicaSync {
  return { kind: 'delta', fromVersion, toVersion, changes };
}

function upsert(store: string, object: KubeObject, key = objectKey(object)): StoreChange {
  return { op: 'upsert', store, key, object };
}

function remove(store: string, key: string): StoreChange {
  return { op: 'delete', store, key };
}

/** `key@rev` of every object in a replica's store, in list order. */
function contents(replica: StoreReplica, store: string): string[] | undefined {
  return replica.store(store)?.list().map((o) => `${objectKey(o)}@${String(o['rev'])}`);
}

/** A replica at version 3 holding services a and b, and no ingresses. */
function syncedReplica(): StoreReplica {
  const replica = new StoreReplica();
  replica.apply(full(3, { services: { objects: [obj('ns', 'a'), obj('ns', 'b')] }, ingresses: { objects: [] } }));
  return replica;
}

describe('StoreReplica', () => {
  it('starts at version -1 with no stores', () => {
    const replica = new StoreReplica();
    expect(replica.version).toBe(-1);
    expect(replica.store('services')).toBeUndefined();
  });

  describe('full sync', () => {
    it('takes every store of the snapshot and reports the snapshot version', () => {
      const replica = new StoreReplica();
      const ack = replica.apply(full(7, { services: { objects: [obj('ns', 'b'), obj('ns', 'a')] }, ingresses: { objects: [obj('x', 'i')] } }));

      expect(ack).toEqual({ accepted: true, version: 7 });
      expect(replica.version).toBe(7);
      expect(contents(replica, 'services')).toEqual(['ns/a@0', 'ns/b@0']);
      expect(contents(replica, 'ingresses')).toEqual(['x/i@0']);
    });

    it('indexes each store by the fields its snapshot names', () => {
      const replica = new StoreReplica();
      const slice = obj('ns', 'web-abc', 0, { 'kubernetes.io/service-name': 'web' });
      replica.apply(full(1, { endpointslices: { indexBy: BY_SERVICE, objects: [slice] } }));

      expect(replica.store('endpointslices')?.indexBy).toEqual(BY_SERVICE);
      expect(replica.store('endpointslices')?.fetch(['ns', 'web'])).toEqual([slice]);
    });

    it('replaces what the replica held, dropping stores the snapshot no longer has', () => {
      const replica = syncedReplica();
      const ack = replica.apply(full(9, { services: { objects: [obj('ns', 'c', 2)] } }));

      expect(ack).toEqual({ accepted: true, version: 9 });
      expect(contents(replica, 'services')).toEqual(['ns/c@2']);
      expect(replica.store('ingresses')).toBeUndefined();
    });

    it('is accepted at any version, even one older than the replica holds', () => {
      const replica = syncedReplica();
      expect(replica.apply(full(1, { services: { objects: [] } }))).toEqual({ accepted: true, version: 1 });
      expect(replica.version).toBe(1);
    });
  });

  describe('delta sync', () => {
    it('applies a delta that starts at the replica version and moves to its end version', () => {
      const replica = syncedReplica();
      const ack = replica.apply(delta(3, 5, upsert('services', obj('ns', 'c', 1)), upsert('ingresses', obj('ns', 'i', 1))));

      expect(ack).toEqual({ accepted: true, version: 5 });
      expect(replica.version).toBe(5);
      expect(contents(replica, 'services')).toEqual(['ns/a@0', 'ns/b@0', 'ns/c@1']);
      expect(contents(replica, 'ingresses')).toEqual(['ns/i@1']);
    });

    it('applies the changes of a delta in order, so the last change of a key wins', () => {
      const replica = syncedReplica();
      replica.apply(
        delta(
          3,
          8,
          upsert('services', obj('ns', 'a', 1)),
          upsert('services', obj('ns', 'a', 2)),
          remove('services', 'ns/b'),
          upsert('services', obj('ns', 'b', 3)),
          upsert('services', obj('ns', 'c', 4)),
          remove('services', 'ns/c'),
        ),
      );

      expect(contents(replica, 'services')).toEqual(['ns/a@2', 'ns/b@3']);
    });

    it('applies consecutive deltas one after the other', () => {
      const replica = syncedReplica();
      expect(replica.apply(delta(3, 4, upsert('services', obj('ns', 'c', 1))))).toEqual({ accepted: true, version: 4 });
      expect(replica.apply(delta(4, 6, remove('services', 'ns/a'), upsert('services', obj('ns', 'c', 2))))).toEqual({ accepted: true, version: 6 });

      expect(contents(replica, 'services')).toEqual(['ns/b@0', 'ns/c@2']);
    });

    it('removes deleted objects from the store and its index', () => {
      const replica = syncedReplica();
      replica.apply(delta(3, 4, remove('services', 'ns/a')));

      expect(replica.store('services')?.get('ns/a')).toBeUndefined();
      expect(replica.store('services')?.fetch(['ns', 'a'])).toEqual([]);
      expect(replica.store('services')?.size).toBe(1);
    });

    it('accepts the delete of a key it does not hold', () => {
      const replica = syncedReplica();
      expect(replica.apply(delta(3, 4, remove('services', 'ns/missing')))).toEqual({ accepted: true, version: 4 });
      expect(contents(replica, 'services')).toEqual(['ns/a@0', 'ns/b@0']);
    });

    it('stores an upserted object under the key the change names', () => {
      const replica = syncedReplica();
      replica.apply(delta(3, 4, upsert('services', obj('ns', 'c'), 'custom-key')));

      expect(replica.store('services')?.get('custom-key')?.metadata.name).toBe('c');
      expect(replica.store('services')?.get('ns/c')).toBeUndefined();
    });

    it('moves to the end version of a delta without changes', () => {
      const replica = syncedReplica();
      expect(replica.apply(delta(3, 4))).toEqual({ accepted: true, version: 4 });
    });
  });

  describe('a delta it cannot apply', () => {
    it('refuses a delta from another version with accepted:false and its own version, changing nothing', () => {
      const replica = syncedReplica();
      for (const fromVersion of [2, 4]) {
        const ack = replica.apply(delta(fromVersion, 6, upsert('services', obj('ns', 'c', 1)), remove('services', 'ns/a')));
        expect(ack).toEqual({ accepted: false, version: 3 });
      }

      expect(replica.version).toBe(3);
      expect(contents(replica, 'services')).toEqual(['ns/a@0', 'ns/b@0']);
    });

    it('refuses a delta before its first full sync', () => {
      const replica = new StoreReplica();
      expect(replica.apply(delta(0, 1, upsert('services', obj('ns', 'a'))))).toEqual({ accepted: false, version: -1 });
      expect(replica.store('services')).toBeUndefined();
    });

    it('resets to version -1 and asks for a full sync when a delta names a store it does not hold', () => {
      const replica = syncedReplica();
      const ack = replica.apply(delta(3, 5, upsert('services', obj('ns', 'c', 1)), upsert('secrets', obj('ns', 's', 1))));

      expect(ack).toEqual({ accepted: false, version: -1 });
      expect(replica.version).toBe(-1);
      expect(replica.store('secrets')).toBeUndefined();
    });

    it('refuses every delta after such a reset, until a full sync brings it back', () => {
      const replica = syncedReplica();
      replica.apply(delta(3, 4, remove('secrets', 'ns/s')));

      expect(replica.apply(delta(3, 4, remove('services', 'ns/a')))).toEqual({ accepted: false, version: -1 });
      expect(replica.apply(full(4, { services: { objects: [obj('ns', 'b', 5)] }, secrets: { objects: [] } }))).toEqual({ accepted: true, version: 4 });
      expect(replica.apply(delta(4, 5, upsert('secrets', obj('ns', 's', 6))))).toEqual({ accepted: true, version: 5 });
      expect(contents(replica, 'services')).toEqual(['ns/b@5']);
      expect(contents(replica, 'secrets')).toEqual(['ns/s@6']);
    });
  });

  describe('re-checking, not trusting, what it is sent', () => {
    const SLICES = { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' };

    it('rebuilds each store with the definition of the snapshot, stamping it on objects that lack one', () => {
      const replica = new StoreReplica();
      replica.apply({ kind: 'full', toVersion: 1, stores: { endpointslices: { indexBy: BY_NAME, ...SLICES, objects: [obj('ns', 'a')] } } });
      expect(replica.store('endpointslices')?.definition).toEqual(SLICES);
      expect(replica.store('endpointslices')?.get('ns/a')).toMatchObject(SLICES);
    });

    it('does not hold an object of another kind, and drops what its key held before', () => {
      const replica = new StoreReplica();
      const service = { ...obj('ns', 'a'), kind: 'Service', apiVersion: 'v1' };
      replica.apply({ kind: 'full', toVersion: 1, stores: { endpointslices: { indexBy: BY_NAME, ...SLICES, objects: [obj('ns', 'a'), service] } } });
      expect(replica.refused).toBe(1);
      expect(contents(replica, 'endpointslices')).toEqual(['ns/a@0']);
      expect(replica.apply(delta(1, 2, upsert('endpointslices', service)))).toEqual({ accepted: true, version: 2 });
      expect(replica.refused).toBe(2);
      expect(contents(replica, 'endpointslices')).toEqual([]);
    });
  });

  describe('holding each object in compact form', () => {
    const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

    it('holds a copy with the same fields and values as the object it was sent', () => {
      const replica = new StoreReplica();
      const ingress = {
        metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' }, annotations: { 'haproxy.org/timeout-server': '5s' } },
        spec: { rules: [{ host: 'web.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
        status: { loadBalancer: {} },
        empty: null,
        flag: false,
      };
      replica.apply(full(1, { ingresses: { objects: [ingress] } }));

      const held = replica.store('ingresses')?.get('ns/web');
      expect(held).not.toBe(ingress);
      expect(held).toEqual(ingress);
    });

    it("drops metadata.managedFields and kubectl's last-applied annotation, and nothing else", () => {
      const replica = new StoreReplica();
      const object = {
        metadata: { name: 'web', namespace: 'ns', managedFields: [{ manager: 'kubectl' }], annotations: { [LAST_APPLIED]: '{"big":true}', keep: 'yes' } },
        data: { [LAST_APPLIED]: 'a data key of the same name stays', managedFields: 'so does this' },
      };
      replica.apply(full(1, { configmaps: { objects: [object] } }));

      expect(replica.store('configmaps')?.get('ns/web')).toEqual({
        metadata: { name: 'web', namespace: 'ns', annotations: { keep: 'yes' } },
        data: { [LAST_APPLIED]: 'a data key of the same name stays', managedFields: 'so does this' },
      });
    });

    it('keeps an object that is not plain JSON data exactly as it arrived', () => {
      const replica = new StoreReplica();
      const dated = { metadata: { name: 'a', namespace: 'ns' }, at: new Date(0) };
      const undefinedField = { metadata: { name: 'b', namespace: 'ns' }, gone: undefined };
      const shared = { port: 80 };
      const sharing = { metadata: { name: 'c', namespace: 'ns' }, first: shared, second: shared };
      replica.apply(full(1, { things: { objects: [dated, undefinedField, sharing] } }));

      const store = replica.store('things');
      expect(store?.get('ns/a')).toBe(dated);
      expect(store?.get('ns/b')).toBe(undefinedField);
      expect(store?.get('ns/c')).toBe(sharing);
    });

    it('still refuses, per object, what admission refuses', () => {
      const replica = new StoreReplica();
      replica.apply(full(1, { services: { objects: [null as unknown as KubeObject, { metadata: { name: '' } }, obj('ns', 'a')] } }));

      expect(replica.refused).toBe(2);
      expect(contents(replica, 'services')).toEqual(['ns/a@0']);
    });
  });
});

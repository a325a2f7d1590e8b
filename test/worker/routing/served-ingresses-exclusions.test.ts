// The served Ingresses follow the render gate's exclusions: an Ingress left out of one render (its
// version refused by HAProxy, or its namespace left out of a trial render) is served again by the
// next render that does not exclude it, though the store did not change in between; and the
// other way round. Random sequences of exclusions and store changes, against the whole computation.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptsClass, classPolicy } from '../../../src/worker/routing/ingress-class.js';
import { modelOptions } from '../../../src/worker/routing/model.js';
import { servedIngresses } from '../../../src/worker/routing/served-ingresses.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { IndexedStore, objectKey } from '../../../src/worker/store/indexed-store.js';
import { ExclusionFilter, objectVersion } from '../../../src/worker/store/render-exclusions.js';
import type { RenderExclusions } from '../../../src/worker/protocol.js';
import { ingress, rule } from '../../helpers/cluster.js';

const options = modelOptions({});
const INGRESS = { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1' };

function freshStores(): Map<string, IndexedStore> {
  return new Map([['ingresses', new IndexedStore('ingresses', undefined, INGRESS)]]);
}

const app = (namespace: string, name: string, host = `${name}.example.com`) => ingress(namespace, name, { ingressClassName: 'haproxy', rules: [rule(host, { path: '/', service: 'web' })] });

function refusal(store: IndexedStore, key: string): RenderExclusions['objects'][number] | undefined {
  const object = store.get(key);
  if (object === undefined) return undefined;
  return { kind: 'Ingress', namespace: String(object.metadata.namespace), name: object.metadata.name, version: objectVersion(object), reason: 'refused' };
}

function served(stores: Map<string, IndexedStore>, exclusions: RenderExclusions | undefined): readonly string[] | undefined {
  return servedIngresses(new GuardedReader((name) => stores.get(name), () => undefined, undefined, new ExclusionFilter(exclusions)), options);
}

describe('served Ingresses under the render gate exclusions', () => {
  it('serves an Ingress again once a render no longer excludes it, the store unchanged', () => {
    const stores = freshStores();
    const ingresses = stores.get('ingresses') as IndexedStore;
    ingresses.upsert(app('shop', 'a'));
    ingresses.upsert(app('shop', 'b'));
    const excluded = refusal(ingresses, 'shop/a');
    expect(served(stores, { objects: excluded === undefined ? [] : [excluded] })).toEqual(['shop/b']);
    expect(served(stores, undefined)).toEqual(['shop/a', 'shop/b']);
  });

  it('leaves out an Ingress a render excludes after one that served it, the store unchanged', () => {
    const stores = freshStores();
    const ingresses = stores.get('ingresses') as IndexedStore;
    ingresses.upsert(app('shop', 'a'));
    ingresses.upsert(app('trial', 'b'));
    expect(served(stores, undefined)).toEqual(['shop/a', 'trial/b']);
    expect(served(stores, { objects: [], namespaces: ['trial'] })).toEqual(['shop/a']);
  });

  const step = fc.record({
    change: fc.option(fc.record({ namespace: fc.constantFrom('a', 'b'), name: fc.constantFrom('w', 'x', 'y'), remove: fc.boolean() }), { nil: undefined }),
    refused: fc.subarray(['a/w', 'a/x', 'a/y', 'b/w', 'b/x', 'b/y']),
    namespaces: fc.subarray(['a', 'b'], { maxLength: 1 }),
  });

  it('are the accepted Ingresses the exclusions leave, after any sequence of changes and exclusions', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 25 }), (steps) => {
        const stores = freshStores();
        const ingresses = stores.get('ingresses') as IndexedStore;
        let generation = 0;
        for (const s of steps) {
          if (s.change !== undefined) {
            const key = `${s.change.namespace}/${s.change.name}`;
            if (s.change.remove) ingresses.delete(key);
            else ingresses.upsert(app(s.change.namespace, s.change.name, `h${++generation}.example.com`));
          }
          const objects = s.refused.map((key) => refusal(ingresses, key)).filter((found) => found !== undefined);
          const exclusions: RenderExclusions = { objects, namespaces: s.namespaces };
          const reader = new GuardedReader((name) => stores.get(name), () => undefined, undefined, new ExclusionFilter(exclusions));
          const policy = classPolicy(reader, options);
          const whole = reader.list('ingresses').filter((object) => acceptsClass(object, policy)).map(objectKey);
          expect(served(stores, exclusions)).toEqual(whole);
        }
      }),
      { numRuns: 200, seed: 17 },
    );
  });
});

// The served Ingresses kept between renders (served-ingresses.ts: each Ingress of the last list
// keeps its decision) against the whole computation, after random sequences of Ingresses added,
// changed (class, rejected annotation) and deleted, with and without an IngressClass of ours.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptsClass, classPolicy } from '../../../src/worker/routing/ingress-class.js';
import { modelOptions } from '../../../src/worker/routing/model.js';
import { servedIngresses } from '../../../src/worker/routing/served-ingresses.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { objectKey } from '../../../src/worker/store/indexed-store.js';
import { ingress, rule } from '../../helpers/cluster.js';

const options = modelOptions({});
const INGRESS = { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1' };
const CLASS = { kind: 'IngressClass', apiVersion: 'networking.k8s.io/v1' };

const step = fc.record({
  op: fc.constantFrom('upsert', 'upsert', 'delete', 'class'),
  namespace: fc.constantFrom('a', 'b'),
  name: fc.constantFrom('w', 'x', 'y', 'z'),
  className: fc.constantFrom(undefined, 'haproxy', 'nginx', 'mine'),
  bad: fc.boolean(),
});

describe('served Ingresses kept between renders', () => {
  it('are those of our classes the guard accepts, after any sequence of changes', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => {
        const stores = new Map([
          ['ingresses', new IndexedStore('ingresses', undefined, INGRESS)],
          ['ingressclasses', new IndexedStore('ingressclasses', ['metadata.name'], CLASS)],
        ]);
        const ingresses = stores.get('ingresses') as IndexedStore;
        let generation = 0;
        for (const s of steps) {
          if (s.op === 'delete') ingresses.delete(`${s.namespace}/${s.name}`);
          else if (s.op === 'class') {
            const cls = { ...CLASS, metadata: { name: 'mine', annotations: { 'ingressclass.kubernetes.io/is-default-class': String(s.bad) } }, spec: { controller: 'haproxy.org/ingress-controller' } };
            (stores.get('ingressclasses') as IndexedStore).upsert(cls);
          } else {
            const annotations: Record<string, string> = s.bad ? { 'haproxy.org/timeout-server': 'forever' } : {};
            ingresses.upsert(ingress(s.namespace, s.name, { ...(s.className === undefined ? {} : { ingressClassName: s.className }), rules: [rule(`h${++generation}.example.com`, { path: '/', service: 'web' })] }, { annotations }));
          }
          const reader = new GuardedReader((name) => stores.get(name), () => undefined);
          const policy = classPolicy(reader, options);
          const whole = reader.list('ingresses').filter((object) => acceptsClass(object, policy)).map(objectKey);
          expect(servedIngresses(reader, options)).toEqual(whole);
        }
      }),
      { numRuns: 200, seed: 17 },
    );
  });
});

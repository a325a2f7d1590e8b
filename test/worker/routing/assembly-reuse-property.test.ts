// AssemblyReuse (the TLS hosts and default backend kept between builds) against assignTlsHosts
// and chooseDefaultBackend computed afresh: after any sequence of builds where Ingresses come,
// go, keep their objects, are rebuilt with equal content or change their claims, timestamps,
// default backends or the namespaces that hold their hosts, it gives the same result and the
// same warnings, in the same order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssemblyReuse } from '../../../src/worker/routing/assembly-reuse.js';
import type { Notice } from '../../../src/worker/routing/findings.js';
import { assignTlsHosts, chooseDefaultBackend, type ClaimSource } from '../../../src/worker/routing/model-assembly.js';

const NAMES = ['a', 'b', 'c', 'd', 'e'];
const NAMESPACES = ['x', 'y'];
const HOSTS = ['h1.example.com', 'h2.example.com', '*.example.com'];

/** One Ingress's claim sources as a build sees them; `rebuilt` hands out equal content in new objects. */
const ingress = fc.record({
  name: fc.constantFrom(...NAMES),
  namespace: fc.constantFrom(...NAMESPACES),
  created: fc.constantFrom(1, 2, 3, Number.POSITIVE_INFINITY),
  secrets: fc.array(fc.record({ secret: fc.constantFrom('s1', 's2'), hosts: fc.uniqueArray(fc.constantFrom(...HOSTS), { maxLength: 3 }) }), { maxLength: 2 }),
  defaultBackend: fc.constantFrom(undefined, 'web', 'api'),
});
type Spec = typeof ingress extends fc.Arbitrary<infer T> ? T : never;

function sourceOf(spec: Spec): ClaimSource {
  const owner = `Ingress ${spec.namespace}/${spec.name}`;
  return {
    claimant: { owner, namespace: spec.namespace, name: spec.name, created: spec.created },
    tls: spec.secrets.map(({ secret, hosts }) => ({ certName: `${spec.namespace}_${secret}.pem`, pem: `PEM ${spec.namespace}/${secret}`, hosts: [...hosts].sort() })),
    defaultBackend: spec.defaultBackend,
  };
}

const build = fc.record({
  specs: fc.uniqueArray(ingress, { selector: (s) => `${s.namespace}/${s.name}`, maxLength: 6 }),
  /** Per Ingress: keep last build's object when its content is equal, or hand a rebuilt one. */
  keep: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
  /** The namespace holding each host against the others, or none. */
  holders: fc.array(fc.constantFrom(undefined, ...NAMESPACES), { minLength: HOSTS.length, maxLength: HOSTS.length }),
  routed: fc.boolean(),
  /** Whether the Ingresses are those of the last build (only the keeps and host holders differ). */
  same: fc.boolean(),
});

function recorder(): { notices: Notice[]; warn: (message: string, finding?: Notice['finding']) => void } {
  const notices: Notice[] = [];
  return { notices, warn: (message, finding) => notices.push(finding === undefined ? { message } : { message, finding }) };
}

describe('the cross-Ingress decisions kept between builds', () => {
  it('are the ones computed afresh, with the same warnings, after any sequence of builds', () => {
    fc.assert(
      fc.property(fc.array(build, { minLength: 1, maxLength: 10 }), (builds) => {
        const reuse = new AssemblyReuse();
        let last = new Map<string, { spec: string; source: ClaimSource }>();
        let lastSpecs: Spec[] = [];
        for (const { specs: drawn, keep, holders, routed, same } of builds) {
          const specs = same ? lastSpecs : drawn;
          lastSpecs = specs;
          const next = new Map<string, { spec: string; source: ClaimSource }>();
          const sources = specs.map((spec, i) => {
            const key = `${spec.namespace}/${spec.name}`;
            const text = JSON.stringify(spec);
            const before = last.get(key);
            const source = keep[i] === true && before?.spec === text ? before.source : sourceOf(spec);
            next.set(key, { spec: text, source });
            return source;
          });
          last = next;
          const hostHolder = routed
            ? (host: string, namespace: string): string | undefined => {
                const holder = holders[HOSTS.indexOf(host)];
                return holder === namespace ? undefined : holder;
              }
            : undefined;
          const kept = recorder();
          const fresh = recorder();
          expect(reuse.assignTlsHosts(sources, kept.warn, hostHolder)).toEqual(assignTlsHosts(sources, fresh.warn, hostHolder));
          expect(reuse.chooseDefaultBackend(sources, kept.warn)).toEqual(chooseDefaultBackend(sources, fresh.warn));
          expect(kept.notices).toEqual(fresh.notices);
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });

  it('gives back the last result object while the claims are equal in content', () => {
    const reuse = new AssemblyReuse();
    const spec: Spec = { name: 'a', namespace: 'x', created: 1, secrets: [{ secret: 's1', hosts: ['h1.example.com'] }], defaultBackend: undefined };
    const first = reuse.assignTlsHosts([sourceOf(spec)], () => undefined);
    expect(reuse.assignTlsHosts([sourceOf(spec)], () => undefined)).toBe(first);
    expect(reuse.assignTlsHosts([sourceOf({ ...spec, created: 2 })], () => undefined)).not.toBe(first);
  });
});

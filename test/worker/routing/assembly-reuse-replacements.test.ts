// AssemblyReuse (the TLS hosts and default backend kept between builds) fed sources made from the
// last build's by replacing a few (recorded as the model builder's quick walk records them,
// list-replacements.ts), with or without TLS claims and default backends before and after, while
// the namespaces holding the hosts change: it gives what assignTlsHosts and chooseDefaultBackend
// give computed afresh, with the same warnings in the same order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssemblyReuse } from '../../../src/worker/routing/assembly-reuse.js';
import type { Notice } from '../../../src/worker/routing/findings.js';
import { assignTlsHosts, chooseDefaultBackend, type ClaimSource } from '../../../src/worker/routing/model-assembly.js';
import { recordReplacements } from '../../../src/worker/store/list-replacements.js';

const NAMESPACES = ['x', 'y'];
const HOSTS = ['h1.example.com', 'h2.example.com', '*.example.com'];

const claims = fc.record({
  namespace: fc.constantFrom(...NAMESPACES),
  created: fc.constantFrom(1, 2, 3),
  hosts: fc.option(fc.uniqueArray(fc.constantFrom(...HOSTS), { minLength: 1, maxLength: 2 }), { nil: undefined }),
  defaultBackend: fc.constantFrom(undefined, undefined, 'web', 'api'),
});
type Claims = typeof claims extends fc.Arbitrary<infer T> ? T : never;

/** The source of Ingress `name`: TLS claims when it has hosts, a default backend when it names one. */
function sourceOf(name: string, c: Claims): ClaimSource {
  return {
    claimant: { owner: `Ingress ${c.namespace}/${name}`, namespace: c.namespace, name, created: c.created },
    tls: c.hosts === undefined ? [] : [{ certName: `${c.namespace}_s.pem`, pem: `PEM ${c.namespace}`, hosts: [...c.hosts].sort() }],
    defaultBackend: c.defaultBackend,
  };
}

const build = fc.record({
  replace: fc.array(fc.record({ at: fc.nat({ max: 5 }), claims }), { maxLength: 3 }),
  recorded: fc.boolean(),
  holders: fc.array(fc.constantFrom(undefined, ...NAMESPACES), { minLength: HOSTS.length, maxLength: HOSTS.length }),
  routed: fc.boolean(),
});

function recorder(): { notices: Notice[]; warn: (message: string, finding?: Notice['finding']) => void } {
  const notices: Notice[] = [];
  return { notices, warn: (message, finding) => notices.push(finding === undefined ? { message } : { message, finding }) };
}

describe('the cross-Ingress decisions after a few sources were replaced', () => {
  it('are the ones computed afresh, with the same warnings, after any sequence of builds', () => {
    fc.assert(
      fc.property(fc.array(claims, { minLength: 6, maxLength: 6 }), fc.array(build, { minLength: 1, maxLength: 10 }), (start, builds) => {
        const reuse = new AssemblyReuse();
        let sources: readonly ClaimSource[] = start.map((c, i) => sourceOf(`i${i}`, c));
        builds.forEach(({ replace, recorded, holders, routed }, b) => {
          if (b > 0) {
            const next = [...sources];
            for (const { at, claims: c } of replace) next[at] = sourceOf(`i${at}`, c);
            if (recorded) recordReplacements(next, sources, replace.map((r) => r.at));
            sources = next;
          }
          const hostHolder = routed ? (host: string, namespace: string): string | undefined => (holders[HOSTS.indexOf(host)] === namespace ? undefined : holders[HOSTS.indexOf(host)]) : undefined;
          const kept = recorder();
          const fresh = recorder();
          expect(reuse.assignTlsHosts(sources, kept.warn, hostHolder)).toEqual(assignTlsHosts(sources, fresh.warn, hostHolder));
          expect(reuse.chooseDefaultBackend(sources, kept.warn)).toEqual(chooseDefaultBackend(sources, fresh.warn));
          expect(kept.notices).toEqual(fresh.notices);
        });
      }),
      { numRuns: 500 },
    );
  });
});

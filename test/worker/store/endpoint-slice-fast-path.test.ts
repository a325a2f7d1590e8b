// The EndpointSlice check keeps a whole endpoint without building anything for it (no position
// text, no filtered copy of its addresses). This holds it to the check as it was written before,
// kept below as the reference: on hostile slices (bad, refused and non-string addresses, holes,
// conditions of every shape) both give the same reasons, the same view and the same identities.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressProblem } from '../../../src/worker/store/address-policy.js';
import { checkEndpointSlice } from '../../../src/worker/store/endpoint-slice-check.js';
import { isRecord, type KindOutcome, type Problem } from '../../../src/worker/store/field-rules.js';
import { policyOf, type GuardPolicy } from '../../../src/worker/store/guard-context.js';
import { quote } from '../../../src/worker/store/log-text.js';
import type { KubeObject } from '../../../src/worker/protocol.js';

/** The endpoint part of the check as first written: every endpoint through `filter`, its position always spelled out. */
function referenceEndpoints(endpoints: readonly unknown[], ports: readonly number[], policy: GuardPolicy): { kept: unknown[]; dropped: Problem[]; changed: boolean } {
  const dropped: Problem[] = [];
  const kept: unknown[] = [];
  for (let e = 0; e < endpoints.length; e++) {
    const endpoint = referenceEndpoint(endpoints[e], `endpoints[${e}]`, ports, policy, dropped);
    if (endpoint !== undefined) kept.push(endpoint);
  }
  const changed = kept.length !== endpoints.length || kept.some((endpoint, i) => endpoint !== endpoints[i]);
  return { kept, dropped, changed };
}

function referenceEndpoint(endpoint: unknown, at: string, ports: readonly number[], policy: GuardPolicy, dropped: Problem[]): unknown {
  const drop = (reason: string): undefined => {
    dropped.push({ scope: 'endpoint', reason: `${reason}; the endpoint is dropped` });
    return undefined;
  };
  if (!isRecord(endpoint)) return drop(`${at} is ${quote(endpoint)}, not a mapping`);
  const conditions = endpoint.conditions;
  if (conditions !== undefined && conditions !== null) {
    if (!isRecord(conditions)) return drop(`${at}.conditions is ${quote(conditions)}, not a mapping`);
    for (const field of ['ready', 'serving', 'terminating'] as const) {
      const value = conditions[field];
      if (value !== undefined && value !== null && typeof value !== 'boolean') return drop(`${at}.conditions.${field} ${quote(value)} is not a boolean`);
    }
  }
  const addresses = endpoint.addresses;
  if (!Array.isArray(addresses)) return drop(`${at}.addresses is ${quote(addresses)}, not a list`);
  if (addresses.length > 100) return drop(`${at}.addresses has ${addresses.length} entries, over the limit of 100`);
  const good = addresses.filter((address: unknown, i: number) => {
    const problem = typeof address === 'string' ? addressProblem(address, ports, policy) : 'is not a string';
    if (problem === null) return true;
    dropped.push({ scope: 'endpoint', reason: `${at}.addresses[${i}] ${quote(address, 60)} ${problem}; it is dropped` });
    return false;
  });
  if (good.length === 0) return undefined;
  if (good.length === addresses.length && conditions !== null) return endpoint;
  const view: Record<string, unknown> = { ...endpoint, addresses: Object.freeze(good) };
  if (conditions === null) delete view.conditions;
  return Object.freeze(view);
}

const ADDRESSES = ['10.0.0.1', '10.1.2.3', '127.0.0.1', '::1', '169.254.169.254', '0.0.0.0', 'fe80::1%eth0', '::ffff:127.0.0.1', '224.0.0.1', '2001:db8::1', 'not-an-ip', '', '10.0.0.1\n', '300.1.1.1'];
const address: fc.Arbitrary<unknown> = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...ADDRESSES) }, { weight: 1, arbitrary: fc.constantFrom(null, undefined, 7, {}, ['10.0.0.1']) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) });
/** Address lists, now and then with holes (a sparse array survives a structured clone). */
const addresses: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.array(address, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.sparseArray(address, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, 'x', {}) },
);
const condition: fc.Arbitrary<unknown> = fc.constantFrom(undefined, null, true, false, 'yes', 0);
const conditions: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ ready: condition, serving: condition, terminating: condition }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, 'ready', []) },
);
const endpoint: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ addresses, conditions }, { requiredKeys: ['addresses'] }) },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, 'endpoint', 3) },
);
const slice = fc.record({
  endpoints: fc.oneof({ weight: 8, arbitrary: fc.array(endpoint, { maxLength: 4 }) }, { weight: 1, arbitrary: fc.sparseArray(endpoint, { maxLength: 3 }) }),
  port: fc.constantFrom(8080, 80, 443),
  loopback: fc.boolean(),
});

function endpointsOf(outcome: KindOutcome, given: readonly unknown[]): readonly unknown[] {
  if ('rejected' in outcome) throw new Error(`unexpected rejection: ${outcome.rejected.reason}`);
  const { patch } = outcome as { readonly patch?: Readonly<Record<string, unknown>> };
  return patch === undefined ? given : (patch.endpoints as readonly unknown[]);
}

describe('the EndpointSlice check with whole endpoints kept as they are', () => {
  it('gives the reasons, the view and the object identities the reference check gives, on hostile slices', () => {
    fc.assert(
      fc.property(slice, ({ endpoints, port, loopback }) => {
        const policy = policyOf(Object.freeze({ allowLoopbackEndpoints: loopback }));
        const object = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 's', namespace: 'n' }, addressType: 'IPv4', ports: [{ port }], endpoints } as unknown as KubeObject;
        const outcome = checkEndpointSlice(object, policy);
        const reference = referenceEndpoints(endpoints, [port], policy);
        expect('rejected' in outcome ? [] : outcome.dropped).toEqual(reference.dropped);
        expect((outcome as { readonly patch?: unknown }).patch !== undefined).toBe(reference.changed);
        const kept = endpointsOf(outcome, endpoints);
        if (!reference.changed) return;
        expect(kept).toEqual(reference.kept);
        // An endpoint the reference keeps as it is is the very object here too; a view is a view in both.
        kept.forEach((e, i) => {
          const r = reference.kept[i];
          expect(endpoints.includes(e)).toBe(endpoints.includes(r));
          if (endpoints.includes(r)) expect(e).toBe(r);
        });
      }),
      { numRuns: 3000 },
    );
  });
});

// The output, server-slot and health-check budgets keep what the entries ask for between builds (entry-tally.ts):
// after random sequences of builds in which entries stay, change, come and go (naming shared
// certificate files, with checked and unchecked slots), a long-lived budget leaves out exactly
// what the whole computation does, with the same warnings, whether or not the entries fit.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IngressEntry } from '../../../src/worker/routing/ingress-entry.js';
import { OutputBudget, shedOutput } from '../../../src/worker/routing/output-budget.js';
import { checkedSlots } from '../../../src/worker/routing/route-budget.js';
import { SlotBudget, starveSlots } from '../../../src/worker/routing/slot-budget.js';
import { EntryTally } from '../../../src/worker/routing/entry-tally.js';
import { CheckBudget } from '../../../src/worker/routing/check-budget.js';
import type { Backend } from '../../../src/worker/routing/model.js';
import { TENANT_OUTPUT_SHARE } from '../../../src/worker/store/value-limits.js';

const KEYS = ['a/p', 'a/q', 'a/r', 'b/p', 'b/s', 'c/t', 'c/u', 'd/v'];
const CERTS = ['a_one', 'a_two', 'b_one', 'c_one'];

const spec = fc.record({
  present: fc.boolean(),
  keep: fc.boolean(),
  bytes: fc.integer({ min: 0, max: 400 }),
  created: fc.integer({ min: 0, max: 5 }),
  certs: fc.subarray(CERTS, { maxLength: 2 }),
  pem: fc.integer({ min: 1, max: 1500 }),
  servers: fc.integer({ min: 0, max: 6 }),
  check: fc.boolean(),
});

interface Spec {
  readonly bytes: number;
  readonly created: number;
  readonly certs: readonly string[];
  readonly pem: number;
  readonly servers: number;
  readonly check: boolean;
}

/** A stand-in for an Ingress entry: what the budgets read of one. */
function entryOf(key: string, s: Spec): IngressEntry {
  const [namespace = '', name = ''] = key.split('/');
  const servers = Array.from({ length: s.servers }, (_, i) => ({ name: `srv${i}`, address: '10.0.0.1' }));
  return {
    key,
    claimant: { owner: `Ingress ${key}`, namespace, name, created: s.created },
    outputBytes: s.bytes,
    tls: s.certs.map((certName) => ({ certName, pem: 'x'.repeat(s.pem), hosts: [] })),
    backends: [{ name: `ing_${namespace}_${name}`, servers, options: { check: s.check } }],
  } as unknown as IngressEntry;
}

describe('budgets kept per entry between builds', () => {
  it('leave out exactly what the whole computation leaves out, build after build', () => {
    fc.assert(
      fc.property(fc.array(fc.array(spec, { minLength: KEYS.length, maxLength: KEYS.length }), { minLength: 1, maxLength: 10 }), fc.integer({ min: 300, max: 3000 }), fc.integer({ min: 2, max: 30 }), (builds, maxBytes, slots) => {
        const output = new OutputBudget(maxBytes / TENANT_OUTPUT_SHARE);
        const slotBudget = new SlotBudget(slots);
        let last = new Map<string, IngressEntry>();
        for (const build of builds) {
          const entries: IngressEntry[] = [];
          build.forEach((s, i) => {
            const key = KEYS[i] as string;
            if (!s.present) return;
            const kept = s.keep ? last.get(key) : undefined;
            entries.push(kept ?? entryOf(key, s));
          });
          last = new Map(entries.map((entry) => [entry.key, entry]));
          const fresh = shedOutput(Math.floor(maxBytes), entries);
          const kept = output.shed(entries);
          expect([...kept.entries]).toEqual([...fresh.entries]);
          const served = entries.filter((entry) => !kept.entries.has(entry));
          expect([...slotBudget.starve(served)]).toEqual([...starveSlots(slots, served, [], (entry) => checkedSlots(entry.backends))]);
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });

  it('sums the sizes of the very entries given, also when they come out of key order', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.boolean(), fc.integer({ min: 0, max: 50 })), { maxLength: 8 }), { minLength: 1, maxLength: 8 }), (rounds) => {
        const inOut: string[] = [];
        const tally = new EntryTally<{ key: string; size: number }>(
          (entry) => entry.size,
          (entry) => inOut.splice(inOut.indexOf(entry.key), 1),
          (entry) => inOut.push(entry.key),
        );
        let last: { key: string; size: number }[] = [];
        for (const round of rounds) {
          const entries = round.map(([key, keep, size]) => (keep ? last.find((entry) => entry.key === key) : undefined) ?? { key, size });
          const unique = [...new Set(entries)];
          expect(tally.update(unique)).toBe(unique.reduce((sum, entry) => sum + entry.size, 0));
          expect([...inOut].sort()).toEqual(unique.map((entry) => entry.key).sort());
          last = unique;
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });

  it('sums the sizes after rounds that replace entries in place by entries of the same key', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 50 })), { minLength: KEYS.length, maxLength: KEYS.length }), { minLength: 1, maxLength: 8 }), (rounds) => {
        const inOut: string[] = [];
        const tally = new EntryTally<{ key: string; size: number }>(
          (entry) => entry.size,
          (entry) => inOut.splice(inOut.indexOf(entry.key), 1),
          (entry) => inOut.push(entry.key),
        );
        let last = KEYS.map((key) => ({ key, size: 1 }));
        tally.update(last);
        for (const round of rounds) {
          const entries = last.map((entry, i) => ((round[i] as [boolean, number])[0] ? { key: entry.key, size: (round[i] as [boolean, number])[1] } : entry));
          expect(tally.update(entries)).toBe(entries.reduce((sum, entry) => sum + entry.size, 0));
          expect([...inOut].sort()).toEqual([...KEYS].sort());
          last = entries;
        }
      }),
      { numRuns: 300, seed: 19 },
    );
  });
});

describe('the health-check budget kept between builds', () => {
  const backendOf = (name: string, servers: number, check: boolean, interval: number | undefined): Backend =>
    ({ name, servers: Array.from({ length: servers }, (_, i) => ({ name: `s${i}` })), options: { check, ...(interval === undefined ? {} : { checkInterval: interval }) } }) as unknown as Backend;
  const slot = fc.record({ keep: fc.boolean(), servers: fc.integer({ min: 0, max: 4_000 }), check: fc.boolean(), interval: fc.option(fc.constantFrom(100, 200, 400, 1000), { nil: undefined }) });

  it('raises the same check intervals as a fresh budget, build after build', () => {
    fc.assert(
      fc.property(fc.array(fc.array(slot, { minLength: 6, maxLength: 6 }), { minLength: 1, maxLength: 10 }), (builds) => {
        const kept = new CheckBudget();
        let last: Backend[] = [];
        for (const build of builds) {
          const backends = build.map((s, i) => (s.keep && last[i] !== undefined ? (last[i] as Backend) : backendOf(`b${i}`, s.servers, s.check, s.interval)));
          last = backends;
          expect(kept.apply(backends)).toEqual(new CheckBudget().apply(backends));
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });
});

// The backends' passes kept between builds (backend-order.ts, rate-limit-tables.ts,
// check-budget.ts) against fresh ones: after any sequence of builds in which a few entries are
// recomputed (rate-limited or not, checked or not, with few or many servers, across the counts
// where the table size and the check floor change), the kept passes give what fresh ones give,
// and each list they record as replaced differs from the one before exactly at the recorded places.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BackendOrder } from '../../../src/worker/routing/backend-order.js';
import { CheckBudget } from '../../../src/worker/routing/check-budget.js';
import type { IngressEntry } from '../../../src/worker/routing/ingress-entry.js';
import type { Backend } from '../../../src/worker/routing/model.js';
import { RateLimitTables } from '../../../src/worker/routing/rate-limit-tables.js';
import { replacedSince } from '../../../src/worker/store/list-replacements.js';
import { rateLimitBackend } from '../../helpers/rate-limit-backend.js';

const ENTRIES = 8;
const NO_STARVED = new Map<IngressEntry, string>();

const backendSpec = fc.record({ limited: fc.boolean(), check: fc.boolean(), interval: fc.constantFrom(undefined, 100, 400, 3000), servers: fc.constantFrom(0, 1, 300, 900) });
type BackendSpec = typeof backendSpec extends fc.Arbitrary<infer T> ? T : never;
const build = fc.array(fc.record({ entry: fc.nat(ENTRIES - 1), backends: fc.array(backendSpec, { minLength: 3, maxLength: 3 }) }), { maxLength: 3 });

function backendOf(name: string, s: BackendSpec): Backend {
  const base = rateLimitBackend(name, s.limited);
  const options = s.interval === undefined ? { check: s.check } : { check: s.check, checkInterval: s.interval };
  return Object.freeze({ ...base, options, servers: Object.freeze(Array.from({ length: s.servers }, (_, i) => ({ name: `srv${i}` }))) } as unknown as Backend);
}

/** A stand-in for an Ingress entry: its backends, named after the entry, are all the passes read. */
function entryOf(index: number, width: number, specs: readonly BackendSpec[]): IngressEntry {
  return { key: `e${index}`, backends: specs.slice(0, width).map((s, j) => backendOf(`b${(index * 7919) % 13}_${index}_${j}`, s)) } as unknown as IngressEntry;
}

/** Every place where `list` and `previous` hold other backends. */
function differing(list: readonly Backend[], previous: readonly Backend[]): number[] {
  return list.flatMap((b, i) => (b === previous[i] ? [] : [i]));
}

/** Checks that a recorded list differs from the one before exactly where recorded; whether one was recorded. */
function recordHolds(list: readonly Backend[], previous: readonly Backend[] | undefined): boolean {
  if (previous === undefined || list === previous) return false;
  const known = replacedSince(list, previous);
  if (known !== undefined) expect([...known]).toEqual(differing(list, previous));
  return known !== undefined;
}

describe('backend passes kept between builds', () => {
  it('give what fresh passes give, and record exactly the places where their lists differ', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: ENTRIES, maxLength: ENTRIES }), fc.array(backendSpec, { minLength: 3, maxLength: 3 }), fc.array(build, { minLength: 1, maxLength: 10 }), (widths, first, builds) => {
        const order = new BackendOrder();
        const tables = new RateLimitTables();
        const budget = new CheckBudget();
        let entries = widths.map((width, i) => entryOf(i, width, first));
        let sorted = order.sorted(undefined, entries, true, NO_STARVED);
        let sized = tables.apply(sorted);
        let model = budget.apply(sized);
        for (const changes of builds) {
          const recomputed = new Map<number, IngressEntry>();
          for (const { entry, backends } of changes) recomputed.set(entry, entryOf(entry, widths[entry] as number, backends));
          entries = entries.map((e, i) => recomputed.get(i) ?? e);
          const nextSorted = order.sorted(model, [...recomputed.values()], false, NO_STARVED);
          const nextSized = tables.apply(nextSorted);
          const nextModel = budget.apply(nextSized);
          // A replaced list of names unchanged is always recorded as such.
          if (!recordHolds(nextSorted, sorted)) expect(nextSorted === sorted || recomputed.size === 0).toBe(true);
          recordHolds(nextSized, sized);
          recordHolds(nextModel, model);
          const fresh = new CheckBudget().apply(new RateLimitTables().apply(new BackendOrder().sorted(undefined, entries, true, NO_STARVED)));
          expect(nextModel).toEqual(fresh);
          [sorted, sized, model] = [nextSorted, nextSized, nextModel];
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });
});

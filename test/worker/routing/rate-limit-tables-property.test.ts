// RateLimitTables kept between builds against a fresh one: after any sequence of backend lists,
// each differing from the one before at a few places or many, rate-limited or not, across the
// counts where the table size halves, it gives every backend the size a fresh one gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../../src/worker/routing/model.js';
import { MAX_TABLE_SIZE, RateLimitTables } from '../../../src/worker/routing/rate-limit-tables.js';
import { rateLimitBackend } from '../../helpers/rate-limit-backend.js';

const backend = rateLimitBackend;

/** Each place of the list: which backend of the pool (rate-limited or not, or a new object) holds it. */
const place = fc.record({ limited: fc.boolean(), fresh: fc.boolean() });
const round = fc.record({ length: fc.integer({ min: 0, max: 48 }), edits: fc.array(fc.record({ at: fc.nat(47), place }), { maxLength: 4 }), whole: fc.boolean() });

describe('rate-limit table sizes kept between builds', () => {
  it('are those a fresh computation gives, after any sequence of lists', () => {
    fc.assert(
      fc.property(fc.array(round, { minLength: 1, maxLength: 12 }), fc.array(fc.boolean(), { minLength: 48, maxLength: 48 }), (rounds, start) => {
        const kept = new RateLimitTables();
        let version = 0;
        let list = start.map((limited, i) => backend(`b${i}`, limited));
        for (const { length, edits, whole } of rounds) {
          list = whole ? list.slice(0, length).map((b) => backend(b.name, b.ingressOptions.rateLimit === undefined)) : list.slice();
          for (const { at, place: p } of edits) {
            if (at >= list.length) continue;
            const name = (list[at] as Backend).name;
            list[at] = p.fresh ? backend(`${name}.${++version}`, p.limited) : backend(name, p.limited);
          }
          const given = kept.apply(list);
          const fresh = new RateLimitTables().apply(list);
          expect(given).toEqual(fresh);
          expect(given.map((b) => b.rateLimitTableSize ?? MAX_TABLE_SIZE)).toEqual(fresh.map((b) => b.rateLimitTableSize ?? MAX_TABLE_SIZE));
          // Kept between builds, the list itself comes back as the model's (copies where sized).
          list = given.slice();
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });
});

// The route index's tables after routes come, go and change backend: each table whose entries
// are the previous table's is that very array (the keyed loops of the map templates then reuse
// its text without a look at its elements), each other one is a new array, and no previous
// array is ever modified; the entries are always those of a one-go build.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RouteTables } from '../../../src/worker/routing/model.js';
import { RouteIndex, routeTables, type RouteCandidate } from '../../../src/worker/routing/route-index.js';
import { keptEndsSince } from '../../../src/worker/store/list-replacements.js';

const TABLES = ['hostExact', 'hostPrefix', 'hostRegex', 'pathExact', 'pathPrefix'] as const;

const route = fc.record({
  host: fc.constantFrom('shop.example.com', 'a.example.com', '', 'b.example.com'),
  path: fc.constantFrom('/', '/a', '/a/b'),
  exact: fc.boolean(),
  backend: fc.constantFrom('b1', 'b2'),
});

/** A step: routes added, routes removed, or a route replaced by one with another backend (one namespace: no contested keys). */
const step = fc.oneof(fc.record({ add: fc.array(route, { minLength: 1, maxLength: 3 }) }), fc.record({ remove: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }) }), fc.record({ rebackend: fc.nat() }));

const copyOf = (tables: RouteTables): Record<string, unknown[]> => Object.fromEntries(TABLES.map((name) => [name, tables[name].map((e) => ({ ...e }))]));

describe('route tables kept between builds', () => {
  it('are the previous arrays exactly when their entries are unchanged, and leave the previous arrays as they were', () => {
    let keptSeen = 0;
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const index = new RouteIndex();
        const live: RouteCandidate[] = [];
        let tables = index.tables(undefined, () => live, () => undefined);
        let n = 0;
        for (const s of steps) {
          const before = tables;
          const snapshot = copyOf(before);
          if ('add' in s) {
            const added = s.add.map((r): RouteCandidate => ({ ...r, owner: `Ingress ns/i${n++}`, namespace: 'ns', created: n }));
            live.push(...added);
            index.add(added);
          } else if ('remove' in s) {
            const gone = s.remove.flatMap((at) => (live.length === 0 ? [] : live.splice(at % live.length, 1)));
            index.remove(gone);
          } else if (live.length > 0) {
            const at = s.rebackend % live.length;
            const old = live[at] as RouteCandidate;
            const changed: RouteCandidate = { ...old, backend: old.backend === 'b1' ? 'b2' : 'b1' };
            live[at] = changed;
            index.remove([old]);
            index.add([changed]);
          }
          tables = index.tables(before, () => live, () => undefined);
          const fresh = routeTables(live, () => undefined);
          expect(tables).toEqual(fresh);
          expect(copyOf(before)).toEqual(snapshot);
          for (const name of TABLES) {
            const same = JSON.stringify(snapshot[name]) === JSON.stringify(fresh[name]);
            expect(tables[name] === before[name], name).toBe(same);
            // A changed table says which entries at its ends are the previous table's very entries.
            const kept = tables[name] === before[name] ? undefined : keptEndsSince(tables[name], before[name]);
            if (kept !== undefined) {
              const now = tables[name];
              const was = before[name];
              expect(kept.prefix + kept.suffix, name).toBeLessThanOrEqual(Math.min(now.length, was.length));
              for (let i = 0; i < kept.prefix; i++) expect(now[i], name).toBe(was[i]);
              for (let i = 1; i <= kept.suffix; i++) expect(now[now.length - i], name).toBe(was[was.length - i]);
              keptSeen++;
            }
          }
        }
      }),
      { numRuns: 300 },
    );
    // The kept ends were recorded (and checked) for changed tables, not skipped.
    expect(keptSeen).toBeGreaterThan(100);
  });
});

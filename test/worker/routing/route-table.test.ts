// The one route table (route-table.ts): map keys and their order, the first claimant of a key in
// precedence order, listener scopes in the keys, and the split of a bind's routes into map
// entries and the ordered rules around the host and host-less maps.
import { describe, expect, it } from 'vitest';
import { claimTables, planRoutes, routeClaims, wildcardKeyHost } from '../../../src/worker/routing/route-table.js';

const route = (host: string, path: string, backend: string, exact = false) => ({ host, path, exact, backend });

describe('the route table', () => {
  it('claims the exact and prefix keys of a route, behind its scope, and regex keys for a wildcard', () => {
    expect(routeClaims(route('a.example', '/api/', 'b'))).toEqual([
      { table: 'hostExact', key: 'a.example/api', exactKey: true },
      { table: 'hostPrefix', key: 'a.example/api/', exactKey: false },
    ]);
    expect(routeClaims(route('', '/x', 'b', true), '2@')).toEqual([{ table: 'pathExact', key: '2@/x', exactKey: true }]);
    expect(routeClaims(route('a.example', '/', 'b'), '1@')).toEqual([{ table: 'hostPrefix', key: '1@a.example/', exactKey: false }]);
    expect(routeClaims(route('*.example', '/', 'b'))).toEqual([{ table: 'hostRegex', key: '^[^./]+\\.example/', exactKey: false }]);
  });

  it('gives each key to its first claimant in precedence order, and orders each table longest key first', () => {
    const conflicts: string[] = [];
    const tables = claimTables([route('a.example', '/a', 'exact', true), route('a.example', '/a/', 'first'), route('a.example', '/a', 'second'), route('a.example', '/', 'root')], (r, holder) => {
      conflicts.push(`${r.backend} < ${holder.backend}`);
    });
    expect(tables.hostExact).toEqual([{ key: 'a.example/a', backend: 'exact' }]);
    expect(tables.hostPrefix).toEqual([
      { key: 'a.example/a/', backend: 'first' },
      { key: 'a.example/', backend: 'root' },
    ]);
    expect(conflicts).toEqual(['first < exact', 'second < exact', 'second < first']);
  });

  it('maps the groups with only plain routes, and keeps the others rules: exact hosts and wildcards before the host-less maps, host-less ones after', () => {
    const r = (name: string, host: string, group: string, conditional = false) => ({ name, host, group, conditional });
    const plan = planRoutes([
      r('a1', 'a.example', '0@a.example'),
      r('a2', 'a.example', '0@a.example'),
      r('b1', 'b.example', '1@b.example', true),
      r('b2', 'b.example', '1@b.example'),
      r('w1', '*.example', '1@*.example'),
      r('v1', '*.v.example', '1@*.v.example', true),
      r('any1', '', '2@'),
      r('any2', '', '3@', true),
      r('any3', '', '3@'),
    ]);
    expect(plan.mapped.map((p) => p.name)).toEqual(['a1', 'a2', 'w1', 'any1']);
    expect(plan.early.map((p) => p.name)).toEqual(['b1', 'b2', 'v1']);
    expect(plan.late.map((p) => p.name)).toEqual(['any2', 'any3']);
  });

  it('keeps a wildcard group a rule when a wider wildcard of its scope is conditional, since the wildcard rules go before the wildcard maps', () => {
    const r = (name: string, host: string, scope: string, conditional = false) => ({ name, host, scope, group: `${scope}${host}`, conditional });
    const plan = planRoutes([
      r('deep', '*.a.b.example', '0@'),
      r('narrow', '*.b.example', '0@'),
      r('other-scope', '*.b.example', '1@'),
      r('elsewhere', '*.c.example', '0@'),
      r('wide', '*.example', '0@', true),
    ]);
    expect(plan.early.map((p) => p.name)).toEqual(['deep', 'narrow', 'elsewhere', 'wide']);
    expect(plan.mapped.map((p) => p.name)).toEqual(['other-scope']);
    expect(wildcardKeyHost('*.b.example')).toBe('b.example*');
  });
});

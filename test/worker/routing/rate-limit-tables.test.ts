// The rate-limit tables of all backends share one budget of entries, so a tenant's many
// rate-limited Ingresses cannot let clients with many addresses fill HAProxy's memory.
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_TABLE_SIZE, MIN_TABLE_SIZE, RATE_LIMIT_ENTRIES, RateLimitTables, tableSize } from '../../../src/worker/routing/rate-limit-tables.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service } from '../../helpers/cluster.js';
import { rateLimitBackend } from '../../helpers/rate-limit-backend.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const backend = rateLimitBackend;

function rateLimited(i: number): KubeObject[] {
  const ns = `t${i}`;
  return [
    ingress(ns, 'web', { rules: [rule(`h${i}.example.test`, { service: 'web' })] }, { annotations: { 'haproxy.org/rate-limit-requests': '10' } }),
    service(ns, 'web'),
    endpointSlice(ns, 'web', ['10.0.0.1']),
  ];
}

describe('rate-limit table sizes', () => {
  it('give each table 100,000 entries up to 10 tables, then equal halving shares that keep all tables within 1,000,000 entries, never under 100', () => {
    expect(tableSize(0)).toBe(MAX_TABLE_SIZE);
    expect(tableSize(10)).toBe(100_000);
    expect(tableSize(11)).toBe(50_000);
    expect(tableSize(40)).toBe(25_000);
    expect(tableSize(41)).toBe(12_500);
    expect(tableSize(10_000)).toBe(MIN_TABLE_SIZE);
    for (const count of [1, 7, 11, 100, 999, 5_000, 10_000]) expect(tableSize(count) * count).toBeLessThanOrEqual(RATE_LIMIT_ENTRIES);
  });

  it('size only rate-limited backends, and keep each backend and the list itself while nothing changes', () => {
    const tables = new RateLimitTables();
    const few = [backend('a', true), backend('b', false)];
    expect(tables.apply(few)).toBe(few);
    const many = [...Array.from({ length: 11 }, (_, i) => backend(`r${i}`, true)), backend('plain', false)];
    const sized = tables.apply(many);
    expect(sized.slice(0, 11).map((b) => b.rateLimitTableSize)).toEqual(Array(11).fill(50_000));
    expect(sized[11]).toBe(many[11]);
    expect(tables.apply([...many])).toBe(sized);
    // Back under the threshold, the copies lose their size.
    const back = tables.apply(sized.slice(0, 10));
    expect(back.map((b) => b.rateLimitTableSize)).toEqual(Array(10).fill(undefined));
    expect(back[0]?.name).toBe('r0');
  });

  it('write the shared size into the stick-tables of the rendered config, and 100k while 10 tables or fewer exist', () => {
    const ten = renderOk(set, Array.from({ length: 10 }, (_, i) => rateLimited(i)).flat());
    expect(ten.haproxyConfig.match(/stick-table type ipv6 size 100k /g)).toHaveLength(10);
    const many = renderOk(set, Array.from({ length: 41 }, (_, i) => rateLimited(i)).flat());
    expect(many.haproxyConfig.match(/stick-table type ipv6 size 12500 /g)).toHaveLength(41);
    // An incremental render from the first keeps the same result as a cold one.
    const grown = renderOk(set, Array.from({ length: 41 }, (_, i) => rateLimited(i)).flat(), { haproxyConfig: ten.haproxyConfig, auxiliaryFiles: ten.auxiliaryFiles });
    expect(grown.haproxyConfig).toBe(many.haproxyConfig);
  });
});

// Health checks of all backends share one rate, so a tenant's many servers checked every 100 ms
// cannot take HAProxy's CPU from everyone's traffic.
import { beforeAll, describe, expect, it } from 'vitest';
import { CHECKS_PER_SECOND, intervalFloor } from '../../../src/worker/routing/check-budget.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service, withValues } from '../../helpers/cluster.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = withValues(await defaultTemplateSet(), { serverSlots: 1000 });
});

function checked(ns: string, interval: string | undefined): KubeObject[] {
  return [
    ingress(ns, 'web', { rules: [rule(`${ns}.example.test`, { service: 'web' })] }, interval === undefined ? {} : { annotations: { 'haproxy.org/check-interval': interval } }),
    service(ns, 'web'),
    endpointSlice(ns, 'web', ['10.0.0.1']),
  ];
}

const intervals = (config: string): Record<string, string> => {
  const found: Record<string, string> = {};
  for (const m of config.matchAll(/backend (ing_(\w+?)_web_web_80)\n(?:.*\n)*?\s+default-server check(?: inter (\d+))?/g)) found[m[2] as string] = m[3] ?? 'default';
  return found;
};

describe('the health-check budget', () => {
  it('keeps 100 ms up to 2,000 checked slots, then doubles the shortest interval until all slots fit in 20,000 checks a second', () => {
    expect(intervalFloor(0)).toBe(100);
    expect(intervalFloor(2_000)).toBe(100);
    expect(intervalFloor(2_001)).toBe(200);
    expect(intervalFloor(32_768)).toBe(3_200);
    for (const slots of [1, 1_999, 2_500, 10_000, 32_768, 100_000]) expect((slots * 1000) / intervalFloor(slots)).toBeLessThanOrEqual(CHECKS_PER_SECOND);
  });

  it('raises only the intervals below the floor, leaving longer and default ones as asked', () => {
    // 3 backends of 1,000 slots: 3,000 slots, a floor of 200 ms.
    const config = renderOk(set, [...checked('fast', '100ms'), ...checked('slow', '5s'), ...checked('plain', undefined)]).haproxyConfig;
    expect(intervals(config)).toEqual({ fast: '200', slow: '5000', plain: 'default' });
    // With 2 backends (2,000 slots), 100 ms stays.
    expect(intervals(renderOk(set, [...checked('fast', '100ms'), ...checked('plain', undefined)]).haproxyConfig)).toEqual({ fast: '100', plain: 'default' });
  });
});

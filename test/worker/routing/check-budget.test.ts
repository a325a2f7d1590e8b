// Health checks of all backends share one rate, so a tenant's many servers checked every 100 ms
// cannot take HAProxy's CPU from everyone's traffic: Ingress and HTTPRoute backends alike.
import { beforeAll, describe, expect, it } from 'vitest';
import { CHECKS_PER_SECOND, intervalFloor } from '../../../src/worker/routing/check-budget.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service, withValues } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';

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

/** An HTTPRoute of `ns` to its Service `web` (checked every `interval`, through the Service annotation), on a Gateway of its own. */
function routed(ns: string, interval: string | undefined, port: number): KubeObject[] {
  const svc = service(ns, 'web');
  if (interval !== undefined) svc.metadata.annotations = { 'haproxy.org/check-interval': interval };
  return [gateway(ns, 'gw', [{ name: 'http', port }]), httpRoute(ns, 'route', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [ref('web')] }] }), svc, endpointSlice(ns, 'web', ['10.0.0.1'])];
}

/** Namespace -> the check interval of its backend (Ingress `ing_<ns>_web_web_80` or route `gw_<ns>_route_0_0`). */
const intervals = (config: string): Record<string, string> => {
  const found: Record<string, string> = {};
  for (const m of config.matchAll(/backend (?:ing_(\w+?)_web_web_80|gw_(\w+?)_route_0_0)\n(?:.*\n)*?\s+default-server check(?: inter (\d+))?/g)) found[(m[1] ?? m[2]) as string] = m[3] ?? 'default';
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

  it('counts the slots of HTTPRoute backends with the Ingress ones, and raises the intervals of both below the floor', () => {
    // 1 Ingress backend and 2 route backends of 1,000 slots each: 3,000 slots, a floor of 200 ms.
    const config = renderOk(set, [gatewayClass(), ...checked('fast', '100ms'), ...routed('route', '100ms', 18080), ...routed('plain', undefined, 18081)]).haproxyConfig;
    expect(intervals(config)).toEqual({ fast: '200', route: '200', plain: 'default' });
    // Ingress backends alone under 2,000 slots keep 100 ms until route backends add theirs.
    expect(intervals(renderOk(set, [gatewayClass(), ...checked('fast', '100ms'), ...routed('route', '100ms', 18080)]).haproxyConfig)).toEqual({ fast: '100', route: '100' });
  });
});

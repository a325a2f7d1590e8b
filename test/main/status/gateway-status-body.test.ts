// The pieces Gateway API status is made of: conditions keep their lastTransitionTime while their
// status stays; the comparison leaves lastTransitionTime out; supportedKinds follow the listener's
// protocol and allowedRoutes.kinds; a Gateway's addresses; when a deployment means HAProxy serves
// a render (a fleet: no reachable instance behind); which rejections are whole HTTPRoutes.
import { describe, expect, it } from 'vitest';
import { conditions, statusText, supportedKinds, timeText } from '../../../src/main/status/gateway-status-body.js';
import { fleetServes, gatewayAddresses, rejectedRoutes } from '../../../src/main/status/gateway-status.js';
import { gateway } from '../../helpers/gateway-objects.js';

const KIND = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' };

describe('Gateway API status pieces', () => {
  it('keeps lastTransitionTime while a condition keeps its status, and moves it when the status changes', () => {
    const old = [{ type: 'Accepted', status: 'True', reason: 'Accepted', lastTransitionTime: '2026-01-01T00:00:00Z' }];
    const now = timeText(Date.UTC(2026, 5, 1, 12, 0, 0, 750));
    expect(now).toBe('2026-06-01T12:00:00Z');
    expect(conditions([{ type: 'Accepted', status: 'True', reason: 'Accepted' }], 3, old, now)).toEqual([
      { type: 'Accepted', status: 'True', reason: 'Accepted', message: '', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ]);
    expect(conditions([{ type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners', message: 'no' }], 3, old, now)[0]).toMatchObject({ status: 'False', lastTransitionTime: now, message: 'no' });
  });

  it('compares status without lastTransitionTime, and an empty list as an absent field', () => {
    const a = { conditions: [{ type: 'A', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }], addresses: [] };
    const b = { conditions: [{ lastTransitionTime: '2027-01-01T00:00:00Z', status: 'True', type: 'A' }] };
    expect(statusText(a, ['conditions', 'addresses'])).toBe(statusText(b, ['conditions', 'addresses']));
    expect(statusText(a, ['conditions'])).not.toBe(statusText({ conditions: [{ type: 'A', status: 'False' }] }, ['conditions']));
  });

  it('supports HTTPRoute on HTTP and HTTPS listeners unless allowedRoutes.kinds names only other kinds', () => {
    expect(supportedKinds({ protocol: 'HTTP' })).toEqual([KIND]);
    expect(supportedKinds({ protocol: 'HTTPS', allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }] } })).toEqual([KIND]);
    expect(supportedKinds({ protocol: 'HTTP', allowedRoutes: { kinds: [{ kind: 'GRPCRoute' }] } })).toEqual([]);
    expect(supportedKinds({ protocol: 'HTTP', allowedRoutes: { kinds: [{ group: 'example.com', kind: 'HTTPRoute' }] } })).toEqual([]);
    expect(supportedKinds({ protocol: 'TCP' })).toEqual([]);
  });

  it("gives a Gateway its requested IPAddress, else the bind address, else the published addresses of a wildcard bind", () => {
    const plain = gateway('shop', 'edge', [{ name: 'http', port: 8080 }]);
    const requested = gateway('shop', 'edge', [{ name: 'http', port: 8080 }], { addresses: [{ type: 'IPAddress', value: '127.0.0.5' }] });
    expect(gatewayAddresses('127.0.0.1', [])(requested)).toEqual([{ type: 'IPAddress', value: '127.0.0.5' }]);
    expect(gatewayAddresses('127.0.0.1', [])(plain)).toEqual([{ type: 'IPAddress', value: '127.0.0.1' }]);
    expect(gatewayAddresses('*', [{ ip: '203.0.113.1' }, { hostname: 'lb.example.com' }])(plain)).toEqual([
      { type: 'IPAddress', value: '203.0.113.1' },
      { type: 'Hostname', value: 'lb.example.com' },
    ]);
    expect(gatewayAddresses('*', [])(plain)).toEqual([]);
  });

  it('takes a deployment as served when it succeeded and, in a fleet, no reachable instance is behind', () => {
    expect(fleetServes({ outcome: 'success' })).toBe(true);
    expect(fleetServes({ outcome: 'failure' })).toBe(false);
    expect(fleetServes({ outcome: 'success', fleet: { in_sync: 2, behind: 0, unreachable: 1, fenced: 0 } })).toBe(true);
    expect(fleetServes({ outcome: 'success', fleet: { in_sync: 1, behind: 1, unreachable: 0, fenced: 0 } })).toBe(false);
    expect(fleetServes({ outcome: 'success', fleet: { in_sync: 0, behind: 0, unreachable: 2, fenced: 0 } })).toBe(false);
  });

  it('counts only HTTPRoutes rejected as a whole', () => {
    const found = rejectedRoutes([
      { kind: 'HTTPRoute', namespace: 'shop', name: 'a', scope: 'object', reason: 'bad hostname' },
      { kind: 'HTTPRoute', namespace: 'shop', name: 'b', scope: 'path', reason: 'one rule dropped' },
      { kind: 'HTTPRoute', namespace: 'shop', name: 'c', scope: 'path', reason: 'filter', wholeObject: true },
      { kind: 'Ingress', namespace: 'shop', name: 'd', scope: 'object', reason: 'bad' },
    ]);
    expect([...found]).toEqual([['shop/a', 'bad hostname'], ['shop/c', 'filter']]);
  });
});

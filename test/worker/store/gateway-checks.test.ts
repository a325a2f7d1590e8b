// The store checks of the Gateway API kinds: the smallest unit goes (a rule, a listener, a
// parentRef), what would widen a route (a bad hostname) or make it absurd (lists over the CRDs'
// caps) rejects it, and reserved or unsafe values never pass.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { checkObjectAs, type GuardVerdict } from '../../../src/worker/store/object-guard.js';
import { gateway, gatewayClass, httpRoute, namespace, referenceGrant } from '../../helpers/gateway-objects.js';

const view = (verdict: GuardVerdict): KubeObject => {
  if (!verdict.ok) throw new Error(verdict.reason);
  return verdict.object;
};
const reasons = (verdict: GuardVerdict): string[] => verdict.rejections.map((r) => r.reason);
const good = { backendRefs: [{ name: 'web', port: 80 }] };

describe('HTTPRoute check', () => {
  it('drops a rule with an unsafe header value, keeping the other rules in their places', () => {
    const verdict = checkObjectAs(
      httpRoute('ns', 'r', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ headers: [{ name: 'version', value: 'one two' }] }], ...good }, good] }),
      'HTTPRoute',
    );
    expect((view(verdict).spec as { rules: unknown[] }).rules).toEqual([null, good]);
    expect(reasons(verdict)[0]).toMatch(/^spec\.rules\[0\]\.matches\[0\]\.headers\[0\]\.value "one two" is not a plain value.*; the rule is dropped$/);
  });

  it('drops a rule that sets, removes or matches a reserved x-haptic-* header, whatever its case', () => {
    const rules = [
      { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Haptic-Loop', value: 'x' }] } }], ...good },
      { filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { remove: ['x-haptic-loop'] } }], ...good },
      { matches: [{ headers: [{ name: 'x-HAPTIC-loop', value: 'a' }] }], ...good },
    ];
    const verdict = checkObjectAs(httpRoute('ns', 'r', { rules }), 'HTTPRoute');
    expect((view(verdict).spec as { rules: unknown[] }).rules).toEqual([null, null, null]);
    expect(reasons(verdict).every((r) => r.includes('is reserved (x-haptic-*)'))).toBe(true);
  });

  it('drops a rule with a filter it does not support, a RegularExpression path or a bad redirect status', () => {
    const rules = [
      { filters: [{ type: 'RequestMirror', requestMirror: {} }], ...good },
      { matches: [{ path: { type: 'RegularExpression', value: '/.*' } }], ...good },
      { filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 304 } }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/ok' } }], ...good },
    ];
    const spec = view(checkObjectAs(httpRoute('ns', 'r', { rules }), 'HTTPRoute')).spec as { rules: unknown[] };
    expect(spec.rules.map((r) => r !== null)).toEqual([false, false, false, true]);
  });

  it('rejects a route with a bad hostname (without it the route would answer every host) or over 16 rules', () => {
    const badHost = checkObjectAs(httpRoute('ns', 'r', { hostnames: ['ok.example.com', 'evil.example.com\n  http-request deny'], rules: [good] }), 'HTTPRoute');
    expect(badHost.ok).toBe(false);
    expect(badHost.ok ? '' : badHost.reason).toContain('spec.hostnames[1]');
    const many = checkObjectAs(httpRoute('ns', 'r', { rules: Array.from({ length: 17 }, () => good) }), 'HTTPRoute');
    expect(many.ok ? '' : many.reason).toContain('spec.rules has 17 entries, over the limit of 16');
  });

  it('drops a bad parentRef alone', () => {
    const verdict = checkObjectAs(httpRoute('ns', 'r', { parentRefs: [{ name: 'gw', sectionName: 'Not Valid' }, { name: 'gw2', port: 80 }], rules: [good] }), 'HTTPRoute');
    expect((view(verdict).spec as { parentRefs: unknown[] }).parentRefs).toEqual([{ name: 'gw2', port: 80 }]);
  });
});

describe('Gateway, GatewayClass, ReferenceGrant and Namespace checks', () => {
  it('drops a bad listener and keeps the others', () => {
    const verdict = checkObjectAs(gateway('ns', 'gw', [{ name: 'ok', port: 80 }, { name: 'bad', port: 70_000 }, { name: 'host', port: 81, hostname: 'A.example.com' }]), 'Gateway');
    expect((view(verdict).spec as { listeners: { name: string }[] }).listeners.map((l) => l.name)).toEqual(['ok']);
    expect(reasons(verdict)).toHaveLength(2);
  });

  it('rejects a Gateway with a bad class name or over 64 listeners', () => {
    expect(checkObjectAs(gateway('ns', 'gw', [], {}, 'Bad Class'), 'Gateway').ok).toBe(false);
    const many = Array.from({ length: 65 }, (_, i) => ({ name: `l${i}`, port: 8000 + i }));
    expect(checkObjectAs(gateway('ns', 'gw', many), 'Gateway').ok).toBe(false);
  });

  it('accepts cluster-scoped GatewayClasses and Namespaces without a namespace, and rejects a class without a controllerName', () => {
    expect(checkObjectAs(gatewayClass(), 'GatewayClass').ok).toBe(true);
    expect(checkObjectAs(namespace('team-a', { team: 'a' }), 'Namespace').ok).toBe(true);
    expect(checkObjectAs({ ...gatewayClass(), spec: {} }, 'GatewayClass').ok).toBe(false);
    expect(checkObjectAs({ ...httpRoute('ns', 'r', {}), metadata: { name: 'r' } }, 'HTTPRoute').ok).toBe(false);
  });

  it('rejects a ReferenceGrant whose from has no namespace', () => {
    expect(checkObjectAs(referenceGrant('target', 'g', 'source'), 'ReferenceGrant').ok).toBe(true);
    const bad = referenceGrant('target', 'g', 'source');
    (bad.spec as { from: Record<string, unknown>[] }).from[0] = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' };
    expect(checkObjectAs(bad, 'ReferenceGrant').ok).toBe(false);
  });
});

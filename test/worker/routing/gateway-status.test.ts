// The acceptance results of the Gateway model (what a status writer would write), read from the
// render result: listeners Conflicted with the Ingress frontends or each other, routes refused
// by sectionName, namespaces, kinds or hostnames, unresolvable backend references, and exact
// attachedRoutes counts; and that nothing of a Gateway not of our class reaches the config.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service } from '../../helpers/cluster.js';
import { renderToDir, type RenderedDir } from '../../helpers/e2e-render.js';
import { gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';

let root: string;
let counter = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-gateway-status-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const render = (objects: (ports: { http: number }) => KubeObject[], values: Record<string, unknown> = {}): Promise<RenderedDir> =>
  renderToDir(join(root, `out-${++counter}`), objects({ http: 0 }), values);
const app = [service('infra', 'app'), endpointSlice('infra', 'app', ['127.0.0.2'], { name: 'http', port: 9000 })];
const conditionsOf = (rendered: RenderedDir, route: string) => rendered.result.gatewayStatus?.httpRoutes.find((r) => r.name === route)?.parents.map((p) => p.conditions);
const reason = (rendered: RenderedDir, route: string, type: string) => conditionsOf(rendered, route)?.[0]?.find((c) => c.type === type)?.reason;

describe('Gateway acceptance results', () => {
  it('binds nothing and reports nothing for a Gateway whose class is not ours', async () => {
    const rendered = await render(() => [gatewayClass('other', 'example.com/other'), gateway('infra', 'gw', [{ name: 'http', port: 18081 }], {}, 'other'), ...app]);
    expect(rendered.result.gatewayStatus).toBeUndefined();
    expect(rendered.result.haproxyConfig).not.toContain('frontend gw_');
  });

  it('marks a listener on the Ingress frontends’ port Conflicted and leaves it unbound, while the Gateway’s other listener serves', async () => {
    const rendered = await renderToDir(join(root, `out-${++counter}`), [gatewayClass(), ...app], {});
    const http = rendered.ports.http;
    const again = await renderToDir(join(root, `out-${++counter}`), [
      gatewayClass(),
      gateway('infra', 'gw', [
        { name: 'clash', port: http },
        { name: 'free', port: 18082 },
        { name: 'same-host', port: 18082 },
      ]),
      httpRoute('infra', 'r', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [ref('app')] }] }),
      ...app,
    ], { httpPort: http });
    const listeners = again.result.gatewayStatus?.gateways[0]?.listeners ?? [];
    const clash = listeners.find((l) => l.name === 'clash');
    expect(clash?.conditions).toContainEqual(expect.objectContaining({ type: 'Conflicted', status: 'True', reason: 'ProtocolConflict' }));
    expect(clash?.attachedRoutes).toBe(0);
    expect(listeners.find((l) => l.name === 'same-host')?.conditions).toContainEqual(expect.objectContaining({ type: 'Conflicted', status: 'True', reason: 'HostnameConflict' }));
    expect(listeners.find((l) => l.name === 'free')).toMatchObject({ attachedRoutes: 1 });
    expect(listeners.find((l) => l.name === 'free')?.conditions).toContainEqual({ type: 'Programmed', status: 'True', reason: 'Programmed' });
    expect(again.result.haproxyConfig).toContain('bind 127.0.0.1:18082');
    expect(again.result.haproxyConfig.match(/^ {2}bind 127\.0\.0\.1:(\d+)$/gm)?.filter((b) => b.endsWith(`:${http}`))).toHaveLength(1);
  });

  it('gives each refused parentRef the reason: NoMatchingParent, NotAllowedByListeners, NoMatchingListenerHostname', async () => {
    const rendered = await render(() => [
      gatewayClass(),
      gateway('infra', 'gw', [{ name: 'web', port: 18083, hostname: 'web.example.com' }]),
      httpRoute('infra', 'wrong-section', { parentRefs: [{ name: 'gw', sectionName: 'nope' }], rules: [{ backendRefs: [ref('app')] }] }),
      httpRoute('infra', 'wrong-port', { parentRefs: [{ name: 'gw', port: 9999 }], rules: [{ backendRefs: [ref('app')] }] }),
      httpRoute('elsewhere', 'other-namespace', { parentRefs: [{ name: 'gw', namespace: 'infra' }], rules: [{ backendRefs: [ref('app')] }] }),
      httpRoute('infra', 'other-host', { parentRefs: [{ name: 'gw' }], hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('app')] }] }),
      httpRoute('infra', 'fine', { parentRefs: [{ name: 'gw', sectionName: 'web', port: 18083 }], rules: [{ backendRefs: [ref('app')] }] }),
      ...app,
    ]);
    expect(reason(rendered, 'wrong-section', 'Accepted')).toBe('NoMatchingParent');
    expect(reason(rendered, 'wrong-port', 'Accepted')).toBe('NoMatchingParent');
    expect(reason(rendered, 'other-namespace', 'Accepted')).toBe('NotAllowedByListeners');
    expect(reason(rendered, 'other-host', 'Accepted')).toBe('NoMatchingListenerHostname');
    expect(reason(rendered, 'fine', 'Accepted')).toBe('Accepted');
    expect(rendered.result.gatewayStatus?.gateways[0]?.listeners[0]?.attachedRoutes).toBe(1);
    expect(rendered.result.haproxyConfig).not.toContain('gw_infra_wrong-section');
  });

  it('reports ResolvedRefs reasons: InvalidKind, BackendNotFound, RefNotPermitted, with the route still Accepted', async () => {
    const rendered = await render(() => [
      gatewayClass(),
      gateway('infra', 'gw', [{ name: 'web', port: 18084 }]),
      httpRoute('infra', 'kind', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [ref('app', { group: 'example.com', kind: 'Bucket' })] }] }),
      httpRoute('infra', 'missing', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [ref('nothing')] }] }),
      httpRoute('infra', 'foreign', { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [ref('app', { namespace: 'vault' })] }] }),
      ...app,
    ]);
    expect(reason(rendered, 'kind', 'ResolvedRefs')).toBe('InvalidKind');
    expect(reason(rendered, 'missing', 'ResolvedRefs')).toBe('BackendNotFound');
    expect(reason(rendered, 'foreign', 'ResolvedRefs')).toBe('RefNotPermitted');
    for (const route of ['kind', 'missing', 'foreign']) expect(reason(rendered, route, 'Accepted')).toBe('Accepted');
    expect(rendered.result.gatewayStatus?.gateways[0]?.listeners[0]?.attachedRoutes).toBe(3);
    expect(rendered.result.gatewayStatus?.gatewayClasses).toEqual([{ name: 'haptic', generation: 1, conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }] }]);
  });

  it('does not accept a Gateway asking for an address outside values.gatewayAddresses, and binds none of its listeners', async () => {
    const rendered = await render(() => [gatewayClass(), gateway('infra', 'gw', [{ name: 'web', port: 18085 }], { addresses: [{ type: 'IPAddress', value: '10.1.2.3' }] }), ...app]);
    expect(rendered.result.gatewayStatus?.gateways[0]?.conditions[0]).toMatchObject({ type: 'Accepted', status: 'False', reason: 'UnsupportedAddress' });
    expect(rendered.result.haproxyConfig).not.toContain('10.1.2.3');
    expect(rendered.result.haproxyConfig).not.toContain('frontend gw_');
  });

  it('gives a hostname to its first claimant across Ingresses and HTTPRoutes: a newer route of another namespace loses it, one of the same namespace shares it', async () => {
    const at = (iso: string) => ({ creationTimestamp: iso });
    const shared = { parentRefs: [{ name: 'gw', namespace: 'infra' }] };
    const rendered = await render(() => [
      gatewayClass(),
      gateway('infra', 'gw', [{ name: 'web', port: 18086, allowedRoutes: { namespaces: { from: 'All' } } }]),
      { ...ingress('shop', 'site', { rules: [rule('shop.example.com', { path: '/', service: 'app' })] }), metadata: { name: 'site', namespace: 'shop', creationTimestamp: '2001-01-01T00:00:00Z' } },
      httpRoute('evil', 'steal', { ...shared, hostnames: ['shop.example.com', 'evil.example.com'], rules: [{ backendRefs: [ref('app')] }] }, at('2002-01-01T00:00:00Z')),
      httpRoute('shop', 'own', { ...shared, hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('app')] }] }, at('2003-01-01T00:00:00Z')),
      httpRoute('late', 'late', { ...shared, hostnames: ['evil.example.com'], rules: [{ backendRefs: [ref('app')] }] }, at('2004-01-01T00:00:00Z')),
      ...['shop', 'evil', 'late'].flatMap((ns) => [service(ns, 'app'), endpointSlice(ns, 'app', ['127.0.0.2'], { name: 'http', port: 9000 })]),
    ]);
    // Plain routes (a hostname, a path prefix, one backend) are entries of the bind's host prefix map.
    const routes = (rendered.result.auxiliaryFiles.maps['gateway-0-host-prefix.map'] ?? '').split('\n').filter((l) => l !== '');
    expect(routes).toEqual(['evil.example.com/ gw_evil_steal_0_0', 'shop.example.com/ gw_shop_own_0_0']);
    expect(rendered.result.haproxyConfig).not.toContain('gw_late_late');
    expect(reason(rendered, 'late', 'Accepted')).toBe('NotAllowedByListeners');
    expect(rendered.result.warnings).toContain('HTTPRoute evil/steal: hostname shop.example.com belongs to Ingress shop/site, which claimed it first; the route does not answer it');
    expect(rendered.result.gatewayStatus?.gateways[0]?.listeners[0]?.attachedRoutes).toBe(2);
  });

  it("keeps a route from a wildcard over another namespace's hosts, and from a host under another namespace's wildcard, as with Ingresses", async () => {
    const at = (iso: string) => ({ creationTimestamp: iso });
    const shared = { parentRefs: [{ name: 'gw', namespace: 'infra' }] };
    const rendered = await render(() => [
      gatewayClass(),
      gateway('infra', 'gw', [{ name: 'web', port: 18088, allowedRoutes: { namespaces: { from: 'All' } } }]),
      { ...ingress('shop', 'site', { rules: [rule('a.shop.example.com', { path: '/', service: 'app' }), rule('*.cdn.example.com', { path: '/', service: 'app' })] }), metadata: { name: 'site', namespace: 'shop', creationTimestamp: '2001-01-01T00:00:00Z' } },
      httpRoute('evil', 'wide', { ...shared, hostnames: ['*.shop.example.com', 'x.cdn.example.com', 'evil.example.com'], rules: [{ backendRefs: [ref('app')] }] }, at('2002-01-01T00:00:00Z')),
      ...['shop', 'evil'].flatMap((ns) => [service(ns, 'app'), endpointSlice(ns, 'app', ['127.0.0.2'], { name: 'http', port: 9000 })]),
    ]);
    expect(rendered.result.warnings).toContain('HTTPRoute evil/wide: hostname *.shop.example.com belongs to Ingress shop/site, which claimed it first; the route does not answer it');
    expect(rendered.result.warnings).toContain('HTTPRoute evil/wide: hostname x.cdn.example.com belongs to Ingress shop/site, which claimed it first; the route does not answer it');
    expect(rendered.result.haproxyConfig).not.toContain('.shop.example.com }');
    expect(rendered.result.auxiliaryFiles.maps['gateway-0-host-prefix.map']).toBe('evil.example.com/ gw_evil_wide_0_0\n');
    expect(reason(rendered, 'wide', 'Accepted')).toBe('Accepted');
  });
});

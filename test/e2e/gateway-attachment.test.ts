// Gateway API attachment after the upstream conformance suite, on a real HAProxy: listener and
// route hostnames intersected, routes of other namespaces admitted by a namespace selector,
// cross-namespace backends only through a ReferenceGrant, invalid backends answering 500 (all of
// a rule, or their share of its weight), two Gateways on two addresses with the same port kept
// apart, and an Ingress and an HTTPRoute served by one render.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { ingress, rule } from '../helpers/cluster.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { expectBackend, gatewayScenario, infraServices, INFRA, startInfraBackends, type GatewayClient } from '../helpers/e2e-gateway.js';
import { renderToDir, withHaproxy } from '../helpers/e2e-render.js';
import { gateway, gatewayClass, httpRoute, namespace, ref, referenceGrant } from '../helpers/gateway-objects.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/gateway-attachment.test.ts');

let root: string;
let counter = 0;
const echoes = new EchoFleet();
let backends: EchoServer[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-gateway-attach-'));
  if (!SKIP_HAPROXY) backends = await startInfraBackends(echoes);
});
afterAll(async () => {
  await echoes.stopAll();
  await rm(root, { recursive: true, force: true });
});

const scenario = (objects: (port: number) => KubeObject[], body: (client: GatewayClient) => Promise<void>, allowWarnings = false): Promise<void> =>
  gatewayScenario(root, backends, objects, body, { allowWarnings });
const prefix = (value: string) => [{ path: { type: 'PathPrefix', value } }];
const parentOf = (name: string) => ({ parentRefs: [{ name, namespace: INFRA }] });

describe.skipIf(SKIP_HAPROXY)('Gateway API attachment on a real HAProxy (conformance scenarios)', () => {
  it('HostnameIntersection: a route answers only the hostnames it shares with the listeners, most specific listener first', async () => {
    const routeOf = (name: string, hostnames: string[], path: string, backend: string) =>
      httpRoute(INFRA, name, { ...parentOf('httproute-hostname-intersection'), hostnames, rules: [{ matches: prefix(path), backendRefs: [ref(backend)] }] });
    await scenario(
      (port) => [
        gateway(INFRA, 'httproute-hostname-intersection', [
          { name: 'listener-1', port, hostname: 'very.specific.com' },
          { name: 'listener-2', port, hostname: '*.wildcard.io' },
          { name: 'listener-3', port, hostname: '*.anotherwildcard.io' },
        ]),
        routeOf('specific-host-matches-listener-specific-host', ['non.matching.com', '*.nonmatchingwildcard.io', 'very.specific.com'], '/s1', 'v1'),
        routeOf('specific-host-matches-listener-wildcard-host', ['non.matching.com', 'wildcard.io', 'foo.wildcard.io', 'bar.wildcard.io', 'foo.bar.wildcard.io'], '/s2', 'v2'),
        routeOf('wildcard-host-matches-listener-specific-host', ['non.matching.com', '*.specific.com'], '/s3', 'v3'),
        routeOf('wildcard-host-matches-listener-wildcard-host', ['*.anotherwildcard.io'], '/s4', 'v1'),
        routeOf('no-intersecting-hosts', ['specific.but.wrong.com', 'wildcard.io'], '/s5', 'v2'),
      ],
      async (client) => {
        const at = (host: string, path: string) => client({ host, path });
        expectBackend(await at('very.specific.com', '/s1'), 'v1', '/s1');
        expectBackend(await at('very.specific.com:1234', '/s1'), 'v1');
        for (const [host, path] of [['non.matching.com', '/s1'], ['foo.nonmatchingwildcard.io', '/s1'], ['foo.wildcard.io', '/s1'], ['very.specific.com', '/non-matching-prefix']]) {
          expect((await at(host as string, path as string)).status, `${host}${path}`).toBe(404);
        }
        for (const host of ['foo.wildcard.io', 'bar.wildcard.io', 'foo.bar.wildcard.io']) expectBackend(await at(host, '/s2'), 'v2');
        for (const host of ['non.matching.com', 'wildcard.io', 'very.specific.com']) expect((await at(host, '/s2')).status).toBe(404);
        expectBackend(await at('very.specific.com', '/s3'), 'v3');
        for (const host of ['non.matching.com', 'foo.specific.com', 'foo.wildcard.io']) expect((await at(host, '/s3')).status).toBe(404);
        for (const host of ['foo.anotherwildcard.io', 'bar.anotherwildcard.io', 'foo.bar.anotherwildcard.io']) expectBackend(await at(host, '/s4'), 'v1');
        for (const host of ['anotherwildcard.io', 'foo.wildcard.io', 'very.specific.com']) expect((await at(host, '/s4')).status).toBe(404);
        for (const host of ['specific.but.wrong.com', 'wildcard.io']) expect((await at(host, '/s5')).status).toBe(404);
      },
    );
  });

  it('CrossNamespace: a listener admitting namespaces by label serves a route there, and refuses a namespace without the label', async () => {
    const web = 'web-backend';
    await scenario(
      (port) => [
        gateway(INFRA, 'backend-namespaces', [{ name: 'http', port, hostname: 'cross.example.com', allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { 'gateway-conformance': 'backend' } } } } }]),
        namespace(web, { 'gateway-conformance': 'backend' }),
        namespace('other'),
        ...infraServices(backends.slice(0, 1), web),
        ...infraServices(backends.slice(1, 2), 'other'),
        httpRoute(web, 'cross-namespace', { ...parentOf('backend-namespaces'), rules: [{ matches: prefix('/'), backendRefs: [ref('v1')] }] }),
        httpRoute('other', 'not-admitted', { ...parentOf('backend-namespaces'), rules: [{ matches: prefix('/other'), backendRefs: [ref('v2')] }] }),
      ],
      async (client) => {
        expectBackend(await client({ host: 'cross.example.com', path: '/' }), 'v1', '/');
        expectBackend(await client({ host: 'cross.example.com', path: '/other' }), 'v1', '/other');
      },
    );
  });

  it('ReferenceGrant: a backend in another namespace is served only while a grant there allows it; without one the rule answers 500', async () => {
    const [port] = (await freePorts(1)) as [number];
    const objects = (grant: boolean): KubeObject[] => [
      gatewayClass(),
      gateway(INFRA, 'same-namespace', [{ name: 'http', port }]),
      ...infraServices(backends.slice(0, 1), 'app-backend'),
      httpRoute(INFRA, 'reference-grant', { parentRefs: [{ name: 'same-namespace' }], rules: [{ backendRefs: [ref('v1', { namespace: 'app-backend' })] }] }),
      ...(grant ? [referenceGrant('app-backend', 'reference-grant', INFRA, 'v1')] : []),
      referenceGrant('app-backend', 'grant-for-others', 'elsewhere'),
    ];
    const granted = await renderToDir(join(root, `out-grant-${++counter}`), objects(true));
    expect(granted.result.gatewayStatus?.httpRoutes[0]?.parents[0]?.conditions).toEqual([
      { type: 'Accepted', status: 'True', reason: 'Accepted' },
      { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' },
    ]);
    await withHaproxy(granted, async () => {
      expectBackend(await send({ port, host: 'example.com', path: '/granted' }), 'v1', '/granted');
    });
    const revoked = await renderToDir(join(root, `out-grant-${++counter}`), objects(false));
    expect(revoked.result.gatewayStatus?.httpRoutes[0]?.parents[0]?.conditions[1]).toMatchObject({ type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' });
    await withHaproxy(revoked, async () => {
      expect((await send({ port, host: 'example.com', path: '/granted' })).status).toBe(500);
    });
  });

  it('InvalidNonExistentBackendRef: a rule whose only backend does not exist answers 500, and a missing half of the weight answers half 500s', async () => {
    await scenario(
      () => [
        httpRoute(INFRA, 'invalid-nonexistent-backend-ref', {
          parentRefs: [{ name: 'same-namespace' }],
          rules: [
            { matches: prefix('/missing'), backendRefs: [ref('nonexistent')] },
            { matches: prefix('/half'), backendRefs: [ref('v1'), ref('nonexistent')] },
            { matches: prefix('/none') },
          ],
        }),
      ],
      async (client) => {
        expect((await client({ path: '/missing' })).status).toBe(500);
        expect((await client({ path: '/none' })).status).toBe(500);
        let errors = 0;
        for (let i = 0; i < 200; i++) {
          const reply = await client({ path: '/half' });
          if (reply.status === 500) errors++;
          else expectBackend(reply, 'v1', '/half');
        }
        expect(Math.abs(errors / 200 - 0.5)).toBeLessThanOrEqual(0.1);
        expect((await client({ path: '/elsewhere' })).status).toBe(404);
      },
      true,
    );
  });

  it('MultipleGateways: two Gateways on 127.0.0.5 and 127.0.0.6 with the same port serve only their own routes', async () => {
    const [port] = (await freePorts(1)) as [number];
    const objects = [
      gatewayClass(),
      gateway(INFRA, 'gateway-one', [{ name: 'http', port }], { addresses: [{ type: 'IPAddress', value: '127.0.0.5' }] }),
      gateway(INFRA, 'gateway-two', [{ name: 'http', port }], { addresses: [{ type: 'IPAddress', value: '127.0.0.6' }] }),
      ...infraServices(backends),
      httpRoute(INFRA, 'route-one', { parentRefs: [{ name: 'gateway-one' }], rules: [{ backendRefs: [ref('v1')] }] }),
      httpRoute(INFRA, 'route-two', { parentRefs: [{ name: 'gateway-two' }], rules: [{ matches: prefix('/two'), backendRefs: [ref('v2')] }] }),
    ];
    const rendered = await renderToDir(join(root, `out-multi-${++counter}`), objects, { gatewayAddresses: '127.0.0.5,127.0.0.6' });
    await withHaproxy(rendered, async () => {
      const to = (address: string, path: string) => send({ address, port, host: 'example.com', path });
      expectBackend(await to('127.0.0.5', '/two'), 'v1', '/two');
      expectBackend(await to('127.0.0.6', '/two'), 'v2', '/two');
      expect((await to('127.0.0.6', '/'))?.status).toBe(404);
    });
    const statuses = rendered.result.gatewayStatus?.gateways.map((g) => [g.name, g.listeners[0]?.attachedRoutes]);
    expect(statuses).toEqual([
      ['gateway-one', 1],
      ['gateway-two', 1],
    ]);
  });

  it('Coexistence: one render serves an Ingress on the Ingress frontends and an HTTPRoute on its Gateway, each only there', async () => {
    await gatewayScenario(
      root,
      backends,
      () => [
        ingress(INFRA, 'shop', { rules: [rule('shop.example.com', { path: '/', service: 'v3' })] }),
        httpRoute(INFRA, 'app', { parentRefs: [{ name: 'same-namespace' }], hostnames: ['app.example.com'], rules: [{ backendRefs: [ref('v2')] }] }),
      ],
      async (client, _port, rendered) => {
        expectBackend(await client({ host: 'app.example.com', path: '/route' }), 'v2', '/route');
        expect((await client({ host: 'shop.example.com', path: '/' })).status).toBe(404);
        const http = rendered.ports.http;
        expectBackend(await send({ port: http, host: 'shop.example.com', path: '/cart' }), 'v3', '/cart');
        expect((await send({ port: http, host: 'app.example.com', path: '/route' })).status).toBe(404);
        expect(rendered.result.haproxyConfig).toContain('backend ing_infra_shop_v3_');
        expect(rendered.result.haproxyConfig).toContain('backend gw_infra_app_0_0');
      },
    );
  });
});

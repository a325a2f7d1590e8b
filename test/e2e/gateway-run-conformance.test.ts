// Gateway API conformance scenarios against the real controller: `run --kubeconfig --haproxy` on
// the fake API server, one controller and one HAProxy for the whole file, real requests to echo
// backends on loopback. Reproduced after the upstream suite: ListenerHostnameMatching,
// InvalidReferenceGrant, PartiallyInvalidViaInvalidReferenceGrant, ServiceTypes (headless
// Services, manual EndpointSlices, ClusterIP None) and the GatewaySecret ReferenceGrant cases
// (a listener's cross-namespace certificateRef with invalid, specific and namespace-wide grants).
// Each scenario has a Gateway of its own on its own port, so they run side by side. A case
// passes after 3 matching answers in a row within 30 s (settled). The acceptance results are
// asserted on the computed gatewayStatus of a render of the same objects, as the other Gateway
// tests do.
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import type { GatewayStatusReport } from '../../src/worker/routing/gateway-model.js';
import { endpointSlice, exampleTlsData, service, tlsSecret } from '../helpers/cluster.js';
import { send, servedCertificate, type Reply } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { infraServices, INFRA, settled, startInfraBackends } from '../helpers/e2e-gateway.js';
import { renderToDir } from '../helpers/e2e-render.js';
import { GatewayRun } from '../helpers/gateway-run.js';
import { gateway, gatewayClass, httpRoute, ref } from '../helpers/gateway-objects.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/gateway-run-conformance.test.ts');

const WEB = 'web-backend';
const APP = 'app-backend';
const GROUP = 'gateway.networking.k8s.io';

let run: GatewayRun;
const echoes = new EchoFleet();
let infra: EchoServer[] = [];
const port = { hostnames: 0, invalidGrant: 0, partial: 0, serviceTypes: 0, secret: 0 };
const apply = (...objects: KubeObject[]): void => run.apply(...objects);
const remove = (object: KubeObject): void => run.remove(object);

/** The acceptance results a render of the API server's objects computes. */
let renders = 0;
async function statusNow(): Promise<GatewayStatusReport> {
  const rendered = await renderToDir(join(run.root, `status-${++renders}`), run.objects());
  return rendered.result.gatewayStatus as GatewayStatusReport;
}
const routeCondition = (status: GatewayStatusReport, route: string, type: string) =>
  status.httpRoutes.find((r) => r.name === route)?.parents.map((p) => p.conditions.find((c) => c.type === type));
const listenerOf = (status: GatewayStatusReport, gw: string, listener: string) => status.gateways.find((g) => g.name === gw)?.listeners.find((l) => l.name === listener);

/** A grant in `namespace` from `fromKind`s of INFRA to `toKind` (every object of it when `toName` is undefined). */
function grant(namespace: string, name: string, from: Record<string, string>, to: Record<string, string>): KubeObject {
  return { apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name, namespace }, spec: { from: [from], to: [to] } };
}

/** The ways a grant can miss (upstream's InvalidReferenceGrant set), for references from `fromKind` to `toKind` `toName` in `target`. */
function wrongGrants(target: string, fromKind: string, toKind: string, toName: string, otherKind: string): KubeObject[] {
  const from = { group: GROUP, kind: fromKind, namespace: INFRA };
  const to = { group: '', kind: toKind, name: toName };
  return [
    grant(INFRA, `${fromKind.toLowerCase()}-wrong-namespace`, from, to),
    grant(target, `${fromKind.toLowerCase()}-wrong-from-group`, { ...from, group: 'not-the-group-youre-looking-for' }, to),
    grant(target, `${fromKind.toLowerCase()}-wrong-from-kind`, { ...from, kind: otherKind }, to),
    grant(target, `${fromKind.toLowerCase()}-wrong-from-namespace`, { ...from, namespace: 'not-the-namespace-youre-looking-for' }, to),
    grant(target, `${fromKind.toLowerCase()}-wrong-to-group`, from, { ...to, group: 'not-the-group-youre-looking-for' }),
    grant(target, `${fromKind.toLowerCase()}-wrong-to-kind`, from, { ...to, kind: otherKind === 'Gateway' ? 'Secret' : 'Service' }),
    grant(target, `${fromKind.toLowerCase()}-wrong-to-name`, from, { ...to, name: `not-the-${toName}-youre-looking-for` }),
  ];
}

const ask = (listener: number, host: string, path = '/', tls = false): Promise<Reply> => send({ port: listener, host, path, tls, timeoutMs: 3000 });
/** Settles on answers from `backend` with status 200, and returns the last. */
const settlesOn = (what: string, listener: number, host: string, path: string, backend: string, tls = false): Promise<Reply> =>
  settled(what, async () => {
    const reply = await ask(listener, host, path, tls);
    return reply.status === 200 && reply.echo?.name === backend ? reply : undefined;
  });
const settlesOnStatus = (what: string, listener: number, host: string, path: string, status: number): Promise<Reply> =>
  settled(what, async () => {
    const reply = await ask(listener, host, path);
    return reply.status === status ? reply : undefined;
  });

const manualSlice = (svc: string, family: 'ip4' | 'ip6', addresses: string[], backend: EchoServer): KubeObject => ({
  ...endpointSlice(INFRA, svc, addresses, { name: 'first-port', port: backend.port }, `${svc}-${family}`),
  addressType: family === 'ip4' ? 'IPv4' : 'IPv6',
});
const typedService = (name: string, extra: Record<string, unknown>): KubeObject => ({ ...service(INFRA, name), spec: { ports: [{ name: 'first-port', protocol: 'TCP', port: 8080, targetPort: 3000 }], ...extra } });
const secretGateway = () =>
  gateway(INFRA, 'gateway-secret-reference-grant', [
    { name: 'https', port: port.secret, protocol: 'HTTPS', allowedRoutes: { namespaces: { from: 'All' } }, tls: { certificateRefs: [{ group: '', kind: 'Secret', name: 'certificate', namespace: WEB }] } },
  ]);

describe.skipIf(SKIP_HAPROXY)('Gateway API conformance scenarios under run --kubeconfig --haproxy', () => {
  beforeAll(async () => {
    infra = await startInfraBackends(echoes);
    const web = await echoes.start(WEB, '127.0.0.5');
    const appV1 = await echoes.start(`${APP}-v1`, '127.0.0.6');
    const appV2 = await echoes.start(`${APP}-v2`, '127.0.0.7');
    [port.hostnames, port.invalidGrant, port.partial, port.serviceTypes, port.secret] = (await freePorts(5)) as [number, number, number, number, number];
    const v1 = infra[0] as EchoServer;
    const http1 = (name: string, p: number) => gateway(INFRA, name, [{ name: 'http', port: p }]);
    const section = (sectionName: string) => ({ name: 'httproute-listener-hostname-matching', namespace: INFRA, sectionName });
    run = await GatewayRun.start('gateway-run-conformance', [
      gatewayClass(),
      ...infraServices(infra),
      ...[web, appV1, appV2].flatMap((b) => [service(b.name === WEB ? WEB : APP, b.name), endpointSlice(b.name === WEB ? WEB : APP, b.name, [b.host], { name: 'http', port: b.port })]),
      // ListenerHostnameMatching: four listeners on one port, told apart by hostname.
      gateway(INFRA, 'httproute-listener-hostname-matching', [
        { name: 'listener-1', port: port.hostnames, hostname: 'bar.com' },
        { name: 'listener-2', port: port.hostnames, hostname: 'foo.bar.com' },
        { name: 'listener-3', port: port.hostnames, hostname: '*.bar.com' },
        { name: 'listener-4', port: port.hostnames, hostname: '*.foo.com' },
      ]),
      httpRoute(INFRA, 'backend-v1', { parentRefs: [section('listener-1')], rules: [{ backendRefs: [ref('v1')] }] }),
      httpRoute(INFRA, 'backend-v2', { parentRefs: [section('listener-2')], rules: [{ backendRefs: [ref('v2')] }] }),
      httpRoute(INFRA, 'backend-v3', { parentRefs: [section('listener-3'), section('listener-4')], rules: [{ backendRefs: [ref('v3')] }] }),
      // InvalidReferenceGrant: a backendRef into web-backend, and seven grants that each miss it.
      http1('same-namespace', port.invalidGrant),
      ...wrongGrants(WEB, 'HTTPRoute', 'Service', WEB, 'Gateway'),
      httpRoute(INFRA, 'reference-grant', { parentRefs: [{ name: 'same-namespace' }], rules: [{ backendRefs: [ref(WEB, { namespace: WEB })] }] }),
      // PartiallyInvalidViaInvalidReferenceGrant: the grant names app-backend-v1 only.
      http1('same-namespace-partial', port.partial),
      grant(APP, 'invalid-reference-grant', { group: GROUP, kind: 'HTTPRoute', namespace: INFRA }, { group: '', kind: 'Service', name: `${APP}-v1` }),
      httpRoute(INFRA, 'invalid-reference-grant', {
        parentRefs: [{ name: 'same-namespace-partial' }],
        rules: [
          { matches: [{ path: { type: 'PathPrefix', value: '/v2' } }], backendRefs: [ref(`${APP}-v2`, { namespace: APP })] },
          { backendRefs: [ref(`${APP}-v1`, { namespace: APP })] },
        ],
      }),
      // ServiceTypes: manual EndpointSlices (empty until the case fills them), headless with a selector (its slice as
      // the EndpointSlice controller makes it), headless with manual EndpointSlices.
      http1('same-namespace-service-types', port.serviceTypes),
      typedService('manual-endpointslices', {}),
      typedService('headless', { clusterIP: 'None', selector: { app: 'infra-backend-v1' } }),
      typedService('headless-manual-endpointslices', { clusterIP: 'None' }),
      ...['manual-endpointslices', 'headless-manual-endpointslices'].flatMap((svc) => [manualSlice(svc, 'ip4', [], v1), manualSlice(svc, 'ip6', [], v1)]),
      { ...endpointSlice(INFRA, 'headless', [v1.host], { name: 'first-port', port: v1.port }, 'headless-x7k2p'), metadata: { name: 'headless-x7k2p', namespace: INFRA, labels: { 'kubernetes.io/service-name': 'headless', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } } },
      httpRoute(INFRA, 'service-types', {
        parentRefs: [{ name: 'same-namespace-service-types' }],
        rules: ['manual-endpointslices', 'headless', 'headless-manual-endpointslices'].map((svc) => ({ matches: [{ path: { type: 'Exact', value: `/${svc}` } }], backendRefs: [{ name: svc, port: 8080 }] })),
      }),
      // GatewaySecret: a listener whose certificate is in web-backend; the grants there miss it until the case adds one.
      secretGateway(),
      tlsSecret(WEB, 'certificate'),
      ...wrongGrants(WEB, 'Gateway', 'Secret', 'certificate', 'HTTPRoute'),
      httpRoute(INFRA, 'secret-route', { parentRefs: [{ name: 'gateway-secret-reference-grant' }], rules: [{ backendRefs: [ref('v1')] }] }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await run?.stop();
    await echoes.stopAll();
  });

  it('ListenerHostnameMatching: each host reaches the route of the most specific listener it matches; others get 404', async () => {
    const cases: [string, string | 404][] = [
      ['bar.com', 'v1'],
      ['foo.bar.com', 'v2'],
      ['baz.bar.com', 'v3'],
      ['boo.bar.com', 'v3'],
      ['multiple.prefixes.bar.com', 'v3'],
      ['multiple.prefixes.foo.com', 'v3'],
      ['foo.com', 404],
      ['no.matching.host', 404],
    ];
    for (const [host, expected] of cases) {
      if (expected === 404) {
        expect((await settlesOnStatus(host, port.hostnames, host, '/', 404)).echo).toBeUndefined();
      } else {
        const reply = await settlesOn(host, port.hostnames, host, '/', expected);
        expect(reply.echo?.url).toBe('/');
        expect(reply.echo?.headers.host).toBe(host);
      }
    }
    const status = await statusNow();
    for (const route of ['backend-v1', 'backend-v2', 'backend-v3']) {
      expect(routeCondition(status, route, 'Accepted')?.map((c) => c?.status), route).toEqual(route === 'backend-v3' ? ['True', 'True'] : ['True']);
      expect(routeCondition(status, route, 'ResolvedRefs')?.every((c) => c?.status === 'True'), route).toBe(true);
    }
    expect(['listener-1', 'listener-2', 'listener-3', 'listener-4'].map((l) => listenerOf(status, 'httproute-listener-hostname-matching', l)?.attachedRoutes)).toEqual([1, 1, 1, 1]);
  });

  it('InvalidReferenceGrant: none of the grants that miss lets the route reach web-backend; it answers 500 and says RefNotPermitted', async () => {
    const reply = await settlesOnStatus('GET / with only missing grants', port.invalidGrant, 'example.com', '/', 500);
    expect(reply.echo).toBeUndefined();
    const status = await statusNow();
    expect(routeCondition(status, 'reference-grant', 'Accepted')?.[0]?.status).toBe('True');
    expect(routeCondition(status, 'reference-grant', 'ResolvedRefs')?.[0]).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
  });

  it('PartiallyInvalidViaInvalidReferenceGrant: the ungranted rule answers 500, its granted sibling reaches app-backend-v1', async () => {
    const refused = await settlesOnStatus('GET /v2 to the ungranted app-backend-v2', port.partial, 'example.com', '/v2', 500);
    expect(refused.echo).toBeUndefined();
    const reply = await settlesOn('GET / to app-backend-v1', port.partial, 'example.com', '/', `${APP}-v1`);
    expect(reply.echo?.url).toBe('/');
    const status = await statusNow();
    expect(routeCondition(status, 'invalid-reference-grant', 'Accepted')?.[0]?.status).toBe('True');
    expect(routeCondition(status, 'invalid-reference-grant', 'ResolvedRefs')?.[0]).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
  });

  it('ServiceTypes: a headless Service, manual EndpointSlices and a headless Service with manual EndpointSlices all reach infra-backend-v1', async () => {
    const v1 = infra[0] as EchoServer;
    // The manual slices are empty so far: nothing serves those paths.
    expect((await settlesOnStatus('/manual-endpointslices before its slices are filled', port.serviceTypes, 'example.com', '/manual-endpointslices', 503)).echo).toBeUndefined();
    // Filled as upstream fills them: the IPv4 slice gets the pod's address, the IPv6 one stays empty.
    apply(manualSlice('manual-endpointslices', 'ip4', [v1.host], v1), manualSlice('headless-manual-endpointslices', 'ip4', [v1.host], v1));
    for (const path of ['/manual-endpointslices', '/headless-manual-endpointslices', '/headless']) {
      const reply = await settlesOn(path, port.serviceTypes, 'example.com', path, 'v1');
      expect(reply.echo?.url).toBe(path);
    }
    expect((await ask(port.serviceTypes, 'example.com', '/headless/more')).status).toBe(404);
    const status = await statusNow();
    expect(routeCondition(status, 'service-types', 'Accepted')?.[0]?.status).toBe('True');
    expect(routeCondition(status, 'service-types', 'ResolvedRefs')?.[0]?.status).toBe('True');
  });

  it('GatewaySecret ReferenceGrant: a cross-namespace certificateRef is served only while a grant names it (specific, then namespace-wide)', async () => {
    const unbound = async (what: string) =>
      settled(what, () =>
        ask(port.secret, 'secret.example.com', '/', true).then(
          () => undefined,
          (error: Error) => error,
        ),
      );
    await unbound('no TLS listener while every grant misses');
    let status = await statusNow();
    // Unbound, the listener still counts secret-route, attached to it (the spec's attachedRoutes).
    expect(listenerOf(status, 'gateway-secret-reference-grant', 'https')).toMatchObject({ attachedRoutes: 1, conditions: expect.arrayContaining([expect.objectContaining({ type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' })]) });

    const from = { group: GROUP, kind: 'Gateway', namespace: INFRA };
    const specific = grant(WEB, 'reference-grant-specific', from, { group: '', kind: 'Secret', name: 'certificate' });
    apply(specific);
    const expected = new X509Certificate(Buffer.from(exampleTlsData()['tls.crt'], 'base64')).fingerprint256;
    const reply = await settlesOn('HTTPS through the specific grant', port.secret, 'secret.example.com', '/secure', 'v1', true);
    expect(reply.echo?.url).toBe('/secure');
    expect(reply.echo?.headers['x-forwarded-proto']).toBe('https');
    expect((await servedCertificate(port.secret, 'secret.example.com')).fingerprint256).toBe(expected);
    status = await statusNow();
    const listener = listenerOf(status, 'gateway-secret-reference-grant', 'https');
    expect(listener?.conditions.filter((c) => c.type === 'ResolvedRefs' || c.type === 'Programmed').map((c) => [c.type, c.status])).toEqual([
      ['ResolvedRefs', 'True'],
      ['Programmed', 'True'],
    ]);

    // A grant for every Secret of the namespace serves it the same.
    const everything = grant(WEB, 'reference-grant-all-in-namespace', from, { group: '', kind: 'Secret' });
    apply(everything);
    remove(specific);
    expect((await settlesOn('HTTPS through the namespace-wide grant', port.secret, 'secret.example.com', '/', 'v1', true)).echo?.headers['x-forwarded-proto']).toBe('https');
    expect(listenerOf(await statusNow(), 'gateway-secret-reference-grant', 'https')?.conditions.find((c) => c.type === 'ResolvedRefs')?.status).toBe('True');

    // Without it the listener is not served at the next render.
    remove(everything);
    await unbound('no TLS listener once the grant is deleted');
  });
});

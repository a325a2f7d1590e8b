// The rest of upstream's core Gateway API conformance scenarios, against the real controller:
// `run --kubeconfig --haproxy` on the fake API server (test/helpers/gateway-run.ts), one
// controller and one HAProxy for the file, each scenario on a Gateway of its own and its own
// port. Reproduced after the upstream suite (v1.6), with the status the controller writes (the
// exact conditions and reasons upstream expects, every condition at the object's generation):
// GatewayListenerUnsupportedProtocol, GatewayInvalidParametersRef, GatewayInvalidRouteKind,
// GatewayNameMaximumLength, GatewaySecretMissingReferenceGrant, GatewayWithAttachedRoutes,
// HTTPRouteNoBackendRefs (upstream's omitted-backendrefs), HTTPRouteMatching, the invalid
// references (HTTPRouteInvalidCrossNamespaceBackendRef, HTTPRouteInvalidBackendRefUnknownKind,
// HTTPRouteInvalidCrossNamespaceParentRef, HTTPRouteInvalidParentRefNotMatchingSectionName) and
// the extended HTTPRoute303/307/308RedirectStatusCode; and the Host header normalized on a Gateway
// bind as on the Ingress frontends. Each also sends real requests (a listener that must not be
// bound refuses connections). A case passes after 3 matching answers in a row within 30 s
// (settled), as upstream's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, type Reply } from '../helpers/e2e-client.js';
import { EchoFleet } from '../helpers/e2e-echo.js';
import { INFRA, infraServices, settled, startInfraBackends } from '../helpers/e2e-gateway.js';
import { eventually } from '../helpers/eventually.js';
import { service, tlsSecret } from '../helpers/cluster.js';
import { CONTROLLER, gateway, gatewayClass, httpRoute, namespace, ref } from '../helpers/gateway-objects.js';
import { GatewayRun } from '../helpers/gateway-run.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/gateway-run-core.test.ts');

type Condition = { type: string; status: string; reason: string; observedGeneration?: number };
type Listener = { name: string; attachedRoutes: number; supportedKinds: unknown[]; conditions: Condition[] };
/** What upstream expects of a listener: these fields exactly, these conditions among its conditions. */
type ExpectedListener = { name: string; supportedKinds: unknown[]; attachedRoutes: number; conditions: Omit<Condition, 'observedGeneration'>[] };

const HTTP_ROUTE_KIND = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' };
const LONG_NAME = `gateway-name-maximum-length-${'a'.repeat(253 - 'gateway-name-maximum-length-'.length)}`;

let run: GatewayRun;
const echoes = new EchoFleet();
const port = { unsupported: 0, mixedProtocols: 0, parameters: 0, onlyInvalidKind: 0, mixedKinds: 0, longName: 0, noBackends: 0, matching: 0, redirects: 0, hosts: 0, badRefs: 0, badKind: 0, xnsParent: 0, badSection: 0, oneRoute: 0, twoRoutes: 0, missingGrant: 0, unresolved: 0 };
const WEB = 'web-backend';

const gatewayOf = (name: string) => run.current('Gateway', `${INFRA}/${name}`);
const gatewayConditions = (name: string): Condition[] => (run.status('Gateway', `${INFRA}/${name}`).conditions ?? []) as Condition[];
const listenersOf = (name: string): Listener[] => (run.status('Gateway', `${INFRA}/${name}`).listeners ?? []) as Listener[];
const atGeneration = (conditions: readonly Condition[], generation: unknown): boolean => conditions.length > 0 && conditions.every((c) => c.observedGeneration === generation);

/** Upstream's GatewayMustHaveLatestConditions: every Gateway condition carries the current generation. */
async function latestConditions(name: string): Promise<Condition[]> {
  return eventually(() => {
    const conditions = gatewayConditions(name);
    return atGeneration(conditions, gatewayOf(name)?.metadata.generation) ? conditions : undefined;
  }, `the conditions of Gateway ${name} at its generation`, 30_000);
}

/** Upstream's GatewayStatusMustHaveListeners: the listeners in status, as expected (conditions as a subset). */
async function listenersAre(name: string, expected: readonly ExpectedListener[]): Promise<void> {
  await latestConditions(name);
  const matches = (): boolean => {
    const actual = listenersOf(name);
    return (
      actual.length === expected.length &&
      expected.every((e) => {
        const l = actual.find((a) => a.name === e.name);
        const same = l !== undefined && l.attachedRoutes === e.attachedRoutes && JSON.stringify(l.supportedKinds) === JSON.stringify(e.supportedKinds);
        return same && e.conditions.every((c) => l.conditions.some((x) => x.type === c.type && x.status === c.status && x.reason === c.reason));
      })
    );
  };
  await eventually(matches, `the listeners of Gateway ${name} as upstream expects`, 30_000).catch((error: Error) => {
    throw new Error(`${error.message}; they are ${JSON.stringify(listenersOf(name))}`);
  });
}

/** The route's parent conditions of our controller, once they carry its current generation. */
async function routeConditions(name: string, ns = INFRA): Promise<Condition[]> {
  const key = `${ns}/${name}`;
  return eventually(() => {
    const parents = (run.status('HTTPRoute', key).parents ?? []) as { controllerName: string; conditions: Condition[] }[];
    const ours = parents.find((p) => p.controllerName === CONTROLLER)?.conditions ?? [];
    return atGeneration(ours, run.current('HTTPRoute', key)?.metadata.generation) ? ours : undefined;
  }, `the status of HTTPRoute ${name}`, 30_000);
}

const ask = (listener: number, path: string, extra: { method?: string; headers?: Record<string, string> } = {}): Promise<Reply> =>
  send({ port: listener, host: 'example.com', path, timeoutMs: 3000, ...extra });
/** Settles on replies that `ok` accepts, and returns the last. */
const settlesOn = (what: string, listener: number, path: string, ok: (reply: Reply) => boolean, extra: { method?: string; headers?: Record<string, string> } = {}): Promise<Reply> =>
  settled(what, async () => {
    const reply = await ask(listener, path, extra);
    return ok(reply) ? reply : undefined;
  });
const fromBackend = (backend: string, path: string) => (reply: Reply) => reply.status === 200 && reply.echo?.name === backend && reply.echo.url === path;
/** Settles on a refused connection: nothing binds the port. */
const refused = (what: string, listener: number): Promise<Error> =>
  settled(what, () =>
    ask(listener, '/').then(
      () => undefined,
      (error: Error) => error,
    ),
  );

describe.skipIf(SKIP_HAPROXY)('core Gateway API conformance scenarios under run --kubeconfig --haproxy', () => {
  beforeAll(async () => {
    const infra = await startInfraBackends(echoes);
    const ports = (await freePorts(Object.keys(port).length)) as number[];
    Object.keys(port).forEach((key, i) => (port[key as keyof typeof port] = ports[i] as number));
    const all = { namespaces: { from: 'All' } };
    const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });
    const exact = (value: string) => ({ path: { type: 'Exact', value } });
    const redirect = (path: string, statusCode: number) => ({ matches: [prefix(path)], filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode } }] });
    run = await GatewayRun.start('gateway-run-core', [
      gatewayClass(),
      ...infraServices(infra),
      gateway(INFRA, 'gateway-only-unsupported-protocols', [{ name: 'invalid', port: port.unsupported, protocol: 'INVALID' }]),
      gateway(INFRA, 'gateway-supported-and-unsupported-protocols', [
        { name: 'http', port: port.mixedProtocols },
        { name: 'invalid', port: port.unsupported, protocol: 'INVALID' },
      ]),
      gateway(INFRA, 'gateway-invalid-parameters-ref', [{ name: 'http', port: port.parameters }], { infrastructure: { parametersRef: { group: 'invalid.io', kind: 'InvalidParameters', name: 'invalid' } } }),
      gateway(INFRA, 'gateway-only-invalid-route-kind', [{ name: 'http', port: port.onlyInvalidKind, allowedRoutes: { ...all, kinds: [{ kind: 'InvalidRoute' }] } }]),
      gateway(INFRA, 'gateway-supported-and-invalid-route-kind', [{ name: 'http', port: port.mixedKinds, allowedRoutes: { ...all, kinds: [{ kind: 'InvalidRoute' }, { kind: 'HTTPRoute' }] } }]),
      gateway(INFRA, LONG_NAME, [{ name: 'http', port: port.longName }]),
      httpRoute(INFRA, 'name-maximum-length', { parentRefs: [{ name: LONG_NAME }], rules: [{ backendRefs: [ref('v1')] }] }),
      gateway(INFRA, 'same-namespace-no-backends', [{ name: 'http', port: port.noBackends }]),
      httpRoute(INFRA, 'omitted-backendrefs', {
        parentRefs: [{ name: 'same-namespace-no-backends' }],
        rules: [{ matches: [exact('/omitted-no-forward')] }, { matches: [exact('/empty-no-forward')], backendRefs: [] }, { matches: [prefix('/')], backendRefs: [ref('v1')] }],
      }),
      gateway(INFRA, 'same-namespace-matching', [{ name: 'http', port: port.matching }]),
      httpRoute(INFRA, 'matching', {
        parentRefs: [{ name: 'same-namespace-matching' }],
        rules: [
          { matches: [prefix('/'), { headers: [{ name: 'version', value: 'one' }] }], backendRefs: [ref('v1')] },
          { matches: [prefix('/v2'), { headers: [{ name: 'version', value: 'two' }] }], backendRefs: [ref('v2')] },
        ],
      }),
      gateway(INFRA, 'same-namespace-redirects', [{ name: 'http', port: port.redirects }]),
      httpRoute(INFRA, 'redirect-status-codes', { parentRefs: [{ name: 'same-namespace-redirects' }], rules: [redirect('/see-other', 303), redirect('/temporary', 307), redirect('/permanent', 308)] }),
      gateway(INFRA, 'host-normalization', [
        { name: 'shop', port: port.hosts, hostname: 'shop.example.com' },
        { name: 'wild', port: port.hosts, hostname: '*.wild.example.com' },
        { name: 'any', port: port.hosts },
      ]),
      ...(['shop', 'wild', 'any'] as const).map((section, i) =>
        httpRoute(INFRA, `host-${section}`, {
          parentRefs: [{ name: 'host-normalization', sectionName: section }],
          ...(section === 'any' ? { hostnames: ['api.example.com'] } : {}),
          // shop.example.com/admin is v2's, to show paths are matched after normalization.
          rules: [...(section === 'shop' ? [{ matches: [prefix('/admin')], backendRefs: [ref('v2')] }] : []), { backendRefs: [ref(['v1', 'v3', 'v2'][i] as string)] }],
        }),
      ),
      // The invalid references: a Gateway each, admitting only its own namespace.
      service(WEB, WEB),
      gateway(INFRA, 'same-namespace-bad-refs', [{ name: 'http', port: port.badRefs }]),
      httpRoute(INFRA, 'invalid-cross-namespace-backend-ref', { parentRefs: [{ name: 'same-namespace-bad-refs' }], rules: [{ backendRefs: [ref(WEB, { namespace: WEB })] }] }),
      gateway(INFRA, 'same-namespace-bad-kind', [{ name: 'http', port: port.badKind }]),
      httpRoute(INFRA, 'invalid-backend-ref-unknown-kind', { parentRefs: [{ name: 'same-namespace-bad-kind' }], rules: [{ backendRefs: [ref('v1', { group: 'unknownkind.example.com', kind: 'NonExistent' })] }] }),
      gateway(INFRA, 'same-namespace-xns-parent', [{ name: 'http', port: port.xnsParent }]),
      httpRoute(WEB, 'invalid-cross-namespace-parent-ref', { parentRefs: [{ name: 'same-namespace-xns-parent', namespace: INFRA }], rules: [{ backendRefs: [ref(WEB)] }] }),
      gateway(INFRA, 'same-namespace-section', [{ name: 'http', port: port.badSection }]),
      httpRoute(INFRA, 'httproute-listener-not-matching-section-name', { parentRefs: [{ name: 'same-namespace-section', namespace: INFRA, port: port.badSection, sectionName: 'http1' }], rules: [{ backendRefs: [ref('v1')] }] }),
      // GatewaySecretMissingReferenceGrant: a certificate in another namespace, and no grant there at all.
      tlsSecret(WEB, 'certificate'),
      gateway(INFRA, 'gateway-secret-missing-reference-grant', [
        { name: 'https', port: port.missingGrant, protocol: 'HTTPS', allowedRoutes: { namespaces: { from: 'All' } }, tls: { certificateRefs: [{ group: '', kind: 'Secret', name: 'certificate', namespace: WEB }] } },
      ]),
      // GatewayWithAttachedRoutes: listeners admitting the namespace by its kubernetes.io/metadata.name label.
      namespace(INFRA, { 'kubernetes.io/metadata.name': INFRA }),
      ...(
        [
          ['gateway-with-one-attached-route', port.oneRoute, undefined, ['http-route-1']],
          ['gateway-with-two-attached-routes', port.twoRoutes, 'foo.example.com', ['http-route-2', 'http-route-3', 'http-route-not-accepted']],
        ] as const
      ).flatMap(([name, p, hostname, routes]) => [
        gateway(INFRA, name, [{ name: 'http', port: p, ...(hostname === undefined ? {} : { hostname }), allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }], namespaces: { from: 'Selector', selector: { matchLabels: { 'kubernetes.io/metadata.name': INFRA } } } } }]),
        ...routes.map((route) =>
          httpRoute(INFRA, route, { parentRefs: [{ kind: 'Gateway', name, namespace: INFRA }], ...(route.endsWith('not-accepted') ? { hostnames: ['not-accepted.test.com'] } : {}), rules: [{ backendRefs: [ref('v1')] }] }),
        ),
      ]),
      gateway(INFRA, 'unresolved-gateway-with-one-attached-unresolved-route', [
        { name: 'tls', port: port.unresolved, protocol: 'HTTPS', allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }], namespaces: { from: 'Selector', selector: { matchLabels: { 'kubernetes.io/metadata.name': INFRA } } } }, tls: { mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name: 'does-not-exist' }] } },
      ]),
      httpRoute(INFRA, 'http-route-4', { parentRefs: [{ kind: 'Gateway', name: 'unresolved-gateway-with-one-attached-unresolved-route', namespace: INFRA, sectionName: 'tls' }], rules: [{ backendRefs: [ref('does-not-exist')] }] }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await run?.stop();
    await echoes.stopAll();
  });

  it('GatewayListenerUnsupportedProtocol: a Gateway with only unsupported listeners is not accepted, one with a supported listener is, and only that listener binds', async () => {
    const unsupported = { name: 'invalid', supportedKinds: [], attachedRoutes: 0, conditions: [{ type: 'Accepted', status: 'False', reason: 'UnsupportedProtocol' }] };
    await listenersAre('gateway-only-unsupported-protocols', [unsupported]);
    expect((await latestConditions('gateway-only-unsupported-protocols')).find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'ListenersNotValid' });
    await listenersAre('gateway-supported-and-unsupported-protocols', [
      { name: 'http', supportedKinds: [HTTP_ROUTE_KIND], attachedRoutes: 0, conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }] },
      unsupported,
    ]);
    expect((await latestConditions('gateway-supported-and-unsupported-protocols')).find((c) => c.type === 'Accepted')).toMatchObject({ status: 'True', reason: 'ListenersNotValid' });
    // The HTTP listener serves (no route: 404); nothing binds the unsupported one's port.
    expect((await settlesOn('the HTTP listener without routes', port.mixedProtocols, '/', (r) => r.status === 404)).echo).toBeUndefined();
    await refused('the INVALID listener is not bound', port.unsupported);
  });

  it('GatewayInvalidParametersRef: a Gateway whose infrastructure.parametersRef we do not serve is not accepted (InvalidParameters) and not bound', async () => {
    const conditions = await latestConditions('gateway-invalid-parameters-ref');
    expect(conditions.find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'InvalidParameters' });
    expect(conditions.find((c) => c.type === 'Programmed')?.status).toBe('False');
    await refused('the refused Gateway binds nothing', port.parameters);
  });

  it('GatewayInvalidRouteKind: a listener naming an unsupported route kind is ResolvedRefs False (InvalidRouteKinds) and lists only HTTPRoute among its supportedKinds, if named', async () => {
    const invalidKinds = { type: 'ResolvedRefs', status: 'False', reason: 'InvalidRouteKinds' };
    await listenersAre('gateway-only-invalid-route-kind', [{ name: 'http', supportedKinds: [], attachedRoutes: 0, conditions: [invalidKinds] }]);
    await listenersAre('gateway-supported-and-invalid-route-kind', [{ name: 'http', supportedKinds: [HTTP_ROUTE_KIND], attachedRoutes: 0, conditions: [invalidKinds] }]);
    // No kind it can serve: not bound. HTTPRoute among its kinds: bound, answering 404 without routes.
    await refused('the listener of only InvalidRoute is not bound', port.onlyInvalidKind);
    expect((await settlesOn('the listener that also takes HTTPRoute', port.mixedKinds, '/', (r) => r.status === 404)).echo).toBeUndefined();
  });

  it('GatewayNameMaximumLength: a Gateway with a 253-character name gets its conditions at its generation, and serves its route', async () => {
    expect(LONG_NAME).toHaveLength(253);
    const conditions = await latestConditions(LONG_NAME);
    expect(conditions.map((c) => [c.type, c.status])).toEqual([
      ['Accepted', 'True'],
      ['Programmed', 'True'],
    ]);
    await settlesOn('GET / through the long-named Gateway', port.longName, '/', fromBackend('v1', '/'));
    expect((await routeConditions('name-maximum-length')).map((c) => [c.type, c.status])).toEqual([
      ['Accepted', 'True'],
      ['ResolvedRefs', 'True'],
    ]);
  });

  it('HTTPRouteNoBackendRefs: rules with omitted or empty backendRefs answer 500, the route is Accepted with ResolvedRefs True', async () => {
    const conditions = await routeConditions('omitted-backendrefs');
    expect(conditions).toEqual([expect.objectContaining({ type: 'Accepted', status: 'True', reason: 'Accepted' }), expect.objectContaining({ type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' })]);
    await settlesOn('/forward', port.noBackends, '/forward', fromBackend('v1', '/forward'));
    for (const path of ['/omitted-no-forward', '/empty-no-forward']) {
      expect((await settlesOn(path, port.noBackends, path, (r) => r.status === 500)).echo, path).toBeUndefined();
    }
  });

  it('HTTPRouteMatching: path prefixes by whole segments or a header send each request to its rule', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['/', {}, 'v1'],
      ['/example', {}, 'v1'],
      ['/', { Version: 'one' }, 'v1'],
      ['/v2', {}, 'v2'],
      ['/v2/example', {}, 'v2'],
      ['/', { Version: 'two' }, 'v2'],
      ['/v2/', {}, 'v2'],
      ['/v2example', {}, 'v1'],
      ['/foo/v2/example', {}, 'v1'],
    ];
    for (const [path, headers, backend] of cases) {
      const reply = await settlesOn(`${path} ${JSON.stringify(headers)}`, port.matching, path, fromBackend(backend, path), { headers });
      expect(reply.echo?.headers.host).toBe('example.com');
      if (headers.Version !== undefined) expect(reply.echo?.headers.version).toBe(headers.Version);
    }
    expect((await routeConditions('matching')).filter((c) => c.status === 'True').map((c) => c.type)).toEqual(['Accepted', 'ResolvedRefs']);
  });

  it('HTTPRoute303/307/308RedirectStatusCode (extended): a RequestRedirect answers the status code asked for, to the same path', async () => {
    const cases: [string, string, number][] = [
      ['/see-other', 'POST', 303],
      ['/temporary', 'GET', 307],
      ['/permanent', 'GET', 308],
    ];
    for (const [path, method, code] of cases) {
      const reply = await settlesOn(`${method} ${path}`, port.redirects, path, (r) => r.status === code, { method });
      expect(reply.headers.location).toBe(`http://example.com:${port.redirects}${path}`);
      expect(reply.echo).toBeUndefined();
    }
    expect((await routeConditions('redirect-status-codes')).every((c) => c.status === 'True')).toBe(true);
  });

  it('normalizes the Host header on a Gateway bind as the Ingress frontends do: port, capitals and trailing dots go before listener and route hostnames are matched', async () => {
    const cases: [string, string][] = [
      ['shop.example.com', 'v1'],
      ['SHOP.Example.COM.', 'v1'],
      [`shop.example.com.:${port.hosts}`, 'v1'],
      ['shop.example.com..', 'v1'],
      ['A.Wild.Example.com.', 'v3'],
      [`deep.a.wild.example.com:${port.hosts}`, 'v3'],
      ['API.example.COM.', 'v2'],
    ];
    for (const [host, backend] of cases) {
      const reply = await settled(host, async () => {
        const r = await send({ port: port.hosts, host, path: '/x', timeoutMs: 3000 });
        return fromBackend(backend, '/x')(r) ? r : undefined;
      });
      // The backend gets the Host header as the client sent it.
      expect(reply.echo?.headers.host, host).toBe(host);
    }
    expect((await send({ port: port.hosts, host: 'other.example.com.', path: '/' })).status).toBe(404);
    // A Host that is not one host name would move the path out from under the route's matches: 400.
    for (const host of ['shop.example.com/admin', 'shop.example.com,api.example.com', 'shop example.com']) {
      expect((await send({ port: port.hosts, host, path: '/x' })).status, host).toBe(400);
    }
  });

  it('normalizes the path on a Gateway bind as the Ingress frontends do: dot segments, doubled slashes and encoded unreserved characters reach the rule of the path they spell, encoded slashes and backslashes get 400', async () => {
    for (const path of ['/admin', '/x/../admin', '//admin', '/./admin', '/%61dmin']) {
      const reply = await settled(path, async () => {
        const r = await send({ port: port.hosts, host: 'shop.example.com', path, timeoutMs: 3000 });
        return fromBackend('v2', '/admin')(r) ? r : undefined;
      });
      expect(reply.status, path).toBe(200);
    }
    for (const path of ['/%2Fadmin', '/%5Cadmin', '/x%00']) {
      expect((await send({ port: port.hosts, host: 'shop.example.com', path })).status, path).toBe(400);
    }
  });

  it('HTTPRouteInvalidCrossNamespaceBackendRef and HTTPRouteInvalidBackendRefUnknownKind: the route is Accepted, ResolvedRefs False (RefNotPermitted, InvalidKind), and answers 500', async () => {
    for (const [route, listener, path, reason] of [
      ['invalid-cross-namespace-backend-ref', port.badRefs, '/', 'RefNotPermitted'],
      ['invalid-backend-ref-unknown-kind', port.badKind, '/v2', 'InvalidKind'],
    ] as const) {
      const conditions = await routeConditions(route);
      expect(conditions.find((c) => c.type === 'Accepted')?.status, route).toBe('True');
      expect(conditions.find((c) => c.type === 'ResolvedRefs'), route).toMatchObject({ status: 'False', reason });
      expect((await settlesOn(`${route} ${path}`, listener, path, (r) => r.status === 500)).echo, route).toBeUndefined();
    }
  });

  it('HTTPRouteInvalidCrossNamespaceParentRef and HTTPRouteInvalidParentRefNotMatchingSectionName: not Accepted (NotAllowedByListeners, NoMatchingParent), no route attached, nothing served', async () => {
    const xns = await routeConditions('invalid-cross-namespace-parent-ref', WEB);
    expect(xns.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Accepted', 'False', 'NotAllowedByListeners'],
      ['ResolvedRefs', 'True', 'ResolvedRefs'],
    ]);
    expect((await routeConditions('httproute-listener-not-matching-section-name')).find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'NoMatchingParent' });
    for (const [gw, listener] of [
      ['same-namespace-xns-parent', port.xnsParent],
      ['same-namespace-section', port.badSection],
    ] as const) {
      await listenersAre(gw, [{ name: 'http', supportedKinds: [HTTP_ROUTE_KIND], attachedRoutes: 0, conditions: [{ type: 'Programmed', status: 'True', reason: 'Programmed' }] }]);
      expect((await settlesOn(`${gw}: no route`, listener, '/', (r) => r.status === 404)).echo).toBeUndefined();
    }
  });

  it('GatewayWithAttachedRoutes: each listener counts the routes attached to it, not the one whose hostname it lacks, even when its certificate is missing', async () => {
    const resolved = [
      { type: 'Accepted', status: 'True', reason: 'Accepted' },
      { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' },
    ];
    await listenersAre('gateway-with-one-attached-route', [{ name: 'http', supportedKinds: [HTTP_ROUTE_KIND], attachedRoutes: 1, conditions: resolved }]);
    await listenersAre('gateway-with-two-attached-routes', [{ name: 'http', supportedKinds: [HTTP_ROUTE_KIND], attachedRoutes: 2, conditions: resolved }]);
    expect((await routeConditions('http-route-not-accepted')).find((c) => c.type === 'Accepted')).toMatchObject({ status: 'False', reason: 'NoMatchingListenerHostname' });
    await settlesOn('the one attached route', port.oneRoute, '/', fromBackend('v1', '/'));
    const reply = await settled('foo.example.com through the two routes', async () => {
      const r = await send({ port: port.twoRoutes, host: 'foo.example.com', path: '/a', timeoutMs: 3000 });
      return fromBackend('v1', '/a')(r) ? r : undefined;
    });
    expect(reply.echo?.headers.host).toBe('foo.example.com');
    expect((await send({ port: port.twoRoutes, host: 'not-accepted.test.com', path: '/' })).status).toBe(404);
    // A listener left unbound for its missing certificate still counts the route attached to it, and serves nothing.
    await listenersAre('unresolved-gateway-with-one-attached-unresolved-route', [
      { name: 'tls', supportedKinds: [HTTP_ROUTE_KIND], attachedRoutes: 1, conditions: [{ type: 'Programmed', status: 'False', reason: 'Invalid' }, { type: 'ResolvedRefs', status: 'False', reason: 'InvalidCertificateRef' }] },
    ]);
    expect((await routeConditions('http-route-4')).find((c) => c.type === 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'BackendNotFound' });
    await refused('the listener without its certificate is not bound', port.unresolved);
  });

  it('GatewaySecretMissingReferenceGrant: a listener whose certificateRef is in another namespace without any grant is ResolvedRefs False (RefNotPermitted) and not bound', async () => {
    await listenersAre('gateway-secret-missing-reference-grant', [
      { name: 'https', supportedKinds: [HTTP_ROUTE_KIND], attachedRoutes: 0, conditions: [{ type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' }, { type: 'Programmed', status: 'False', reason: 'Invalid' }] },
    ]);
    await refused('the HTTPS listener without its certificate is not bound', port.missingGrant);
  });
});

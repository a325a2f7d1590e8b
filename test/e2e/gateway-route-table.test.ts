// HTTPRoutes through the one route table on a real HAProxy: the plain routes of a Gateway bind
// (a hostname and a path, one backend) are map entries, keyed by listener on a bind with several,
// wildcard hostnames too (`*.d` as `d*`, looked up with the Host's last labels), and the rest stay
// ordered rules (header matches); a request takes the route the spec's precedence gives it either
// way: an exact hostname's map before the wildcard rules, a wildcard's rules before the host-less
// map, and the more specific wildcard first.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { expectBackend, gatewayScenario, INFRA, startInfraBackends } from '../helpers/e2e-gateway.js';
import { gateway, httpRoute, ref } from '../helpers/gateway-objects.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/gateway-route-table.test.ts');

let root: string;
const echoes = new EchoFleet();
let backends: EchoServer[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-gateway-table-'));
  if (!SKIP_HAPROXY) backends = await startInfraBackends(echoes);
});
afterAll(async () => {
  await echoes.stopAll();
  await rm(root, { recursive: true, force: true });
});

const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });
const exact = (value: string) => ({ path: { type: 'Exact', value } });
const parents = { parentRefs: [{ name: 'route-table' }] };

describe.skipIf(SKIP_HAPROXY)('HTTPRoutes through the route table on a real HAProxy', () => {
  it('serves plain routes from the listener-keyed maps and keeps the precedence of exact hostnames, wildcards and routes for any host', async () => {
    await scenario();
  });

  it('keeps every route for any host a rule when one of them has a header match, after the host map of a bind with one listener', async () => {
    const parent = { parentRefs: [{ name: 'same-namespace' }] };
    await gatewayScenario(
      root,
      backends,
      () => [
        httpRoute(INFRA, 'any-host', { ...parent, rules: [{ matches: [{ ...prefix('/a'), headers: [{ name: 'x-pick', value: 'three' }] }], backendRefs: [ref('v3')] }, { matches: [prefix('/a')], backendRefs: [ref('v1')] }] }),
        httpRoute(INFRA, 'one-host', { ...parent, hostnames: ['h.example'], rules: [{ matches: [prefix('/a')], backendRefs: [ref('v2')] }] }),
      ],
      async (client, _port, rendered) => {
        expect(await readFile(join(rendered.paths.mapsDir, 'gateway-0-host-prefix.map'), 'utf8')).toBe('h.example/a/ gw_infra_one-host_0_0\n');
        expect(await readFile(join(rendered.paths.mapsDir, 'gateway-0-path-prefix.map'), 'utf8')).toBe('');
        expectBackend(await client({ host: 'h.example', path: '/a/b', headers: { 'x-pick': 'three' } }), 'v2', '/a/b');
        expectBackend(await client({ host: 'other.example', path: '/a/b', headers: { 'x-pick': 'three' } }), 'v3', '/a/b');
        expectBackend(await client({ host: 'other.example', path: '/a' }), 'v1', '/a');
        expect((await client({ host: 'h.example', path: '/b' })).status).toBe(404);
      },
    );
  });

  it('maps the plain routes of wildcard hostnames, looked up most labels first, unless a wider wildcard has a rule', async () => {
    const parent = { parentRefs: [{ name: 'same-namespace' }] };
    const wildcards = [
      httpRoute(INFRA, 'wide', { ...parent, hostnames: ['*.example.com'], rules: [{ matches: [prefix('/')], backendRefs: [ref('v1')] }] }),
      httpRoute(INFRA, 'middle', { ...parent, hostnames: ['*.b.example.com'], rules: [{ matches: [prefix('/x')], backendRefs: [ref('v2')] }] }),
      httpRoute(INFRA, 'deep', { ...parent, hostnames: ['*.a.b.example.com'], rules: [{ matches: [exact('/x')], backendRefs: [ref('v3')] }] }),
    ];
    const expectPrecedence = async (client: Parameters<Parameters<typeof gatewayScenario>[3]>[0]) => {
      expectBackend(await client({ host: 'q.a.b.example.com', path: '/x' }), 'v3', '/x');
      expectBackend(await client({ host: 'q.a.b.example.com', path: '/x/y' }), 'v2', '/x/y');
      expectBackend(await client({ host: 'q.b.example.com', path: '/x' }), 'v2', '/x');
      expectBackend(await client({ host: 'Q.B.Example.com.', path: '/y' }), 'v1', '/y');
      expectBackend(await client({ host: 'b.example.com', path: '/x' }), 'v1', '/x');
      expect((await client({ host: 'example.com', path: '/x' })).status).toBe(404);
      expect((await client({ host: 'a.b.example.org', path: '/x' })).status).toBe(404);
    };
    await gatewayScenario(root, backends, () => wildcards, async (client, _port, rendered) => {
      expect(await readFile(join(rendered.paths.mapsDir, 'gateway-0-host-prefix.map'), 'utf8')).toBe('b.example.com*/x/ gw_infra_middle_0_0\nexample.com*/ gw_infra_wide_0_0\n');
      expect(await readFile(join(rendered.paths.mapsDir, 'gateway-0-host-exact.map'), 'utf8')).toBe('a.b.example.com*/x gw_infra_deep_0_0\nb.example.com*/x gw_infra_middle_0_0\n');
      expect(rendered.result.haproxyConfig.match(/set-var\(txn\.gww\d\)/g)).toEqual(['set-var(txn.gww4)', 'set-var(txn.gww3)', 'set-var(txn.gww2)']);
      await expectPrecedence(client);
    });
    // A header rule on the widest wildcard keeps every wildcard a rule: the same answers, and the header rule where it ranks.
    const headerRule = httpRoute(INFRA, 'wide-header', { ...parent, hostnames: ['*.example.com'], rules: [{ matches: [{ ...prefix('/x'), headers: [{ name: 'x-pick', value: 'one' }] }], backendRefs: [ref('v3')] }] });
    await gatewayScenario(root, backends, () => [...wildcards, headerRule], async (client, _port, rendered) => {
      expect(await readFile(join(rendered.paths.mapsDir, 'gateway-0-host-prefix.map'), 'utf8')).toBe('');
      expect(rendered.result.haproxyConfig).not.toContain('txn.gww');
      await expectPrecedence(client);
      expectBackend(await client({ host: 'q.b.example.com', path: '/x', headers: { 'x-pick': 'one' } }), 'v2', '/x');
      expectBackend(await client({ host: 'q.example.com', path: '/x', headers: { 'x-pick': 'one' } }), 'v3', '/x');
    });
  });
});

async function scenario(): Promise<void> {
  await gatewayScenario(
    root,
    backends,
    (port) => [
      // Listeners a.example (0), *.example (1) and one for any host (2) on one bind.
      gateway(INFRA, 'route-table', [
        { name: 'a', port, hostname: 'a.example' },
        { name: 'wild', port, hostname: '*.example' },
        { name: 'any', port },
      ]),
      httpRoute(INFRA, 'hosts', { ...parents, hostnames: ['a.example', 'b.example'], rules: [{ matches: [prefix('/p')], backendRefs: [ref('v1')] }, { matches: [exact('/e')], backendRefs: [ref('v2')] }] }),
      httpRoute(INFRA, 'narrow-wildcard', { ...parents, hostnames: ['*.w.example'], rules: [{ matches: [{ ...prefix('/'), headers: [{ name: 'x-pick', value: 'wild' }] }], backendRefs: [ref('v3')] }] }),
      httpRoute(INFRA, 'any-host', { ...parents, rules: [{ matches: [prefix('/q')], backendRefs: [ref('v2')] }] }),
    ],
    async (client, _port, rendered) => {
      const at = (host: string, path: string, headers: Record<string, string> = {}) => client({ host, path, headers });
      // The exact hostnames' plain routes are map entries of their listener; the wildcard and header match are rules.
      const hostPrefix = await readFile(join(rendered.paths.mapsDir, 'gateway-0-host-prefix.map'), 'utf8');
      expect(hostPrefix).toContain('0@a.example/p/ gw_infra_hosts_0_0');
      expect(hostPrefix).toContain('1@b.example/p/ gw_infra_hosts_0_0');
      expect(await readFile(join(rendered.paths.mapsDir, 'gateway-0-host-exact.map'), 'utf8')).toContain('0@a.example/e gw_infra_hosts_1_0');
      expect(await readFile(join(rendered.paths.mapsDir, 'gateway-0-path-prefix.map'), 'utf8')).toBe('2@/q/ gw_infra_any-host_0_0\n');
      expect(rendered.result.haproxyConfig).toContain('use_backend gw_infra_narrow-wildcard_0_0 if { var(txn.gwl) -m int eq 1 } { var(txn.host) -m end .w.example } { req.hdr(x-pick) -m str wild }');
      // The plain routes of *.example (the host-less route's on that listener) are map entries `example*`, looked up with the Host's last label.
      expect(hostPrefix).toContain('1@example*/q/ gw_infra_any-host_0_0');
      expect(rendered.result.haproxyConfig).not.toContain('use_backend gw_infra_any-host_0_0 if');
      expect(rendered.result.haproxyConfig).toContain('http-request set-var(txn.gww1) var(txn.host),field(-1,.,1),concat(*,txn.path,) if { var(txn.host),field(-2,.) -m found }');

      expectBackend(await at('a.example', '/p'), 'v1', '/p');
      expectBackend(await at('a.example', '/p/x?y=1'), 'v1', '/p/x?y=1');
      expect((await at('a.example', '/px')).status).toBe(404);
      expectBackend(await at('a.example', '/e'), 'v2', '/e');
      expect((await at('a.example', '/e/x')).status).toBe(404);
      // a.example's routes include the host-less route's, with its hostname.
      expectBackend(await at('a.example', '/q'), 'v2', '/q');
      // b.example (listener *.example): its map entries, then the wildcard rules.
      expectBackend(await at('b.example', '/p/1'), 'v1', '/p/1');
      expectBackend(await at('b.example', '/q'), 'v2', '/q');
      expect((await at('b.example', '/e/1')).status).toBe(404);
      // The more specific wildcard first: with the header, *.w.example's rule wins over *.example's /q.
      expectBackend(await at('x.w.example', '/q', { 'x-pick': 'wild' }), 'v3', '/q');
      expectBackend(await at('x.w.example', '/q'), 'v2', '/q');
      expect((await at('x.w.example', '/z')).status).toBe(404);
      // Any other host picks the catch-all listener: the host-less map, keyed by that listener.
      expectBackend(await at('other.net', '/q/r'), 'v2', '/q/r');
      expect((await at('other.net', '/p')).status).toBe(404);
      // A host that names a listener's key prefix reaches nothing it could not reach by name.
      expect((await at('0@a.example', '/p')).status).not.toBe(200);
    },
  );
}

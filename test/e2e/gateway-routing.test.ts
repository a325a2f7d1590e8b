// Gateway API scenarios after the upstream conformance suite (GATEWAY-HTTP core), reproduced on
// a real HAProxy: a GatewayClass of ours, Gateways and HTTPRoutes rendered with the default
// template set, real requests to echo backends on loopback (v1, v2, v3 as the suite's
// infra-backend-v1..3), asserting the status, the backend, the path it got and its headers.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { expectBackend, gatewayScenario, INFRA, startInfraBackends, type GatewayClient } from '../helpers/e2e-gateway.js';
import { httpRoute, ref } from '../helpers/gateway-objects.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/gateway-routing.test.ts');

let root: string;
const echoes = new EchoFleet();
let backends: EchoServer[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-gateway-'));
  if (!SKIP_HAPROXY) backends = await startInfraBackends(echoes);
});
afterAll(async () => {
  await echoes.stopAll();
  await rm(root, { recursive: true, force: true });
});

const scenario = (objects: (port: number) => KubeObject[], body: (client: GatewayClient) => Promise<void>): Promise<void> => gatewayScenario(root, backends, objects, body);
const NS = INFRA;

const rule = (matches: unknown[], backend: string, extra: Record<string, unknown> = {}) => ({ matches, backendRefs: [ref(backend)], ...extra });
const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });
const exact = (value: string) => ({ path: { type: 'Exact', value } });
const headers = (...pairs: [string, string][]) => ({ headers: pairs.map(([name, value]) => ({ name, value })) });
const parent = { parentRefs: [{ name: 'same-namespace' }] };

describe.skipIf(SKIP_HAPROXY)('Gateway API on a real HAProxy (conformance scenarios)', () => {
  it('SimpleSameNamespace: a route in the Gateway namespace without hostnames reaches its backend on any host', async () => {
    await scenario(
      () => [httpRoute(NS, 'gateway-conformance-infra-test', { ...parent, rules: [{ backendRefs: [ref('v1')] }] })],
      async (client) => {
        expectBackend(await client({ path: '/' }), 'v1', '/');
        expectBackend(await client({ host: 'any.example.net', path: '/a/b?c=d' }), 'v1', '/a/b?c=d');
      },
    );
  });

  it('ExactPathMatching: an Exact path matches that path only', async () => {
    await scenario(
      () => [httpRoute(NS, 'exact-path-matching', { ...parent, rules: [rule([exact('/one')], 'v1'), rule([exact('/two')], 'v2')] })],
      async (client) => {
        expectBackend(await client({ path: '/one' }), 'v1', '/one');
        expectBackend(await client({ path: '/two' }), 'v2', '/two');
        expect((await client({ path: '/one/example' })).status).toBe(404);
        expect((await client({ path: '/two/' })).status).toBe(404);
        expect((await client({ path: '/Two' })).status).toBe(404);
        expect((await client({ path: '/' })).status).toBe(404);
      },
    );
  });

  it('PathMatchOrder: Exact paths beat prefixes and the longest prefix wins, by whole segments', async () => {
    await scenario(
      () => [
        httpRoute(NS, 'path-matching-order', {
          ...parent,
          rules: [
            rule([exact('/match')], 'v1'),
            rule([exact('/match/exact')], 'v2'),
            rule([exact('/match/exact/one')], 'v3'),
            rule([prefix('/match/')], 'v3'),
            rule([prefix('/match/prefix/')], 'v1'),
            rule([prefix('/match/prefix/one')], 'v2'),
          ],
        }),
      ],
      async (client) => {
        expectBackend(await client({ path: '/match/exact/one' }), 'v3');
        expectBackend(await client({ path: '/match/exact' }), 'v2');
        expectBackend(await client({ path: '/match' }), 'v1');
        expectBackend(await client({ path: '/match/prefix/one/any' }), 'v2');
        expectBackend(await client({ path: '/match/prefix/any' }), 'v1');
        expectBackend(await client({ path: '/match/any' }), 'v3');
        expectBackend(await client({ path: '/match/prefix/oneother' }), 'v1');
        expect((await client({ path: '/matchother' })).status).toBe(404);
      },
    );
  });

  it('HeaderMatching: header names match case-insensitively, and more headers win', async () => {
    await scenario(
      () => [
        httpRoute(NS, 'header-matching', {
          ...parent,
          rules: [
            rule([headers(['version', 'one'])], 'v1'),
            rule([headers(['version', 'two'])], 'v2'),
            rule([headers(['version', 'two'], ['color', 'orange'])], 'v1'),
            rule([headers(['color', 'blue']), headers(['color', 'green'])], 'v1'),
            rule([headers(['color', 'red']), headers(['color', 'yellow'])], 'v2'),
          ],
        }),
      ],
      async (client) => {
        expectBackend(await client({ headers: { Version: 'one' } }), 'v1');
        expectBackend(await client({ headers: { Version: 'two' } }), 'v2');
        expectBackend(await client({ headers: { Version: 'two', Color: 'orange' } }), 'v1');
        // One header each: the earlier rule wins the tie.
        expectBackend(await client({ headers: { Version: 'two', Color: 'blue' } }), 'v2');
        expectBackend(await client({ headers: { Color: 'green' } }), 'v1');
        expectBackend(await client({ headers: { Color: 'red' } }), 'v2');
        expectBackend(await client({ headers: { cOLOR: 'yellow' } }), 'v2');
        expect((await client({})).status).toBe(404);
        expect((await client({ headers: { Version: 'four' } })).status).toBe(404);
        expect((await client({ headers: { Color: 'Red' } })).status).toBe(404);
      },
    );
  });

  it('QueryParamMatching: names and values match exactly, and more parameters win', async () => {
    const query = (...pairs: [string, string][]) => ({ queryParams: pairs.map(([name, value]) => ({ name, value })) });
    await scenario(
      () => [
        httpRoute(NS, 'query-param-matching', {
          ...parent,
          rules: [
            rule([query(['animal', 'whale'])], 'v1'),
            rule([query(['animal', 'dolphin'])], 'v2'),
            rule([query(['animal', 'dolphin'], ['color', 'blue']), query(['ANIMAL', 'Whale'])], 'v3'),
            rule([{ ...prefix('/path1'), ...query(['animal', 'whale']) }], 'v1'),
            rule([{ ...prefix('/path5') }], 'v1'),
            rule([query(['animal', 'hydra'])], 'v2'),
          ],
        }),
      ],
      async (client) => {
        expectBackend(await client({ path: '/?animal=whale' }), 'v1', '/?animal=whale');
        expectBackend(await client({ path: '/?animal=dolphin' }), 'v2');
        expectBackend(await client({ path: '/?animal=dolphin&color=blue' }), 'v3');
        expectBackend(await client({ path: '/?ANIMAL=Whale' }), 'v3');
        expectBackend(await client({ path: '/path1?animal=whale' }), 'v1');
        expectBackend(await client({ path: '/path5?animal=hydra' }), 'v1');
        expect((await client({ path: '/?animal=Whale' })).status).toBe(404);
        expect((await client({ path: '/?Animal=whale' })).status).toBe(404);
      },
    );
  });

  it('MethodMatching: methods match exactly, and a longer prefix beats a method', async () => {
    await scenario(
      () => [
        httpRoute(NS, 'method-matching', {
          ...parent,
          rules: [
            rule([{ method: 'POST' }], 'v1'),
            rule([{ method: 'GET' }], 'v2'),
            rule([{ ...prefix('/path1'), method: 'GET' }], 'v1'),
            rule([{ ...headers(['version', 'one']), method: 'PUT' }], 'v2'),
            rule([prefix('/path5')], 'v1'),
            rule([{ method: 'PATCH' }], 'v2'),
          ],
        }),
      ],
      async (client) => {
        expectBackend(await client({ method: 'POST' }), 'v1');
        expectBackend(await client({ method: 'GET' }), 'v2');
        expect((await client({ method: 'HEAD' })).status).toBe(404);
        expectBackend(await client({ method: 'GET', path: '/path1' }), 'v1');
        expectBackend(await client({ method: 'PUT', headers: { version: 'one' } }), 'v2');
        expect((await client({ method: 'PUT' })).status).toBe(404);
        expectBackend(await client({ method: 'PATCH', path: '/path5' }), 'v1');
        expectBackend(await client({ method: 'PATCH', path: '/' }), 'v2');
      },
    );
  });

  it('MatchingAcrossRoutes: matches of several routes on one Gateway are ranked together', async () => {
    await scenario(
      () => [
        httpRoute(NS, 'matching-part1', { ...parent, hostnames: ['example.com', 'example.net'], rules: [rule([prefix('/'), headers(['version', 'one'])], 'v1')] }),
        httpRoute(NS, 'matching-part2', { ...parent, hostnames: ['example.com'], rules: [rule([prefix('/v2'), headers(['version', 'two'])], 'v2')] }),
      ],
      async (client) => {
        expectBackend(await client({ path: '/' }), 'v1');
        expectBackend(await client({ path: '/example' }), 'v1');
        expectBackend(await client({ host: 'example.net', path: '/example' }), 'v1');
        expectBackend(await client({ path: '/example', headers: { Version: 'one' } }), 'v1');
        expectBackend(await client({ path: '/v2' }), 'v2');
        expectBackend(await client({ host: 'example.net', path: '/v2' }), 'v1');
        expectBackend(await client({ path: '/v2/example' }), 'v2');
        expectBackend(await client({ path: '/', headers: { Version: 'two' } }), 'v2');
        expect((await client({ host: 'example.org', path: '/' })).status).toBe(404);
      },
    );
  });

  it('Weight: 500 requests split 70/30 with a weight-0 backend getting none, each share within 5 %', async () => {
    await scenario(
      () => [httpRoute(NS, 'weighted-backends', { ...parent, rules: [{ backendRefs: [ref('v1', { weight: 70 }), ref('v2', { weight: 30 }), ref('v3', { weight: 0 })] }] })],
      async (client) => {
        const counts = new Map<string, number>();
        for (let i = 0; i < 500; i++) {
          const reply = await client({ path: `/${i}` });
          expect(reply.status).toBe(200);
          counts.set(reply.echo?.name ?? '?', (counts.get(reply.echo?.name ?? '?') ?? 0) + 1);
        }
        expect(Math.abs((counts.get('v1') ?? 0) / 500 - 0.7)).toBeLessThanOrEqual(0.05);
        expect(Math.abs((counts.get('v2') ?? 0) / 500 - 0.3)).toBeLessThanOrEqual(0.05);
        expect(counts.get('v3') ?? 0).toBe(0);
      },
    );
  });
});

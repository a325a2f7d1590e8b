// Gateway API filters and timeouts after the upstream conformance suite, on a real HAProxy:
// RequestHeaderModifier, ResponseHeaderModifier (set, add, remove; names case-insensitive),
// RequestRedirect (hostname, status), URLRewrite (path, host; the query string kept) and
// rules[].timeouts.request, asserting what the echo backends got and what the client got back.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, service } from '../helpers/cluster.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { expectBackend, gatewayScenario, INFRA, startInfraBackends, type GatewayClient } from '../helpers/e2e-gateway.js';
import { httpRoute, ref } from '../helpers/gateway-objects.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/gateway-filters.test.ts');

let root: string;
const echoes = new EchoFleet();
let backends: EchoServer[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-gateway-filters-'));
  if (!SKIP_HAPROXY) backends = await startInfraBackends(echoes);
});
afterAll(async () => {
  await echoes.stopAll();
  await rm(root, { recursive: true, force: true });
});

const scenario = (objects: (port: number) => KubeObject[], body: (client: GatewayClient, port: number) => Promise<void>): Promise<void> => gatewayScenario(root, backends, objects, body);
const parent = { parentRefs: [{ name: 'same-namespace' }] };
const onPath = (path: string, filters: unknown[], backend = 'v1') => ({ matches: [{ path: { type: 'PathPrefix', value: path } }], filters, backendRefs: [ref(backend)] });

describe.skipIf(SKIP_HAPROXY)('Gateway API filters on a real HAProxy (conformance scenarios)', () => {
  it('RequestHeaderModifier: sets, adds and removes request headers, whatever the case of their names', async () => {
    const modify = (modifier: Record<string, unknown>) => [{ type: 'RequestHeaderModifier', requestHeaderModifier: modifier }];
    await scenario(
      () => [
        httpRoute(INFRA, 'request-header-modifier', {
          ...parent,
          rules: [
            onPath('/set', modify({ set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }] })),
            onPath('/add', modify({ add: [{ name: 'X-Header-Add', value: 'add-appends-values' }] })),
            onPath('/remove', modify({ remove: ['X-Header-Remove'] })),
            onPath('/multiple', modify({ set: [{ name: 'X-Header-Set-1', value: 'header set 1' }], add: [{ name: 'X-Header-Add-1', value: 'header-add-1' }], remove: ['x-header-remove-1'] })),
          ],
        }),
      ],
      async (client) => {
        const set = await client({ path: '/set', headers: { 'Some-Other-Header': 'val', 'x-header-set': 'some-other-value' } });
        expectBackend(set, 'v1', '/set');
        expect(set.echo?.headers['x-header-set']).toBe('set-overwrites-values');
        expect(set.echo?.headers['some-other-header']).toBe('val');
        const add = await client({ path: '/add', headers: { 'X-HEADER-ADD': 'some-value' } });
        expect(add.echo?.headers['x-header-add']).toBe('some-value, add-appends-values');
        const fresh = await client({ path: '/add' });
        expect(fresh.echo?.headers['x-header-add']).toBe('add-appends-values');
        const remove = await client({ path: '/remove', headers: { 'x-header-REMOVE': 'val', 'x-keep': 'kept' } });
        expect(remove.echo?.headers['x-header-remove']).toBeUndefined();
        expect(remove.echo?.headers['x-keep']).toBe('kept');
        const multiple = await client({ path: '/multiple', headers: { 'X-Header-Remove-1': 'gone', 'X-Header-Set-1': 'old' } });
        expect(multiple.echo?.headers).toMatchObject({ 'x-header-set-1': 'header set 1', 'x-header-add-1': 'header-add-1' });
        expect(multiple.echo?.headers['x-header-remove-1']).toBeUndefined();
      },
    );
  });

  it('ResponseHeaderModifier: sets, adds and removes response headers', async () => {
    const modify = (modifier: Record<string, unknown>) => [{ type: 'ResponseHeaderModifier', responseHeaderModifier: modifier }];
    await scenario(
      () => [
        httpRoute(INFRA, 'response-header-modifier', {
          ...parent,
          rules: [
            onPath('/set', modify({ set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }, { name: 'Content-Type', value: 'text/overwritten' }] })),
            onPath('/add', modify({ add: [{ name: 'X-Header-Add', value: 'add-appends-values' }, { name: 'x-echo-name', value: 'appended' }] })),
            onPath('/remove', modify({ remove: ['CONTENT-TYPE'] })),
          ],
        }),
      ],
      async (client) => {
        const set = await client({ path: '/set' });
        expectBackend(set, 'v1', '/set');
        expect(set.headers['x-header-set']).toBe('set-overwrites-values');
        expect(set.headers['content-type']).toBe('text/overwritten');
        const add = await client({ path: '/add' });
        expect(add.headers['x-header-add']).toBe('add-appends-values');
        expect(add.headers['x-echo-name']).toBe('v1, appended');
        const remove = await client({ path: '/remove' });
        expectBackend(remove, 'v1');
        expect(remove.headers['content-type']).toBeUndefined();
      },
    );
  });

  it('RedirectHostAndStatus: redirects to another host with 302 by default and with 301 when asked, keeping the path', async () => {
    const redirect = (spec: Record<string, unknown>) => [{ type: 'RequestRedirect', requestRedirect: spec }];
    await scenario(
      () => [
        httpRoute(INFRA, 'redirect-host-and-status', {
          ...parent,
          rules: [
            { matches: [{ path: { type: 'PathPrefix', value: '/hostname-redirect' } }], filters: redirect({ hostname: 'example.org' }) },
            { matches: [{ path: { type: 'PathPrefix', value: '/host-and-status' } }], filters: redirect({ hostname: 'example.org', statusCode: 301 }) },
            { matches: [{ path: { type: 'PathPrefix', value: '/scheme-and-port' } }], filters: redirect({ scheme: 'https', port: 8443 }) },
            { matches: [{ path: { type: 'PathPrefix', value: '/full' } }], filters: redirect({ path: { type: 'ReplaceFullPath', replaceFullPath: '/new' } }) },
            { matches: [{ path: { type: 'PathPrefix', value: '/prefix/one' } }], filters: redirect({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/two' } }) },
          ],
        }),
      ],
      async (client, port) => {
        const found = await client({ path: '/hostname-redirect' });
        expect(found.status).toBe(302);
        expect(found.headers.location).toBe(`http://example.org:${port}/hostname-redirect`);
        const moved = await client({ path: '/host-and-status/x?q=1' });
        expect(moved.status).toBe(301);
        expect(moved.headers.location).toBe(`http://example.org:${port}/host-and-status/x?q=1`);
        const scheme = await client({ path: '/scheme-and-port' });
        expect(scheme.headers.location).toBe('https://example.com:8443/scheme-and-port');
        expect((await client({ path: '/full/deep' })).headers.location).toBe(`http://example.com:${port}/new`);
        expect((await client({ path: '/prefix/one/three' })).headers.location).toBe(`http://example.com:${port}/two/three`);
        expect((await client({ path: '/prefix/one' })).headers.location).toBe(`http://example.com:${port}/two`);
      },
    );
  });

  it('RewritePath and RewriteHost: replace the matched prefix or the whole path, and the host, keeping the query string', async () => {
    const rewrite = (spec: Record<string, unknown>) => [{ type: 'URLRewrite', urlRewrite: spec }];
    await scenario(
      () => [
        httpRoute(INFRA, 'rewrite-path', {
          ...parent,
          rules: [
            onPath('/prefix/one', rewrite({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/one' } })),
            onPath('/strip-prefix', rewrite({ path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } })),
            onPath('/full/one', rewrite({ path: { type: 'ReplaceFullPath', replaceFullPath: '/one' } })),
            onPath('/host', rewrite({ hostname: 'one.example.org' })),
          ],
        }),
      ],
      async (client) => {
        expectBackend(await client({ path: '/prefix/one/two' }), 'v1', '/one/two');
        expectBackend(await client({ path: '/prefix/one?a=b' }), 'v1', '/one?a=b');
        expectBackend(await client({ path: '/strip-prefix/three' }), 'v1', '/three');
        expectBackend(await client({ path: '/strip-prefix' }), 'v1', '/');
        expectBackend(await client({ path: '/full/one/two?x=y' }), 'v1', '/one?x=y');
        const host = await client({ path: '/host/path' });
        expectBackend(host, 'v1', '/host/path');
        expect(host.echo?.headers.host).toBe('one.example.org');
      },
    );
  });

  it('TimeoutRequest: a backend slower than rules[].timeouts.request answers 504, a faster one 200', async () => {
    const slow = await echoes.start('slow', '127.0.0.5', { delayMs: 1500 });
    await scenario(
      () => [
        service(INFRA, 'slow'),
        endpointSlice(INFRA, 'slow', [slow.host], { name: 'http', port: slow.port }),
        httpRoute(INFRA, 'request-timeout', {
          ...parent,
          rules: [
            { matches: [{ path: { type: 'PathPrefix', value: '/slow' } }], backendRefs: [ref('slow')], timeouts: { request: '500ms' } },
            { matches: [{ path: { type: 'PathPrefix', value: '/patient' } }], backendRefs: [ref('slow')], timeouts: { request: '10s' } },
          ],
        }),
      ],
      async (client) => {
        expect((await client({ path: '/slow' })).status).toBe(504);
        expectBackend(await client({ path: '/patient' }), 'slow', '/patient');
      },
    );
  });
});

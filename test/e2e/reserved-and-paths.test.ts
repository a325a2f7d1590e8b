// What a tenant cannot spell its way around, against a real HAProxy on loopback with echo
// backends: the loop guard's x-haptic-* header (a request sent back through the ingress is stopped
// at its second pass, and never reaches another namespace's allow-listed host), and the path (a
// percent-encoded, dotted or doubled-slash spelling of /admin is routed, and refused, as /admin).
// Requests are sent with their raw paths. With CI=true these tests always run; elsewhere they
// are skipped when HAProxy cannot be run.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service } from '../helpers/cluster.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet } from '../helpers/e2e-echo.js';
import { renderToDir, withHaproxy } from '../helpers/e2e-render.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/reserved-and-paths.test.ts');

let root: string;
let counter = 0;
const echoes = new EchoFleet();
const out = (): string => join(root, `out-${++counter}`);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-reserved-paths-'));
});
afterEach(async () => {
  await echoes.stopAll();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function backend(namespace: string, name: string, host: string, port: number): KubeObject[] {
  return [service(namespace, name), endpointSlice(namespace, name, [host], { name: 'http', port })];
}

interface Bouncer {
  readonly host: string;
  readonly port: number;
  /** Where requests are sent back to (the ingress's http port on 127.0.0.1). */
  target: number;
  /** Requests it received, that is, hops back into the ingress. */
  readonly hops: number;
  close(): Promise<void>;
}

/**
 * A backend that sends every request it gets back to the ingress, headers and all, from
 * 127.0.0.4 (an address another namespace allows), as a load balancer in front of the ingress
 * would; it stops after 10 hops, so a loop that nothing stops still ends.
 */
async function startBouncer(): Promise<Bouncer> {
  let hops = 0;
  const server = createServer((req, res) => {
    hops++;
    if (hops > 10) {
      res.writeHead(599).end('too many hops');
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers };
    const back = request({ host: '127.0.0.1', port: bouncer.target, localAddress: '127.0.0.4', method: req.method, path: req.url, headers, agent: false }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    back.on('error', () => res.writeHead(502).end());
    req.pipe(back);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.3', resolve));
  const bouncer: Bouncer = {
    host: '127.0.0.3',
    port: (server.address() as AddressInfo).port,
    target: 1,
    get hops() {
      return hops;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return bouncer;
}

describe.skipIf(SKIP_HAPROXY)('reserved headers and the loop guard on a real HAProxy', () => {
  it("stops at its second pass a request a tenant sends back through the ingress to another namespace's allow-listed host, and rejects a tenant that sets X-Haptic-Loop", async () => {
    const bank = await echoes.start('bank', '127.0.0.5');
    const bouncer = await startBouncer();
    try {
      const loop = (namespace: string, extra: Record<string, string>): KubeObject[] => [
        ingress(namespace, 'front', { rules: [rule(`${namespace}.example.test`, { service: 'bounce' })] }, { annotations: { 'haproxy.org/set-host': 'bank.example.test', ...extra } }),
        ...backend(namespace, 'bounce', bouncer.host, bouncer.port),
      ];
      const rendered = await renderToDir(out(), [
        // The bank lets in only 127.0.0.4, the address the loop comes back from.
        ingress('bank', 'front', { rules: [rule('bank.example.test', { service: 'bank' })] }, { annotations: { 'haproxy.org/allow-list': '127.0.0.4' } }),
        ...backend('bank', 'bank', bank.host, bank.port),
        ...loop('plain', {}),
        ...loop('mallory', { 'haproxy.org/request-set-header': 'X-Haptic-Loop reset' }),
        ...loop('shouty', { 'haproxy.org/request-set-header': 'x-HAPTIC-loop reset' }),
      ]);
      expect(rendered.result.rejections.map((r) => r.namespace).sort()).toEqual(['mallory', 'shouty']);
      for (const r of rendered.result.rejections) {
        expect(r.reason).toContain('request-set-header line');
        expect(r.reason).toContain('is reserved (x-haptic-* headers belong to the ingress, e.g. its loop guard) and may not be set');
      }
      bouncer.target = rendered.ports.http;
      await withHaproxy(rendered, async () => {
        // The bank refuses the client itself, and serves its allowed address.
        expect((await send({ port: rendered.ports.http, host: 'bank.example.test' })).status).toBe(403);
        expect((await send({ port: rendered.ports.http, host: 'bank.example.test', localAddress: '127.0.0.4' })).echo?.name).toBe('bank');
        const looped = await send({ port: rendered.ports.http, host: 'plain.example.test', path: '/transfer' });
        expect([looped.status, looped.body]).toEqual([508, 'loop detected']);
        expect(bouncer.hops).toBe(1);
        // The rejected tenant keeps its host, which answers 503 and sends nothing on.
        expect((await send({ port: rendered.ports.http, host: 'mallory.example.test', path: '/transfer' })).status).toBe(503);
        expect(bouncer.hops).toBe(1);
      });
    } finally {
      await bouncer.close();
    }
  });
});

describe.skipIf(SKIP_HAPROXY)('URI normalization on a real HAProxy', () => {
  it('routes every spelling of /admin as /admin, refuses encoded slashes and backslashes, so none gets past its allow-list, and passes the normalized path on', async () => {
    const admin = await echoes.start('admin', '127.0.0.2');
    const site = await echoes.start('site', '127.0.0.3');
    const rendered = await renderToDir(out(), [
      ingress('shop', 'admin', { rules: [rule('shop.example.test', { path: '/admin', service: 'admin' })] }, { annotations: { 'haproxy.org/allow-list': '127.0.0.9' } }),
      ingress('shop', 'site', { rules: [rule('shop.example.test', { path: '/', service: 'site' })] }),
      ...backend('shop', 'admin', admin.host, admin.port),
      ...backend('shop', 'site', site.host, site.port),
    ]);
    expect(rendered.result.rejections).toEqual([]);
    await withHaproxy(rendered, async () => {
      const get = (path: string, localAddress?: string) => send({ port: rendered.ports.http, host: 'shop.example.test', path, ...(localAddress === undefined ? {} : { localAddress }) });
      for (const path of ['/admin', '/%61dmin', '/%61%64%6D%69%6E/users', '/./admin', '//admin', '/admin/./x', '/x/../admin', '/%2e/admin', '/%2E%2E/admin', '/../admin']) {
        expect((await get(path)).status, path).toBe(403);
      }
      const allowed = await get('/%61dmin//users/./list', '127.0.0.9');
      expect([allowed.echo?.name, allowed.echo?.url]).toEqual(['admin', '/admin/users/list']);
      const public_ = await get('/shop//%7Ecart/./items?q=%61');
      expect([public_.echo?.name, public_.echo?.url]).toEqual(['site', '/shop/~cart/items?q=a']);
      expect((await get('/%zz')).status).toBe(400);
      expect((await get('/%%36%36')).status).toBe(400);
      expect((await get('/admin#x')).status).toBe(400);
      expect((await get('/\\admin')).status).toBe(400);
      expect((await get('/admin%00.txt')).status).toBe(400);
      // Encoded slashes and backslashes: servers that decode them before matching (nginx for %2F)
      // would read these as /admin, which the ingress routed as another path.
      for (const path of ['/%2Fadmin', '/%2fadmin', '/x/..%2Fadmin', '/%5Cadmin', '/%5cadmin']) expect((await get(path)).status, path).toBe(400);
    });
  });

  it('leaves URIs as the client sent them with normalizeUri=false', async () => {
    const site = await echoes.start('site', '127.0.0.3');
    const rendered = await renderToDir(out(), [ingress('shop', 'site', { rules: [rule('shop.example.test', { path: '/', service: 'site' })] }), ...backend('shop', 'site', site.host, site.port)], { normalizeUri: false });
    expect(rendered.result.haproxyConfig).not.toContain('normalize-uri');
    expect(rendered.result.haproxyConfig).not.toContain('expose-experimental-directives');
    await withHaproxy(rendered, async () => {
      expect((await send({ port: rendered.ports.http, host: 'shop.example.test', path: '//%61dmin/./x' })).echo?.url).toBe('//%61dmin/./x');
    });
  });
});

describe.skipIf(SKIP_HAPROXY)('the Host header on a real HAProxy', () => {
  it('answers 400 to a Host that is not one host name, so no Host moves a path out from under its allow-list, and routes real host spellings as before', async () => {
    const admin = await echoes.start('admin', '127.0.0.2');
    const site = await echoes.start('site', '127.0.0.3');
    const rendered = await renderToDir(out(), [
      ingress('shop', 'admin', { rules: [rule('shop.example.test', { path: '/admin', service: 'admin' })] }, { annotations: { 'haproxy.org/allow-list': '127.0.0.9' } }),
      ingress('shop', 'site', { rules: [rule('shop.example.test', { path: '/', service: 'site' })] }),
      ...backend('shop', 'admin', admin.host, admin.port),
      ...backend('shop', 'site', site.host, site.port),
    ]);
    expect(rendered.result.rejections).toEqual([]);
    await withHaproxy(rendered, async () => {
      const get = (host: string, path = '/admin') => send({ port: rendered.ports.http, host, path });
      // Host + path is the lookup key: `shop.example.test/x` + `/admin` would match only the rule of `/`.
      for (const host of ['shop.example.test/x', 'shop.example.test/', 'shop.example.test,shop.example.test/x', 'shop.example.test/x,shop.example.test', 'x@shop.example.test', 'shop.example.test%2f', 'shop.example.test:80/x', 'shop.example.test?']) {
        expect((await get(host)).status, host).toBe(400);
      }
      for (const host of ['shop.example.test', 'SHOP.example.test.', 'shop.example.test:80']) {
        expect((await get(host)).status, host).toBe(403);
        expect((await get(host, '/cart')).echo?.name, host).toBe('site');
      }
      expect((await get('[::1]:80')).status).toBe(404);
    });
  });
});

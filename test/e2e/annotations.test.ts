// One end-to-end scenario per annotation feature of the default template set, against a real
// HAProxy on loopback: objects are rendered into a directory as `render` writes it, HAProxy is
// started on it, and real HTTP requests go to echo backends (127.0.0.x) that report who they are
// and what they received. Source-address rules are tested with the client bound to 127.0.0.2.
// With CI=true these tests always run; elsewhere they are skipped when HAProxy cannot be run.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service, tlsSecret } from '../helpers/cluster.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { send, type RequestOptions } from '../helpers/e2e-client.js';
import { renderToDir, withHaproxy, type RenderedDir } from '../helpers/e2e-render.js';
import { eventually } from '../helpers/eventually.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/annotations.test.ts');

let root: string;
let counter = 0;
const echoes = new EchoFleet();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-annotations-'));
});
afterEach(async () => {
  await echoes.stopAll();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** `openssl passwd -6 -salt saltsalt secret`: the password is "secret". */
const SECRET_HASH = '$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1';
/** `openssl passwd -1 -salt salt secret`. */
const MD5_HASH = '$1$salt$ez2vlPGdaLYkJam5pWs/Y1';

/** An Ingress `shop/front` routing `host` to Service `web`, with `annotations`. */
function front(host: string, annotations: Record<string, string>, name = 'front'): KubeObject {
  return ingress('shop', name, { rules: [rule(host, { service: 'web' })] }, { annotations });
}

/** Service `shop/web` (port 80) with an EndpointSlice of the echo servers. */
function web(servers: readonly EchoServer[], annotations?: Record<string, string>): KubeObject[] {
  const svc = service('shop', 'web');
  const port = (servers[0] as EchoServer).port;
  const slices = servers.every((s) => s.port === port)
    ? [endpointSlice('shop', 'web', servers.map((s) => s.host), { name: 'http', port })]
    : servers.map((s, i) => endpointSlice('shop', 'web', [s.host], { name: 'http', port: s.port }, `web-${i}`));
  return [annotations === undefined ? svc : { ...svc, metadata: { ...svc.metadata, annotations } }, ...slices];
}

async function rendered(objects: readonly KubeObject[]): Promise<RenderedDir> {
  const dir = await renderToDir(join(root, `out-${++counter}`), objects);
  expect(dir.result.rejections).toEqual([]);
  return dir;
}

/** One command on HAProxy's Runtime API socket, and its whole answer. */
function runtimeCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const client = connect(socket, () => client.end(`${command}\n`));
    client.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    client.on('end', () => resolve(answer));
    client.on('error', reject);
  });
}

const get = (dir: RenderedDir, host: string, more: Partial<RequestOptions> = {}) => send({ port: dir.ports.http, host, ...more });

describe.skipIf(SKIP_HAPROXY)('annotations on a real HAProxy', () => {
  it('answers 403 to a source on the deny-list or off the allow-list, and serves the others', async () => {
    const echo = await echoes.start('web', '127.0.0.3');
    const dir = await rendered([
      front('deny.example.com', { 'haproxy.org/deny-list': '127.0.0.2, 10.0.0.0/8' }, 'deny'),
      front('allow.example.com', { 'haproxy.com/whitelist': '127.0.0.1/32, ::1' }, 'allow'),
      ...web([echo]),
    ]);
    await withHaproxy(dir, async () => {
      expect((await get(dir, 'deny.example.com', { localAddress: '127.0.0.2' })).status).toBe(403);
      expect((await get(dir, 'deny.example.com', { localAddress: '127.0.0.1' })).echo?.name).toBe('web');
      expect((await get(dir, 'allow.example.com', { localAddress: '127.0.0.2' })).status).toBe(403);
      expect((await get(dir, 'allow.example.com', { localAddress: '127.0.0.1' })).echo?.name).toBe('web');
    });
  });

  it('answers 401 without credentials or with a wrong password, and 200 with the password of a user of the Secret', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const users: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'users', namespace: 'shop' },
      data: { alice: Buffer.from(`${SECRET_HASH}\n`).toString('base64') },
      stringData: { bob: MD5_HASH },
    };
    const dir = await rendered([
      front('shop.example.com', { 'haproxy.org/auth-type': 'basic-auth', 'haproxy.org/auth-secret': 'shop/users', 'haproxy.org/auth-realm': 'Shop admins' }),
      users,
      ...web([echo]),
    ]);
    const basic = (user: string, password: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
    await withHaproxy(dir, async () => {
      const anonymous = await get(dir, 'shop.example.com');
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers['www-authenticate']).toBe('Basic realm="Shop admins"');
      expect((await get(dir, 'shop.example.com', { headers: basic('alice', 'wrong') })).status).toBe(401);
      expect((await get(dir, 'shop.example.com', { headers: basic('alice', 'secret') })).echo?.name).toBe('web');
      expect((await get(dir, 'shop.example.com', { headers: basic('bob', 'secret') })).echo?.name).toBe('web');
    });
  });

  it('redirects HTTP to https:// with 302 by default, with the configured code and port, and not at all when ssl-redirect is false', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const tls = (host: string, name: string, annotations: Record<string, string>): KubeObject =>
      ingress('shop', name, { tls: [{ hosts: [host], secretName: 'shop-tls' }], rules: [rule(host, { service: 'web' })] }, { annotations });
    const dir = await rendered([
      tls('default.example.com', 'default', {}),
      tls('custom.example.com', 'custom', { 'haproxy.org/ssl-redirect-code': '301', 'haproxy.org/ssl-redirect-port': '8443' }),
      tls('off.example.com', 'off', { 'haproxy.org/ssl-redirect': 'false' }),
      tlsSecret('shop', 'shop-tls'),
      ...web([echo]),
    ]);
    await withHaproxy(dir, async () => {
      const plain = await get(dir, 'default.example.com', { path: '/cart?id=7' });
      expect([plain.status, plain.headers.location]).toEqual([302, `https://default.example.com:${dir.ports.https}/cart?id=7`]);
      const custom = await get(dir, 'custom.example.com', { path: '/cart' });
      expect([custom.status, custom.headers.location]).toEqual([301, 'https://custom.example.com:8443/cart']);
      expect((await get(dir, 'off.example.com', { path: '/cart' })).echo?.name).toBe('web');
    });
  });

  it('redirects every request of an Ingress with request-redirect to the other host, keeping path and query', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const dir = await rendered([
      front('old.example.com', { 'haproxy.org/request-redirect': 'new.example.com:8080', 'haproxy.org/request-redirect-code': '307' }, 'old'),
      front('moved.example.com', { 'haproxy.org/request-redirect': 'https://moved.example.org' }, 'moved'),
      ...web([echo]),
    ]);
    await withHaproxy(dir, async () => {
      const old = await get(dir, 'old.example.com', { path: '/a/b?c=d' });
      expect([old.status, old.headers.location]).toEqual([307, 'http://new.example.com:8080/a/b?c=d']);
      const moved = await get(dir, 'moved.example.com', { path: '/x' });
      expect([moved.status, moved.headers.location]).toEqual([302, 'https://moved.example.org/x']);
    });
  });

  it('rewrites the path the backend sees, to a fixed path or by a regular expression', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const dir = await rendered([
      front('fixed.example.com', { 'haproxy.org/path-rewrite': '/' }, 'fixed'),
      front('regex.example.com', { 'haproxy.org/path-rewrite': '/api/(.*) /v2/\\1' }, 'regex'),
      ...web([echo]),
    ]);
    await withHaproxy(dir, async () => {
      expect((await get(dir, 'fixed.example.com', { path: '/some/where' })).echo?.url).toBe('/');
      expect((await get(dir, 'regex.example.com', { path: '/api/users/7?full=1' })).echo?.url).toBe('/v2/users/7?full=1');
      expect((await get(dir, 'regex.example.com', { path: '/other' })).echo?.url).toBe('/other');
    });
  });

  it('sets the Host header and the request headers the backend sees, and the response headers the client sees', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const dir = await rendered([
      front('shop.example.com', {
        'haproxy.org/set-host': 'backend.internal:8080',
        'haproxy.org/request-set-header': 'X-Tenant shop',
        'haproxy.org/response-set-header': 'Cache-Control "no-store, max-age=0"',
      }),
      ...web([echo]),
    ]);
    await withHaproxy(dir, async () => {
      const reply = await get(dir, 'shop.example.com', { headers: { 'x-tenant': 'forged' } });
      expect(reply.echo?.headers.host).toBe('backend.internal:8080');
      expect(reply.echo?.headers['x-tenant']).toBe('shop');
      expect(reply.headers['cache-control']).toBe('no-store, max-age=0');
    });
  });

  it('keeps a client on one server with the persistence cookie, while requests without it are balanced', async () => {
    const one = await echoes.start('one', '127.0.0.2');
    const two = await echoes.start('two', '127.0.0.3');
    const dir = await rendered([front('shop.example.com', { 'haproxy.org/cookie-persistence': 'SRV' }), ...web([one, two])]);
    await withHaproxy(dir, async () => {
      const first = await get(dir, 'shop.example.com');
      const cookie = String(first.headers['set-cookie']?.[0] ?? '').split(';')[0] as string;
      expect(cookie).toMatch(/^SRV=srv[12]$/);
      const served = new Set<string>();
      for (let i = 0; i < 6; i++) served.add(String((await get(dir, 'shop.example.com', { headers: { cookie } })).echo?.name));
      expect([...served]).toEqual([first.echo?.name]);
      const balanced = new Set<string>();
      for (let i = 0; i < 4; i++) balanced.add(String((await get(dir, 'shop.example.com')).echo?.name));
      expect([...balanced].sort()).toEqual(['one', 'two']);
    });
  });

  it('answers 429 past the rate limit of a source address, and 403 by default', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const dir = await rendered([
      front('limited.example.com', { 'haproxy.org/rate-limit-requests': '3', 'haproxy.org/rate-limit-period': '1m', 'haproxy.org/rate-limit-status-code': '429' }, 'limited'),
      front('default.example.com', { 'haproxy.org/rate-limit-requests': '1', 'haproxy.org/rate-limit-period': '1m' }, 'default'),
      ...web([echo]),
    ]);
    await withHaproxy(dir, async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await get(dir, 'limited.example.com')).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      // Counters are per source address: another client is not limited.
      expect((await get(dir, 'limited.example.com', { localAddress: '127.0.0.3' })).status).toBe(200);
      expect([(await get(dir, 'default.example.com')).status, (await get(dir, 'default.example.com')).status]).toEqual([200, 403]);
    });
  });

  it('shares one budget of rate-limit entries out among 41 rate-limited Ingresses (12,500 each in HAProxy), and still limits each', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const dir = await rendered([
      ...Array.from({ length: 41 }, (_, i) => front(`r${i}.example.com`, { 'haproxy.org/rate-limit-requests': '2', 'haproxy.org/rate-limit-period': '1m' }, `r${i}`)),
      ...web([echo]),
    ]);
    await withHaproxy(dir, async () => {
      const tables = await runtimeCommand(dir.adminSocket, 'show table');
      const sizes = [...tables.matchAll(/size:(\d+)/g)].map((m) => Number(m[1]));
      expect(sizes).toHaveLength(41);
      expect(new Set(sizes)).toEqual(new Set([12_500]));
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await get(dir, 'r40.example.com')).status);
      expect(statuses).toEqual([200, 200, 403]);
    });
  });

  it('raises a 100 ms check-interval to the shared floor past 2,000 checked slots, and HAProxy runs it and serves', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const objects = [...['a', 'b', 'c'].map((n) => front(`${n}.example.com`, { 'haproxy.org/check-interval': '100ms' }, n)), ...web([echo])];
    const dir = await renderToDir(join(root, `out-${++counter}`), objects, { serverSlots: 1000 });
    // 3 backends of 1,000 slots: 3,000 checks at 100 ms would be 30,000 a second.
    expect(dir.result.haproxyConfig.match(/default-server check inter 200\b/g)).toHaveLength(3);
    await withHaproxy(dir, async () => {
      await eventually(async () => ((await get(dir, 'a.example.com')).echo?.name === 'web' ? true : undefined), 'a.example.com served by web');
    });
  });

  it('answers a CORS preflight with 204 and the Access-Control headers, adds them to responses, and leaves other origins alone', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const dir = await rendered([
      front('api.example.com', {
        'haproxy.org/cors-enable': 'true',
        'haproxy.org/cors-allow-origin': '^https://(.+\\.)?example\\.com$',
        'haproxy.org/cors-allow-methods': 'GET, POST',
        'haproxy.org/cors-allow-headers': 'X-Custom-Header',
        'haproxy.org/cors-allow-credentials': 'true',
        'haproxy.org/cors-max-age': '1m',
        'haproxy.org/auth-type': 'basic-auth',
        'haproxy.org/auth-secret': 'users',
      }),
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: 'shop' }, stringData: { alice: SECRET_HASH } },
      ...web([echo]),
    ]);
    const origin = 'https://app.example.com';
    await withHaproxy(dir, async () => {
      const preflight = await get(dir, 'api.example.com', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(204);
      expect(preflight.echo).toBeUndefined();
      expect(preflight.headers).toMatchObject({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'X-Custom-Header',
        'access-control-allow-credentials': 'true',
        'access-control-max-age': '60',
        vary: 'Origin',
      });
      const authorization = `Basic ${Buffer.from('alice:secret').toString('base64')}`;
      const simple = await get(dir, 'api.example.com', { headers: { origin, authorization } });
      expect([simple.echo?.name, simple.headers['access-control-allow-origin']]).toEqual(['web', origin]);
      const foreign = await get(dir, 'api.example.com', { headers: { origin: 'https://evil.example.org', authorization } });
      expect(foreign.echo?.name).toBe('web');
      expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  it('answers 504 when a backend takes longer than timeout-server', async () => {
    const slow = await echoes.start('slow', '127.0.0.2', { delayMs: 2_000 });
    const dir = await rendered([front('shop.example.com', { 'haproxy.org/timeout-server': '200ms' }), ...web([slow])]);
    await withHaproxy(dir, async () => {
      const started = Date.now();
      expect((await get(dir, 'shop.example.com')).status).toBe(504);
      expect(Date.now() - started).toBeLessThan(1_500);
    });
  });

  it('sends every request of one source address to the same server with load-balance source', async () => {
    const one = await echoes.start('one', '127.0.0.2');
    const two = await echoes.start('two', '127.0.0.3');
    const dir = await rendered([front('shop.example.com', { 'haproxy.org/load-balance': 'source' }), ...web([one, two])]);
    expect(dir.result.haproxyConfig).toContain('  balance source\n');
    await withHaproxy(dir, async () => {
      for (const source of ['127.0.0.1', '127.0.0.4', '127.0.0.5']) {
        const served = new Set<string>();
        for (let i = 0; i < 4; i++) served.add(String((await get(dir, 'shop.example.com', { localAddress: source })).echo?.name));
        expect(served.size).toBe(1);
      }
    });
  });

  it('marks a server down when its HTTP health check fails (check-http and check-interval on the Service)', async () => {
    const healthy = await echoes.start('healthy', '127.0.0.2');
    const sick = await echoes.start('sick', '127.0.0.3', { statusFor: (path) => (path === '/healthz' ? 503 : 200) });
    const dir = await rendered([
      front('shop.example.com', {}),
      ...web([healthy, sick], { 'haproxy.org/check-http': 'GET /healthz', 'haproxy.org/check-interval': '100ms' }),
    ]);
    expect(dir.result.haproxyConfig).toContain('  option httpchk GET /healthz\n');
    await withHaproxy(dir, async (haproxy) => {
      const state = async (): Promise<string> => (await haproxy.process.runtimeApi.send('show servers state ing_shop_front_web_80')).output;
      // Columns: be_id be_name srv_id srv_name srv_addr srv_op_state (2 running, 0 stopped) ...
      const opState = (text: string, server: string): string | undefined => text.split('\n').find((l) => l.split(' ')[3] === server)?.split(' ')[5];
      const sickSlot = /server (srv\d+) 127\.0\.0\.3:/.exec(dir.result.haproxyConfig)?.[1] as string;
      await eventually(async () => (opState(await state(), sickSlot) === '0' ? true : undefined), 'the sick server marked down', 10_000);
      for (let i = 0; i < 4; i++) expect((await get(dir, 'shop.example.com')).echo?.name).toBe('healthy');
    });
  });

  it('serves an Ingress without its refused config snippet, with a warning', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const dir = await rendered([front('shop.example.com', { 'haproxy.org/backend-config-snippet': 'http-request deny' }), ...web([echo])]);
    expect(dir.result.warnings).toContainEqual(expect.stringContaining('annotation haproxy.org/backend-config-snippet is refused'));
    expect(dir.result.haproxyConfig).not.toContain('http-request deny\n');
    await withHaproxy(dir, async () => {
      expect((await get(dir, 'shop.example.com')).echo?.name).toBe('web');
    });
  });
});

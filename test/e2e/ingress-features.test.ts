// One end-to-end scenario per Ingress feature of the default template set, against a real
// HAProxy on loopback: objects are rendered into a directory as `render` writes it, HAProxy is
// started on it, and real HTTP/HTTPS requests go to echo backends (127.0.0.x) that report who
// they are and the headers they got; and the loop guard, which stops a request that comes back to
// the same HAProxy. With CI=true these tests always run; elsewhere they are skipped, with a
// notice, when HAProxy cannot be run.
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CERTIFICATE_FILE, DEFAULT_CERTIFICATE_SUBJECT, generateSelfSigned } from '../../src/main/output/default-certificate.js';
import { INSTANCE_TOKEN_FILE } from '../../src/main/output/instance-token.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, exampleTlsData, ingress, rule, service, tlsSecret } from '../helpers/cluster.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { send, servedCertificate } from '../helpers/e2e-client.js';
import { renderToDir, withHaproxy } from '../helpers/e2e-render.js';
import { eventually } from '../helpers/eventually.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/ingress-features.test.ts');

let root: string;
let counter = 0;
const echoes = new EchoFleet();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-features-'));
});
afterEach(async () => {
  await echoes.stopAll();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const out = (): string => join(root, `out-${++counter}`);

/** A Service `ns/name` (port 80, named http) whose EndpointSlice points at the echo servers. */
function backedBy(ns: string, name: string, ...servers: EchoServer[]): KubeObject[] {
  const port = servers[0]?.port ?? 1;
  if (servers.some((s) => s.port !== port)) {
    return [service(ns, name), ...servers.map((s, i) => endpointSlice(ns, name, [s.host], { name: 'http', port: s.port }, `${name}-${i}`))];
  }
  return [service(ns, name), endpointSlice(ns, name, servers.map((s) => s.host), { name: 'http', port })];
}

const created = (iso: string): Partial<KubeObject['metadata']> => ({ creationTimestamp: iso });

describe.skipIf(SKIP_HAPROXY)('Ingress features on a real HAProxy', () => {
  it('routes an Exact path before a Prefix path on the same path under a wildcard host', async () => {
    const prefix = await echoes.start('prefix', '127.0.0.2');
    const exact = await echoes.start('exact', '127.0.0.3');
    const objects = [
      ingress('wild', 'site', {
        rules: [rule('*.wild.example.com', { path: '/foo', pathType: 'Prefix', service: 'prefix' }, { path: '/foo', pathType: 'Exact', service: 'exact' })],
      }),
      ...backedBy('wild', 'prefix', prefix),
      ...backedBy('wild', 'exact', exact),
    ];
    const rendered = await renderToDir(out(), objects);
    await withHaproxy(rendered, async () => {
      const http = rendered.ports.http;
      expect((await send({ port: http, host: 'a.wild.example.com', path: '/foo' })).echo?.name).toBe('exact');
      expect((await send({ port: http, host: 'b.wild.example.com', path: '/foo/bar' })).echo?.name).toBe('prefix');
      expect((await send({ port: http, host: 'a.b.wild.example.com', path: '/foo' })).status).toBe(404);
    });
  });

  it("serves another Ingress's host-less / rule before any spec.defaultBackend, which takes only what no rule matches", async () => {
    const fallback = await echoes.start('fallback', '127.0.0.2');
    const hostless = await echoes.start('root', '127.0.0.3');
    const site = await echoes.start('site', '127.0.0.4');
    const withDefault = ingress('aaa', 'catch-all', { defaultBackend: { service: { name: 'fallback', port: { number: 80 } } } });
    const first = await renderToDir(out(), [
      withDefault,
      ingress('zzz', 'root', { rules: [rule(undefined, { path: '/', service: 'root' })] }),
      ...backedBy('aaa', 'fallback', fallback),
      ...backedBy('zzz', 'root', hostless),
    ]);
    await withHaproxy(first, async () => {
      const reply = await send({ port: first.ports.http, host: 'anything.example.com', path: '/x' });
      expect(reply.echo?.name).toBe('root');
    });
    const second = await renderToDir(out(), [
      withDefault,
      ingress('zzz', 'site', { rules: [rule('site.example.com', { path: '/', service: 'site' })] }),
      ...backedBy('aaa', 'fallback', fallback),
      ...backedBy('zzz', 'site', site),
    ]);
    await withHaproxy(second, async () => {
      expect((await send({ port: second.ports.http, host: 'site.example.com', path: '/x' })).echo?.name).toBe('site');
      expect((await send({ port: second.ports.http, host: 'other.example.com', path: '/x' })).echo?.name).toBe('fallback');
    });
  });

  it('keeps a host with its older claimant against a newer Ingress in a namespace that sorts first', async () => {
    const shop = await echoes.start('shop', '127.0.0.2');
    const thief = await echoes.start('thief', '127.0.0.3');
    const rendered = await renderToDir(out(), [
      ingress('shop', 'front', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, created('2024-01-01T00:00:00Z')),
      ingress('aaa', 'grab', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, created('2025-06-01T00:00:00Z')),
      ...backedBy('shop', 'web', shop),
      ...backedBy('aaa', 'web', thief),
    ]);
    expect(rendered.result.warnings).toContain('Ingress aaa/grab: route shop.example.com/ is already served by Ingress shop/front; ignored');
    await withHaproxy(rendered, async () => {
      for (let i = 0; i < 3; i++) expect((await send({ port: rendered.ports.http, host: 'shop.example.com', path: '/' })).echo?.name).toBe('shop');
    });
  });

  it("serves the default certificate for an unknown SNI, never another tenant's, and negotiates h2", async () => {
    const web = await echoes.start('web', '127.0.0.2');
    const tenant = new X509Certificate(Buffer.from(exampleTlsData()['tls.crt'], 'base64'));
    const attackerPem = await generateSelfSigned(Date.now(), 'CN=shop.example.com');
    const [attackerCrt, attackerKey] = attackerPem.split(/(?=-----BEGIN PRIVATE KEY-----)/) as [string, string];
    const dir = out();
    const rendered = await renderToDir(dir, [
      ingress('shop', 'front', { tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }], rules: [rule('shop.example.com', { service: 'web' })] }, created('2024-01-01T00:00:00Z')),
      // Lists shop's host in its TLS section without routing it: no claim on the host.
      ingress('aaa', 'grab', { tls: [{ hosts: ['shop.example.com'], secretName: 'grab-tls' }], rules: [rule('aaa.example.com', { service: 'web' })] }, created('2023-01-01T00:00:00Z')),
      tlsSecret('shop', 'shop-tls'),
      tlsSecret('aaa', 'grab-tls', { 'tls.crt': Buffer.from(attackerCrt).toString('base64'), 'tls.key': Buffer.from(attackerKey).toString('base64') }),
      ...backedBy('shop', 'web', web),
      ...backedBy('aaa', 'web', web),
    ]);
    const defaultCertificate = new X509Certificate(await readFile(join(dir, DEFAULT_CERTIFICATE_FILE)));
    expect(defaultCertificate.subject).toBe(DEFAULT_CERTIFICATE_SUBJECT);
    await withHaproxy(rendered, async () => {
      const unknown = await servedCertificate(rendered.ports.https, 'unknown.example.com');
      expect(unknown.fingerprint256).toBe(defaultCertificate.fingerprint256);
      expect(unknown.subject).toBe(DEFAULT_CERTIFICATE_SUBJECT);
      expect(unknown.alpnProtocol).toBe('h2');
      const own = await servedCertificate(rendered.ports.https, 'shop.example.com');
      expect(own.fingerprint256).toBe(tenant.fingerprint256);
      const grabbed = await servedCertificate(rendered.ports.https, 'aaa.example.com');
      expect(grabbed.fingerprint256).toBe(defaultCertificate.fingerprint256);
    });
  });

  it('redirects HTTP to https:// with 302 for a host with TLS, and serves HTTP for a host without', async () => {
    const web = await echoes.start('web', '127.0.0.2');
    const rendered = await renderToDir(out(), [
      ingress('shop', 'front', {
        tls: [{ hosts: ['shop.example.com', '*.wild.example.com'], secretName: 'shop-tls' }],
        rules: [rule('shop.example.com', { service: 'web' }), rule('plain.example.com', { service: 'web' }), rule('*.wild.example.com', { service: 'web' })],
      }),
      tlsSecret('shop', 'shop-tls'),
      ...backedBy('shop', 'web', web),
    ]);
    await withHaproxy(rendered, async () => {
      const redirect = await send({ port: rendered.ports.http, host: 'shop.example.com:8080', path: '/cart?id=7' });
      expect(redirect.status).toBe(302);
      expect(redirect.headers.location).toBe(`https://shop.example.com:${rendered.ports.https}/cart?id=7`);
      expect(redirect.echo).toBeUndefined();
      const wildcard = await send({ port: rendered.ports.http, host: 'a.wild.example.com', path: '/' });
      expect([wildcard.status, wildcard.headers.location]).toEqual([302, `https://a.wild.example.com:${rendered.ports.https}/`]);
      const plain = await send({ port: rendered.ports.http, host: 'plain.example.com', path: '/cart' });
      expect(plain.status).toBe(200);
      const secure = await send({ port: rendered.ports.https, host: 'shop.example.com', path: '/cart', tls: true });
      expect(secure.echo?.name).toBe('web');
    });
  });

  it('sets X-Forwarded-For and X-Forwarded-Proto for the backend', async () => {
    const web = await echoes.start('web', '127.0.0.2');
    const rendered = await renderToDir(out(), [
      ingress('shop', 'front', {
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        rules: [rule('shop.example.com', { service: 'web' }), rule('plain.example.com', { service: 'web' })],
      }),
      tlsSecret('shop', 'shop-tls'),
      ...backedBy('shop', 'web', web),
    ]);
    await withHaproxy(rendered, async () => {
      const plain = await send({ port: rendered.ports.http, host: 'plain.example.com', headers: { 'x-forwarded-proto': 'https' } });
      expect(plain.echo?.headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(plain.echo?.headers['x-forwarded-proto']).toBe('http');
      const secure = await send({ port: rendered.ports.https, host: 'shop.example.com', tls: true });
      expect(secure.echo?.headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(secure.echo?.headers['x-forwarded-proto']).toBe('https');
    });
  });

  it('marks a killed backend server down by its health check and sends every request to the survivor', async () => {
    const one = await echoes.start('one', '127.0.0.2');
    const two = await echoes.start('two', '127.0.0.3');
    const rendered = await renderToDir(out(), [ingress('shop', 'front', { rules: [rule('shop.example.com', { service: 'web' })] }), ...backedBy('shop', 'web', one, two)]);
    expect(rendered.result.haproxyConfig).toContain('default-server check');
    await withHaproxy(rendered, async (haproxy) => {
      const state = async (): Promise<string> => (await haproxy.process.runtimeApi.send('show servers state ing_shop_front_web_80')).output;
      // Columns: be_id be_name srv_id srv_name srv_addr srv_op_state (2 running, 0 stopped) srv_admin_state (0 none, 5 maintenance) ...
      const columns = (text: string, server: string): string[] => text.split('\n').find((l) => l.split(' ')[3] === server)?.split(' ') ?? [];
      await eventually(async () => (columns(await state(), 'srv2')[5] === '2' ? true : undefined), 'srv2 up', 10_000);
      await two.kill();
      await eventually(async () => (columns(await state(), 'srv2')[5] === '0' ? true : undefined), 'srv2 marked down by its check', 20_000);
      // Down by its health check, not put in maintenance; an empty slot is in maintenance, where nothing is checked.
      expect(columns(await state(), 'srv2')[6]).toBe('0');
      expect(columns(await state(), 'srv3').slice(5, 7)).toEqual(['0', '5']);
      for (let i = 0; i < 6; i++) expect((await send({ port: rendered.ports.http, host: 'shop.example.com' })).echo?.name).toBe('one');
    });
  });

  it('routes an Ingress without a class when our IngressClass is the default class', async () => {
    const web = await echoes.start('web', '127.0.0.2');
    const rendered = await renderToDir(
      out(),
      [
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'IngressClass',
          metadata: { name: 'house', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
          spec: { controller: 'haproxy.org/ingress-controller' },
        },
        ingress('shop', 'classless', { rules: [rule('shop.example.com', { service: 'web' })] }),
        ingress('shop', 'foreign', { ingressClassName: 'nginx', rules: [rule('foreign.example.com', { service: 'web' })] }),
        ...backedBy('shop', 'web', web),
      ],
      { watchIngressWithoutClass: false },
    );
    await withHaproxy(rendered, async () => {
      expect((await send({ port: rendered.ports.http, host: 'shop.example.com' })).echo?.name).toBe('web');
      expect((await send({ port: rendered.ports.http, host: 'foreign.example.com' })).status).toBe(404);
    });
  });

  it('routes an ExternalName Service that points at localhost only when externalNameServices is on', async () => {
    const external = await echoes.start('external', '127.0.0.1');
    const objects: KubeObject[] = [
      ingress('shop', 'front', { rules: [rule('shop.example.com', { service: 'outside', port: external.port })] }),
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'outside', namespace: 'shop' }, spec: { type: 'ExternalName', externalName: 'localhost' } },
    ];
    const off = await renderToDir(out(), objects);
    expect(off.result.warnings).toContain(
      'Ingress shop/front: service shop/outside is an ExternalName Service, which is not routed unless values.externalNameServices is true (--set externalNameServices=true); its backend has no servers',
    );
    expect(off.result.haproxyConfig).not.toContain('localhost:');
    await withHaproxy(off, async () => {
      expect((await send({ port: off.ports.http, host: 'shop.example.com', path: '/hello' })).status).toBe(503);
    });
    const rendered = await renderToDir(out(), objects, { externalNameServices: true });
    expect(rendered.result.haproxyConfig).toContain(`server srv1 localhost:${external.port} resolvers dns init-addr last,libc,none`);
    await withHaproxy(rendered, async () => {
      const reply = await send({ port: rendered.ports.http, host: 'shop.example.com', path: '/hello' });
      expect(reply.echo?.name).toBe('external');
      expect(reply.echo?.url).toBe('/hello');
    });
  });
});

describe.skipIf(SKIP_HAPROXY)('the loop guard on a real HAProxy', () => {
  it("refuses with 508 a request that carries this instance's token, in both frontends, and passes the others on with the token added", async () => {
    const web = await echoes.start('web', '127.0.0.2');
    const rendered = await renderToDir(out(), [ingress('shop', 'front', { rules: [rule('shop.example.com', { service: 'web' })] }), ...backedBy('shop', 'web', web)]);
    const token = (await readFile(join(rendered.root, INSTANCE_TOKEN_FILE), 'utf8')).trim();
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    await withHaproxy(rendered, async () => {
      const { http, https } = rendered.ports;
      const passed = await send({ port: http, host: 'shop.example.com', headers: { 'x-haptic-loop': 'another-instance' } });
      expect(passed.status).toBe(200);
      expect(passed.echo?.name).toBe('web');
      expect(passed.echo?.headers['x-haptic-loop']).toBe(`another-instance, ${token}`);
      const secure = await send({ port: https, tls: true, host: 'shop.example.com' });
      expect(secure.echo?.name).toBe('web');
      expect(secure.echo?.headers['x-haptic-loop']).toBe(token);
      for (const [port, tls] of [[http, false], [https, true]] as const) {
        const looped = await send({ port, tls, host: 'shop.example.com', headers: { 'x-haptic-loop': `another-instance, ${token}` } });
        expect(looped.status).toBe(508);
        expect(looped.echo).toBeUndefined();
        expect(looped.headers['content-type']).toBe('text/plain');
        expect(looped.body).toBe('loop detected');
      }
    });
  });

  it('stops at its second pass a request that an ExternalName Service sends back to the ingress', async () => {
    // HAProxy's own ports are refused as external targets, so the loop goes through a TCP relay
    // to the http port, as it would through a load balancer in front of the ingress.
    const relay = await startRelay();
    try {
      const rendered = await renderToDir(
        out(),
        [
          ingress('loop', 'front', { rules: [rule('loop.example.com', { service: 'self', port: relay.port })] }, { annotations: { 'haproxy.org/check': 'false' } }),
          { apiVersion: 'v1', kind: 'Service', metadata: { name: 'self', namespace: 'loop' }, spec: { type: 'ExternalName', externalName: 'localhost' } },
        ],
        { externalNameServices: true },
      );
      relay.target = rendered.ports.http;
      await withHaproxy(rendered, async () => {
        const reply = await send({ port: rendered.ports.http, host: 'loop.example.com', path: '/again' });
        expect(reply.status).toBe(508);
        expect(reply.body).toBe('loop detected');
        // One pass out through the relay, refused when it came back in.
        expect(relay.requests).toBe(1);
      });
    } finally {
      await relay.close();
    }
  });
});

interface Relay {
  readonly port: number;
  /** Where connections are forwarded (127.0.0.1). */
  target: number;
  /** Connections that carried data. */
  readonly requests: number;
  close(): Promise<void>;
}

/** A TCP relay on 127.0.0.1 that pipes each connection to `target`. */
async function startRelay(): Promise<Relay> {
  const sockets = new Set<Socket>();
  let requests = 0;
  const relay = {
    port: 0,
    target: 1,
    get requests(): number {
      return requests;
    },
    close: (): Promise<void> =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
  const track = (socket: Socket): Socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    return socket;
  };
  const server = createServer((client) => {
    track(client).once('data', () => requests++);
    const upstream = track(connect(relay.target, '127.0.0.1'));
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  relay.port = (server.address() as AddressInfo).port;
  return relay;
}

// Host ownership against a real HAProxy 2.6, as a hostile tenant would try it: the unmatched paths
// of an owned host never fall through to another namespace's rules without a host or default
// backend; a Host header written with a trailing dot, capitals or a port reaches the owner, never
// someone else, and SNI is matched without regard to case; an owner whose Ingress is rejected
// keeps its host (503) and its TLS host; and one namespace's many Ingresses cannot push the
// render over maxOutputBytes for everyone.
// With CI=true these tests always run (and fail when HAProxy is missing).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/main/haproxy/haproxy-check.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service, tlsSecret } from '../helpers/cluster.js';
import { send, servedCertificate } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { renderToDir, withHaproxy, type RenderedDir } from '../helpers/e2e-render.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/tenant-ownership.test.ts');

let root: string;
let counter = 0;
const echoes = new EchoFleet();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-ownership-'));
});
afterEach(async () => {
  await echoes.stopAll();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
const NEW = { creationTimestamp: '2025-01-01T00:00:00Z' };

/** A Service `ns/name` (port 80, named http) whose EndpointSlice points at one echo server. */
function backedBy(ns: string, name: string, server: EchoServer): KubeObject[] {
  return [service(ns, name), endpointSlice(ns, name, [server.host], { name: 'http', port: server.port })];
}

/** TLS Secret data for a self-signed P-256 certificate of `host`, made by the openssl command. */
function selfSigned(host: string): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '30', '-subj', `/CN=${host}`, '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')], { stdio: 'ignore' });
    return { 'tls.crt': readFileSync(join(dir, 'c.pem')).toString('base64'), 'tls.key': readFileSync(join(dir, 'k.pem')).toString('base64') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function render(objects: readonly KubeObject[], values: Record<string, unknown> = {}): Promise<RenderedDir> {
  const rendered = await renderToDir(join(root, `out-${++counter}`), objects, values);
  const verdict = await checkConfigFile(rendered.paths.configFile);
  expect(verdict.ok, verdict.message).toBe(true);
  return rendered;
}

/** Who answered: the echo server's name, or the status of a reply no echo server gave. */
async function who(port: number, host: string, path = '/'): Promise<string> {
  const reply = await send({ port, host, path });
  return reply.echo?.name ?? String(reply.status);
}

describe.skipIf(SKIP_HAPROXY)('host ownership on a real HAProxy', () => {
  it("sends an owned host's unmatched paths to its owner's default backend or 404, never to another namespace's host-less rule or default backend", async () => {
    const [shop, shopDefault, plain, evil] = await Promise.all([
      echoes.start('shop', '127.0.0.2'),
      echoes.start('shop-default', '127.0.0.3'),
      echoes.start('plain', '127.0.0.4'),
      echoes.start('evil', '127.0.0.5'),
    ]);
    const rendered = await render([
      ingress('shop', 'web', { defaultBackend: { service: { name: 'fallback', port: { number: 80 } } }, rules: [rule('shop.example.test', { path: '/app', service: 'web' })] }, OLD),
      ...backedBy('shop', 'web', shop),
      ...backedBy('shop', 'fallback', shopDefault),
      ingress('plain', 'web', { rules: [rule('plain.example.test', { path: '/app', service: 'web' }), rule('*.wild.example.test', { path: '/app', service: 'web' })] }, OLD),
      ...backedBy('plain', 'web', plain),
      // Newer, from a third namespace: a rule without a host and a default backend.
      ingress('evil', 'catch', { defaultBackend: { service: { name: 'web', port: { number: 80 } } }, rules: [rule(undefined, { path: '/', service: 'web' })] }, NEW),
      ...backedBy('evil', 'web', evil),
    ]);
    await withHaproxy(rendered, async () => {
      const { http } = rendered.ports;
      expect(await who(http, 'shop.example.test', '/app/x')).toBe('shop');
      expect(await who(http, 'shop.example.test', '/other')).toBe('shop-default');
      expect(await who(http, 'plain.example.test', '/other')).toBe('404');
      expect(await who(http, 'a.wild.example.test', '/other')).toBe('404');
      // Hosts nobody owns are still served by the rules without a host.
      expect(await who(http, 'unknown.example.test', '/other')).toBe('evil');
    });
  });

  it("lets one namespace's many small Ingresses cost it its newest ones, never the render: the rest are served under maxOutputBytes", async () => {
    const [shop, greedy] = await Promise.all([echoes.start('shop', '127.0.0.2'), echoes.start('greedy', '127.0.0.3')]);
    const stamp = (i: number): Partial<KubeObject['metadata']> => ({ creationTimestamp: new Date(Date.UTC(2024, 6, 1) + i * 60_000).toISOString() });
    const many = Array.from({ length: 400 }, (_, i) => ingress('greedy', `i${String(i).padStart(3, '0')}`, { rules: [rule(`h${i}.greedy.example.test`, { path: '/', service: 'web' }, { path: '/api', service: 'web' })] }, stamp(i)));
    const rendered = await render([ingress('shop', 'web', { rules: [rule('shop.example.test', { path: '/', service: 'web' })] }, OLD), ...backedBy('shop', 'web', shop), ...many, ...backedBy('greedy', 'web', greedy)], {
      maxOutputBytes: 200_000,
    });
    expect(rendered.result.warnings.some((w) => w.startsWith('Ingress greedy/i399: it is not served: namespace greedy would add about '))).toBe(true);
    await withHaproxy(rendered, async () => {
      const { http } = rendered.ports;
      expect(await who(http, 'shop.example.test')).toBe('shop');
      expect(await who(http, 'h0.greedy.example.test')).toBe('greedy');
      expect(await who(http, 'h399.greedy.example.test')).toBe('404');
    });
  });

  it('normalizes the Host header (capitals, trailing dots, a port) before lookup, so shop.example.test. cannot bypass the owner', async () => {
    const [shop, evil] = await Promise.all([echoes.start('shop', '127.0.0.2'), echoes.start('evil', '127.0.0.3')]);
    const rendered = await render([
      ingress('shop', 'web', { rules: [rule('shop.example.test', { path: '/app', service: 'web' })] }, OLD),
      ...backedBy('shop', 'web', shop),
      ingress('evil', 'catch', { rules: [rule(undefined, { path: '/', service: 'web' })] }, NEW),
      ...backedBy('evil', 'web', evil),
    ]);
    await withHaproxy(rendered, async () => {
      const { http } = rendered.ports;
      for (const host of ['shop.example.test.', 'SHOP.Example.TEST.', `shop.example.test.:${http}`, 'shop.example.test..']) {
        expect(await who(http, host, '/app'), host).toBe('shop');
        expect(await who(http, host, '/admin'), host).toBe('404');
      }
    });
  });

  it('redirects HTTP to HTTPS for a TLS host written with a trailing dot, as for the host itself', async () => {
    const shop = await echoes.start('shop', '127.0.0.2');
    const rendered = await render([
      ingress('shop', 'web', { tls: [{ hosts: ['shop.example.test'], secretName: 'tls' }], rules: [rule('shop.example.test', { path: '/', service: 'web' })] }, OLD),
      ...backedBy('shop', 'web', shop),
      tlsSecret('shop', 'tls'),
    ]);
    await withHaproxy(rendered, async () => {
      const { http, https } = rendered.ports;
      for (const host of ['shop.example.test', 'Shop.Example.Test.']) {
        const reply = await send({ port: http, host, path: '/cart' });
        expect(reply.status, host).toBe(302);
        expect(reply.headers.location, host).toBe(`https://shop.example.test:${https}/cart`);
      }
    });
  });

  it('matches SNI without regard to case, and a trailing-dot SNI never gets another namespace\'s certificate', async () => {
    const [shop, other] = await Promise.all([echoes.start('shop', '127.0.0.2'), echoes.start('other', '127.0.0.3')]);
    const rendered = await render([
      ingress('shop', 'web', { tls: [{ hosts: ['shop.example.com'], secretName: 'tls' }], rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, OLD),
      ...backedBy('shop', 'web', shop),
      tlsSecret('shop', 'tls'),
      ingress('other', 'web', { tls: [{ hosts: ['other.example.com'], secretName: 'tls' }], rules: [rule('other.example.com', { path: '/', service: 'web' })] }, NEW),
      ...backedBy('other', 'web', other),
      tlsSecret('other', 'tls', selfSigned('other.example.com')),
    ]);
    await withHaproxy(rendered, async () => {
      const { https } = rendered.ports;
      const owned = await servedCertificate(https, 'shop.example.com');
      const others = await servedCertificate(https, 'other.example.com');
      expect(owned.fingerprint256).not.toBe(others.fingerprint256);
      expect((await servedCertificate(https, 'SHOP.Example.COM')).fingerprint256).toBe(owned.fingerprint256);
      expect((await servedCertificate(https, 'shop.example.com.')).fingerprint256).not.toBe(others.fingerprint256);
      const reply = await send({ port: https, host: 'SHOP.example.com.', servername: 'shop.example.com', tls: true });
      expect(reply.echo?.name).toBe('shop');
    });
  });

  it("keeps a rejected owner's host (503) and TLS host from a newer claim of another namespace until the Ingress is fixed", async () => {
    const [shop, evil] = await Promise.all([echoes.start('shop', '127.0.0.2'), echoes.start('evil', '127.0.0.3')]);
    const shopIngress = (annotations: Record<string, string>): KubeObject =>
      ingress('shop', 'web', { rules: [rule('shop.example.test', { path: '/', service: 'web' })] }, { ...OLD, annotations });
    const others = [
      ...backedBy('shop', 'web', shop),
      ingress('evil', 'grab', { tls: [{ hosts: ['shop.example.test'], secretName: 'tls' }], rules: [rule('shop.example.test', { path: '/', service: 'web' })] }, NEW),
      ...backedBy('evil', 'web', evil),
      tlsSecret('evil', 'tls'),
    ];
    // A typo in a security annotation rejects the owner's Ingress.
    const rejected = await render([shopIngress({ 'haproxy.org/allow-list': '10.0.0.300' }), ...others]);
    expect(rejected.result.rejections).toEqual([expect.objectContaining({ kind: 'Ingress', namespace: 'shop', name: 'web', scope: 'annotation' })]);
    expect(rejected.result.warnings).toEqual(
      expect.arrayContaining([
        'Ingress evil/grab: route shop.example.test/ is refused: host shop.example.test belongs to namespace shop (Ingress shop/web claimed it first); ignored',
        'Ingress evil/grab: TLS host shop.example.test belongs to namespace shop; ignored',
      ]),
    );
    expect(rejected.result.auxiliaryFiles.certificates['evil_tls.pem']).toBeUndefined();
    await withHaproxy(rejected, async () => {
      const { http, https } = rejected.ports;
      const reply = await send({ port: http, host: 'shop.example.test', path: '/login' });
      expect(reply.status).toBe(503);
      expect(reply.echo).toBeUndefined();
      // Over HTTPS the default certificate answers, never evil's.
      expect((await servedCertificate(https, 'shop.example.test')).subject).not.toContain('example');
      expect((await send({ port: https, host: 'shop.example.test', tls: true })).status).toBe(503);
    });
    const fixed = await render([shopIngress({ 'haproxy.org/allow-list': '10.0.0.0/8, 127.0.0.0/8' }), ...others]);
    await withHaproxy(fixed, async () => {
      expect(await who(fixed.ports.http, 'shop.example.test', '/login')).toBe('shop');
    });
  });
});

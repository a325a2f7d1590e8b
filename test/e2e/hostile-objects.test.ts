// Hostile tenants against a real HAProxy 2.6: objects that used to pass our validator and then make
// `haproxy -c` refuse everyone's config (a mismatched certificate and key, a fake PEM body,
// certificates OpenSSL finds too weak, an IPv6 endpoint with a zone ID) are rejected alone, and the
// config HAProxy gets is valid and serves the good app; the 16 KB path that split HAProxy's map
// line buffer cannot take shop.example.com; an endpoint on HAProxy's own status port is refused.
// A second pass: a newer namespace can take no path, certificate or wildcard-covered host of
// another's; words and numeric external names that failed everyone's render are rejected alone;
// external names cannot reach loopback, metadata or HAProxy's own ports; a small Ingress cannot
// blow the output past its cap for everyone; a Secret name too long for a file name cannot stop the
// output from being written, nor can a certificate for a thousand hosts outgrow a crt-list line;
// health-checked server slots cannot take the descriptors HAProxy needs to start.
// With CI=true these tests always run (and fail when HAProxy is missing).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/main/haproxy/haproxy-check.js';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { CheckedPipelineResult } from '../../src/main/pipeline/pipeline.js';
import { outputPathsIn, writeRenderOutput, type OutputFiles } from '../../src/main/output/render-output.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, exampleTlsData, ingress, rule, service, storeNameFor, tlsSecret } from '../helpers/cluster.js';
import { servedCertificate } from '../helpers/e2e-client.js';
import { freePorts, SKIP_HAPROXY, skipNotice, startHaproxy } from '../helpers/haproxy-harness.js';
import { RSA_1024_CERT, RSA_1024_KEY, SHA1_SIGNED_CERT, SHA1_SIGNED_KEY } from '../worker/store/tls-fixtures.js';

skipNotice('test/e2e/hostile-objects.test.ts');

let root: string;
const servers: Server[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hostile-'));
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/** A backend on 127.0.0.1 that answers every request with `name`. */
async function echo(name: string): Promise<number> {
  const server = createServer((_req, res) => res.end(name));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** GET http://127.0.0.1:<port><path> with a Host header. */
function get(port: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** One tenant: an Ingress for `host`, its Service, its endpoints (`ip:port` each) and optional TLS. */
function tenant(ns: string, host: string, endpoints: string[], tlsData?: Record<string, string>, path = '/'): KubeObject[] {
  const ports = [...new Set(endpoints.map((e) => Number(e.slice(e.lastIndexOf(':') + 1))))];
  return [
    ingress(ns, 'web', { ...(tlsData === undefined ? {} : { tls: [{ hosts: [host], secretName: 'tls' }] }), rules: [rule(host, { path, pathType: path === '/' ? 'Prefix' : 'Exact', service: 'web' })] }),
    service(ns, 'web'),
    ...ports.map((port, i) => ({
      ...endpointSlice(ns, 'web', endpoints.filter((e) => e.endsWith(`:${port}`)).map((e) => e.slice(0, e.lastIndexOf(':'))), { name: 'http', port }, `web-${i}`),
      addressType: endpoints.some((e) => e.includes('::')) ? 'IPv6' : 'IPv4',
    })),
    ...(tlsData === undefined ? [] : [tlsSecret(ns, 'tls', tlsData)]),
  ];
}

interface Rendered {
  readonly dirs: OutputFiles;
  readonly result: CheckedPipelineResult;
  readonly ports: { http: number; https: number; status: number };
}

let renders = 0;

async function renderAndWrite(build: (ports: Rendered['ports']) => KubeObject[], values: Record<string, unknown> = {}): Promise<Rendered> {
  const dirs = outputPathsIn(join(root, `out-${++renders}`));
  const [http, https, status] = (await freePorts(3)) as [number, number, number];
  const ports = { http, https, status };
  const set = await loadTemplateSet(undefined, {
    mapsDir: dirs.mapsDir,
    filesDir: dirs.filesDir,
    certsDir: dirs.certsDir,
    bindAddress: '127.0.0.1',
    httpPort: http,
    httpsPort: https,
    statusPort: status,
    allowLoopbackEndpoints: true,
    ...values,
  });
  const stores = new StoreProvider(set.stores);
  for (const object of build(ports)) stores.store(storeNameFor(object, set.stores)).upsert(object);
  const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
  await writeRenderOutput(dirs, result.haproxyConfig, result.auxiliaryFiles);
  return { dirs, result, ports };
}

const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
const NEW = { creationTimestamp: '2025-01-01T00:00:00Z' };

/** A Service `ns/name` of one port (80, named http), its endpoints on 127.0.0.1:<port>. */
function backed(ns: string, name: string, port: number): KubeObject[] {
  return [service(ns, name), endpointSlice(ns, name, ['127.0.0.1'], { name: 'http', port })];
}

/** An ExternalName Service `ns/ext` listing `port`. */
function externalName(ns: string, name: string, port = 80): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: ns }, spec: { type: 'ExternalName', externalName: name, ports: [{ name: 'http', port }] } };
}

/** An Ingress `ns/web` routing `host` / (Prefix) to `service`, on port number `port`. */
function routeTo(ns: string, host: string, serviceName: string, port = 80, annotations: Record<string, string> = {}): KubeObject {
  return ingress(ns, 'web', { rules: [rule(host, { path: '/', service: serviceName, port })] }, { annotations });
}

describe.skipIf(SKIP_HAPROXY)('hostile tenants against a real HAProxy', () => {
  it('cannot make haproxy -c refuse everyone\'s config: bad certificates and endpoints are rejected alone, and the good app is served', async () => {
    const shop = await echo('shop');
    const otherKey = b64(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    const { 'tls.crt': crt, 'tls.key': key } = exampleTlsData();
    const fakeBody = b64(`-----BEGIN CERTIFICATE-----\n${b64('not a certificate, only base64 text that looks the part')}\n-----END CERTIFICATE-----\n`);
    const { dirs, result, ports } = await renderAndWrite(({ status }) => [
      ...tenant('shop', 'shop.example.com', [`127.0.0.1:${shop}`]),
      ...tenant('secure', 'secure.example.com', ['10.0.0.1:80'], exampleTlsData()),
      ...tenant('mismatch', 'mismatch.example.com', ['10.0.0.1:80'], { 'tls.crt': crt, 'tls.key': otherKey }),
      ...tenant('fake', 'fake.example.com', ['10.0.0.1:80'], { 'tls.crt': fakeBody, 'tls.key': key }),
      ...tenant('weak', 'weak.example.com', ['10.0.0.1:80'], { 'tls.crt': b64(SHA1_SIGNED_CERT), 'tls.key': b64(SHA1_SIGNED_KEY) }),
      ...tenant('small', 'small.example.com', ['10.0.0.1:80'], { 'tls.crt': b64(RSA_1024_CERT), 'tls.key': b64(RSA_1024_KEY) }),
      ...tenant('zone', 'zone.example.com', ['fe80::1%eth0:8080', 'fd00::7:8080']),
      ...tenant('meta', 'meta.example.com', ['169.254.169.254:80']),
      ...tenant('admin', 'admin.example.com', [`127.0.0.1:${status}`]),
    ]);
    expect(result.rejections.map((r) => `${r.kind} ${r.namespace}/${r.name} ${r.scope}`).sort()).toEqual([
      'EndpointSlice admin/web-0 endpoint',
      'EndpointSlice meta/web-0 endpoint',
      'EndpointSlice zone/web-0 endpoint',
      'Secret fake/tls tls',
      'Secret mismatch/tls tls',
      'Secret small/tls tls',
      'Secret weak/tls tls',
    ]);
    expect(Object.keys(result.auxiliaryFiles.certificates)).toEqual(['secure_tls.pem']);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ body: 'shop' });
      // The status page is not reachable through a tenant's host.
      expect((await get(ports.http, 'admin.example.com')).status).toBe(503);
    } finally {
      await haproxy.stop();
    }
  });

  it('cannot take shop.example.com/ with a 16 KB path that HAProxy would split in its map', async () => {
    const shop = await echo('shop');
    const attacker = await echo('attacker');
    const path = `/${'a'.repeat(16_366)}shop.example.com/`;
    const { dirs, result, ports } = await renderAndWrite(() => [
      ...tenant('shop', 'shop.example.com', [`127.0.0.1:${shop}`], undefined, '/'),
      ...tenant('attacker', 'attacker.example.com', [`127.0.0.1:${attacker}`], undefined, path),
    ]);
    expect(result.rejections).toEqual([expect.objectContaining({ namespace: 'attacker', scope: 'path' })]);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com', '/')).toMatchObject({ status: 200, body: 'shop' });
    } finally {
      await haproxy.stop();
    }
  });
  it("cannot take a path, the certificate or a wildcard-covered host of another namespace's host", async () => {
    const shop = await echo('shop');
    const wild = await echo('wild');
    const evil = await echo('evil');
    const { dirs, result, ports } = await renderAndWrite(() => [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, OLD),
      ...backed('shop', 'web', shop),
      ingress('wild', 'web', { rules: [rule('*.wild.example.com', { path: '/', service: 'web' })] }, OLD),
      ...backed('wild', 'web', wild),
      // Newer, from another namespace: a path under shop's host and a wildcard over it, each with
      // a certificate, and a host the older wildcard serves.
      ingress(
        'evil',
        'grab',
        {
          tls: [{ hosts: ['shop.example.com', '*.example.com'], secretName: 'tls' }],
          rules: [
            rule('shop.example.com', { path: '/login', pathType: 'Exact', service: 'web' }),
            rule('*.example.com', { path: '/', service: 'web' }),
            rule('a.wild.example.com', { path: '/', service: 'web' }),
          ],
        },
        NEW,
      ),
      ...backed('evil', 'web', evil),
      tlsSecret('evil', 'tls'),
    ]);
    expect(result.warnings).toEqual(
      expect.arrayContaining([
        'Ingress evil/grab: route shop.example.com/login is refused: host shop.example.com belongs to namespace shop (Ingress shop/web claimed it first); ignored',
        'Ingress evil/grab: route a.wild.example.com/ is refused: host *.wild.example.com belongs to namespace wild (Ingress wild/web claimed it first); ignored',
        'Ingress evil/grab: route *.example.com/ is refused: host shop.example.com belongs to namespace shop (Ingress shop/web claimed it first); ignored',
        'Ingress evil/grab: TLS host shop.example.com belongs to namespace shop; ignored',
        'Ingress evil/grab: TLS host *.example.com belongs to namespace shop; ignored',
      ]),
    );
    expect(result.auxiliaryFiles.certificates).toEqual({});
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      // No redirect to HTTPS (evil's TLS host would have set one), and every path is shop's.
      expect(await get(ports.http, 'shop.example.com', '/login')).toMatchObject({ status: 200, body: 'shop' });
      expect(await get(ports.http, 'shop.example.com', '/')).toMatchObject({ status: 200, body: 'shop' });
      expect(await get(ports.http, 'a.wild.example.com', '/')).toMatchObject({ status: 200, body: 'wild' });
      expect((await get(ports.http, 'other.example.com', '/')).status).toBe(404);
      // No certificate of evil's is served for shop.example.com (strict-sni: none at all).
      await expect(servedCertificate(ports.https, 'shop.example.com')).rejects.toThrow();
    } finally {
      await haproxy.stop();
    }
  });

  it("cannot fail everyone's render with a word or a number: each such object is rejected alone", async () => {
    const shop = await echo('shop');
    const { dirs, result, ports } = await renderAndWrite(() => [
      routeTo('shop', 'shop.example.com', 'web'),
      ...backed('shop', 'web', shop),
      // HAProxy reads these by position, but the config check took each `if` / `unless` for a condition.
      routeTo('sethost', 'a.example.com', 'web', 80, { 'haproxy.org/set-host': 'if' }),
      routeTo('reqname', 'b.example.com', 'web', 80, { 'haproxy.org/request-set-header': 'if v' }),
      routeTo('reqvalue', 'c.example.com', 'web', 80, { 'haproxy.org/response-set-header': 'X-A unless' }),
      routeTo('cors', 'd.example.com', 'web', 80, { 'haproxy.org/cors-enable': 'true', 'haproxy.org/cors-allow-headers': 'unless' }),
      // Numbers the config check refused as IPv4 addresses, for the whole render.
      routeTo('decimal', 'e.example.com', 'ext'),
      externalName('decimal', '2130706433'),
      routeTo('short', 'f.example.com', 'ext'),
      externalName('short', '127.1'),
      routeTo('five', 'g.example.com', 'ext'),
      externalName('five', '1.2.3.4.5'),
    ]);
    expect(result.rejections.map((r) => `${r.kind} ${r.namespace} ${r.scope}`).sort()).toEqual([
      'Ingress cors annotation',
      'Ingress reqname annotation',
      'Ingress reqvalue annotation',
      'Ingress sethost annotation',
      'Service decimal endpoint',
      'Service five endpoint',
      'Service short endpoint',
    ]);
    expect(result.rejections.find((r) => r.namespace === 'sethost')?.reason).toContain('a word that opens a condition on a rule line');
    expect(result.rejections.find((r) => r.namespace === 'decimal')?.reason).toBe('spec.externalName "2130706433" reads as an IPv4 address, not a name; write the address as a.b.c.d');
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
    } finally {
      await haproxy.stop();
    }
  });

  it("cannot point an external name at loopback in another spelling, at cloud metadata, or at HAProxy's own ports", async () => {
    const [statsPort] = (await freePorts(1)) as [number];
    const { dirs, result, ports } = await renderAndWrite(
      ({ status }) => [
        routeTo('hex', 'hex.example.com', 'ext'),
        externalName('hex', '0x7f000001'),
        routeTo('meta', 'meta.example.com', 'ext'),
        externalName('meta', '0xa9.0xfe.0xa9.0xfe'),
        routeTo('gcp', 'gcp.example.com', 'ext'),
        externalName('gcp', 'metadata.google.internal'),
        // The Service lists port 9999, the Ingress uses HAProxy's status port.
        routeTo('status', 'status.example.com', 'ext', status),
        externalName('status', '127.0.0.1', 9999),
        // An endpoint on the stats page's port.
        routeTo('stats', 'stats.example.com', 'web'),
        ...backed('stats', 'web', statsPort),
      ],
      { stats: `127.0.0.1:${statsPort}`, externalNameServices: true },
    );
    expect(result.rejections.map((r) => `${r.kind} ${r.namespace} ${r.scope}`).sort()).toEqual([
      'EndpointSlice stats endpoint',
      'Service gcp endpoint',
      'Service hex endpoint',
      'Service meta endpoint',
    ]);
    expect(result.warnings).toContain(
      `Ingress status/web: service status/ext: externalName "127.0.0.1" on port ${ports.status} is HAProxy's own host on HAProxy's own port ${ports.status}; its backend has no servers`,
    );
    expect(result.haproxyConfig).not.toMatch(/server srv\d+ (0x|127\.0\.0\.1:(\d+) resolvers|metadata)/);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect((await get(ports.http, 'status.example.com', '/healthz')).status).toBe(503);
      expect((await get(ports.http, 'stats.example.com', '/stats')).status).toBe(503);
    } finally {
      await haproxy.stop();
    }
  });

  it("cannot blow the output past values.maxOutputBytes for everyone with a few small Ingresses", async () => {
    const shop = await echo('shop');
    // One Service of 100 ports with 100 endpoints, and Ingresses of 100 paths (one per port):
    // each Ingress a few KB, each rendering 100 backends of 100 server slots.
    const servicePorts = Array.from({ length: 100 }, (_, i) => ({ name: `p${i}`, port: 1000 + i }));
    const big: KubeObject[] = [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'many', namespace: 'evil' }, spec: { ports: servicePorts } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'many-1', namespace: 'evil', labels: { 'kubernetes.io/service-name': 'many' } },
        addressType: 'IPv4',
        ports: servicePorts,
        endpoints: Array.from({ length: 100 }, (_, i) => ({ addresses: [`10.1.0.${i + 1}`] })),
      },
      ...Array.from({ length: 3 }, (_, n) =>
        ingress('evil', `fan-${n}`, {
          rules: [{ host: `fan-${n}.example.com`, http: { paths: servicePorts.map((p, i) => ({ path: `/p${i}`, pathType: 'Prefix', backend: { service: { name: 'many', port: { number: p.port } } } })) } }],
        }),
      ),
    ];
    const { dirs, result, ports } = await renderAndWrite(() => [routeTo('shop', 'shop.example.com', 'web'), ...backed('shop', 'web', shop), ...big], { maxOutputBytes: 1_048_576 });
    const notServed = result.warnings.filter((w) => w.includes('for one Ingress (values.maxOutputBytes / 16); it is not served'));
    expect(notServed.map((w) => w.slice(0, w.indexOf(':')))).toEqual(['Ingress evil/fan-0', 'Ingress evil/fan-1', 'Ingress evil/fan-2']);
    expect(result.haproxyConfig).not.toContain('ing_evil_fan');
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
    } finally {
      await haproxy.stop();
    }
  });
  it("cannot stop everyone's output from being written with a Secret name too long for a file name", async () => {
    const shop = await echo('shop');
    // 253 characters, a valid Secret name: its certificate file <namespace>_<secret>.pem would be over 255.
    const secretName = [63, 63, 63, 61].map((n) => 's'.repeat(n)).join('.');
    const { dirs, result, ports } = await renderAndWrite(() => [
      routeTo('shop', 'shop.example.com', 'web'),
      ...backed('shop', 'web', shop),
      ingress('longname', 'web', { tls: [{ hosts: ['long.example.com'], secretName }], rules: [rule('long.example.com', { path: '/', service: 'web' })] }),
      ...backed('longname', 'web', shop),
      tlsSecret('longname', secretName),
    ]);
    expect(result.rejections).toEqual([
      expect.objectContaining({ namespace: 'longname', scope: 'tls', reason: expect.stringContaining('its certificate file name would be over 255 characters') }),
    ]);
    expect(Object.keys(result.auxiliaryFiles.certificates)).toEqual([]);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
      expect(await get(ports.http, 'long.example.com')).toMatchObject({ status: 200, body: 'shop' });
    } finally {
      await haproxy.stop();
    }
  });
  it("cannot fail everyone's render with one certificate for a thousand hosts", async () => {
    const shop = await echo('shop');
    const hosts = Array.from({ length: 1000 }, (_, i) => `host-${i}.many.example.com`);
    const { dirs, result, ports } = await renderAndWrite(() => [
      routeTo('shop', 'shop.example.com', 'web'),
      ...backed('shop', 'web', shop),
      ingress('many', 'web', { tls: [{ hosts, secretName: 'tls' }], rules: hosts.map((host) => rule(host, { path: '/', service: 'web' })) }),
      ...backed('many', 'web', shop),
      tlsSecret('many', 'tls'),
    ]);
    const crtList = result.auxiliaryFiles.files['crt-list.txt'] as string;
    expect(Math.max(...crtList.split('\n').map((line) => line.length))).toBeLessThan(15_360);
    expect(crtList.split('\n').filter((line) => line.startsWith(`${dirs.certsDir}/many_tls.pem `))).toHaveLength(32);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
      expect((await servedCertificate(ports.https, 'host-999.many.example.com')).subject).toContain('CN=shop.example.com');
    } finally {
      await haproxy.stop();
    }
  });
  it('serves every backend whose Services turn health checks off, since their slots hold no descriptor', async () => {
    const shop = await echo('shop');
    const fan = await echo('fan');
    const unchecked = { 'haproxy.org/check': 'false' };
    const paths = Array.from({ length: 250 }, (_, i) => ({ path: `/p${i}`, pathType: 'Prefix', backend: { service: { name: `s${i}`, port: { number: 80 } } } }));
    const withoutChecks = (objects: KubeObject[]): KubeObject[] =>
      objects.map((o) => (o.kind === 'Service' ? { ...o, metadata: { ...o.metadata, annotations: unchecked } } : o));
    const { dirs, result, ports } = await renderAndWrite(
      () => [
        routeTo('shop', 'shop.example.com', 'web'),
        ...backed('shop', 'web', shop),
        ...[0, 1].map((n) => ingress('evil', `fan-${n}`, { rules: [{ host: `fan-${n}.example.com`, http: { paths } }] })),
        ...withoutChecks(Array.from({ length: 250 }, (_, i) => (i === 1 ? backed('evil', 's1', fan) : [service('evil', `s${i}`)])).flat()),
      ],
      { fdHardLimit: 4000 },
    );
    expect(result.warnings.filter((w) => w.includes('its backends get no servers'))).toEqual([]);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
      expect(await get(ports.http, 'fan-0.example.com', '/p1')).toMatchObject({ status: 200, body: 'fan' });
    } finally {
      await haproxy.stop();
    }
  });

  it('cannot keep HAProxy from starting by filling its descriptors with health-checked server slots', async () => {
    const shop = await echo('shop');
    // Backends of Services that do not exist still get a block of (checked, empty) server slots:
    // 500 of them hold 5,000 descriptors, more than an fd-hard-limit of 4,000 leaves HAProxy.
    const paths = Array.from({ length: 250 }, (_, i) => ({ path: `/p${i}`, pathType: 'Prefix', backend: { service: { name: `s${i}`, port: { number: 80 } } } }));
    const { dirs, result, ports } = await renderAndWrite(
      () => [
        routeTo('shop', 'shop.example.com', 'web'),
        ...backed('shop', 'web', shop),
        ...[0, 1].map((n) => ingress('evil', `fan-${n}`, { rules: [{ host: `fan-${n}.example.com`, http: { paths } }] })),
      ],
      { fdHardLimit: 4000 },
    );
    expect(result.warnings.filter((w) => w.includes('its backends get no servers')).map((w) => w.slice(0, w.indexOf(':')))).toEqual(['Ingress evil/fan-1', 'Ingress evil/fan-0']);
    expect((result.haproxyConfig.match(/^ {2}server /gm) ?? []).length).toBe(10);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
      expect((await get(ports.http, 'fan-0.example.com', '/p1')).status).toBe(503);
    } finally {
      await haproxy.stop();
    }
  });
});

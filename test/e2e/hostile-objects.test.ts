// Hostile tenants against a real HAProxy 2.6: objects that used to pass our validator and then make
// `haproxy -c` refuse everyone's config (a mismatched certificate and key, a fake PEM body,
// certificates OpenSSL finds too weak, an IPv6 endpoint with a zone ID) are rejected alone, and the
// config HAProxy gets is valid and serves the good app; the 16 KB path that split HAProxy's map
// line buffer cannot take shop.example.com; an endpoint on HAProxy's own status port is refused.
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
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import { outputPathsIn, writeRenderOutput, type OutputFiles } from '../../src/main/output/render-output.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, exampleTlsData, ingress, rule, service, storeNameFor, tlsSecret } from '../helpers/cluster.js';
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
  readonly result: PipelineResult;
  readonly ports: { http: number; https: number; status: number };
}

async function renderAndWrite(build: (ports: Rendered['ports']) => KubeObject[]): Promise<Rendered> {
  const dirs = outputPathsIn(join(root, `out-${servers.length}-${Date.now()}`));
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
  });
  const stores = new StoreProvider(set.stores);
  for (const object of build(ports)) stores.store(storeNameFor(object, set.stores)).upsert(object);
  const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
  await writeRenderOutput(dirs, result.haproxyConfig, result.auxiliaryFiles);
  return { dirs, result, ports };
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
});

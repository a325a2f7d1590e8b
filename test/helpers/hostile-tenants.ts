// Hostile tenants rendered for a real HAProxy: each test builds a cluster of good and hostile
// objects, renders it with the default template set on free ports and writes the output, so the
// test can run `haproxy -c` on it, start HAProxy and send requests through it to echo backends.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { CheckedPipelineResult } from '../../src/main/pipeline/pipeline.js';
import { outputPathsIn, writeRenderOutput, type OutputFiles } from '../../src/main/output/render-output.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service, storeNameFor, tlsSecret } from './cluster.js';
import { freePorts } from './haproxy-harness.js';

/** GET http://127.0.0.1:<port><path> with a Host header. */
export function get(port: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
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

export const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** One tenant: an Ingress for `host`, its Service, its endpoints (`ip:port` each) and optional TLS. */
export function tenant(ns: string, host: string, endpoints: string[], tlsData?: Record<string, string>, path = '/'): KubeObject[] {
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

export interface Rendered {
  readonly dirs: OutputFiles;
  readonly result: CheckedPipelineResult;
  readonly ports: { http: number; https: number; status: number };
}

export const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
export const NEW = { creationTimestamp: '2025-01-01T00:00:00Z' };

/** A Service `ns/name` of one port (80, named http), its endpoints on 127.0.0.1:<port>. */
export function backed(ns: string, name: string, port: number): KubeObject[] {
  return [service(ns, name), endpointSlice(ns, name, ['127.0.0.1'], { name: 'http', port })];
}

/** An ExternalName Service `ns/ext` listing `port`. */
export function externalName(ns: string, name: string, port = 80): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: ns }, spec: { type: 'ExternalName', externalName: name, ports: [{ name: 'http', port }] } };
}

/** An Ingress `ns/web` routing `host` / (Prefix) to `service`, on port number `port`. */
export function routeTo(ns: string, host: string, serviceName: string, port = 80, annotations: Record<string, string> = {}): KubeObject {
  return ingress(ns, 'web', { rules: [rule(host, { path: '/', service: serviceName, port })] }, { annotations });
}

export interface HostileRender {
  /** A backend on 127.0.0.1 that answers every request with `name`; returns its port. */
  echo(name: string): Promise<number>;
  /** Renders `build`'s objects on three free ports (http, https, status) and writes the output. */
  renderAndWrite(build: (ports: Rendered['ports']) => KubeObject[], values?: Record<string, unknown>): Promise<Rendered>;
}

/** Registers a scratch folder for the file's renders and closes its echo backends after it. */
export function useHostileRender(): HostileRender {
  let root: string;
  const servers: Server[] = [];
  let renders = 0;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'hostile-'));
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  async function echo(name: string): Promise<number> {
    const server = createServer((_req, res) => res.end(name));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

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

  return { echo, renderAndWrite };
}

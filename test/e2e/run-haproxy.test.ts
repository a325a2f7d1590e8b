// `haptic-reconciler run --manifests DIR --haproxy` end to end: the real CLI starts and supervises a
// real HAProxy on loopback ports, with echo backends as pods. Requests are routed by Host and
// path; an EndpointSlice edit moves traffic through the Runtime API with no reload (same worker
// PID and reload count in `show proc`); a new Ingress needs one reload; a burst of edits is paced
// into few reloads; a render HAProxy refuses, or a reload that fails, leaves the old config
// serving; a SIGKILLed HAProxy comes back; SIGTERM stops everything.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MasterCli } from '../../src/main/haproxy/master-cli.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { extendedTemplateSet } from '../helpers/e2e-templates.js';
import { eventually } from '../helpers/eventually.js';
import { killWithHaproxy, whenServing } from '../helpers/run-haproxy.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/run-haproxy.test.ts');

let dir: string;
let templates: string;
let manifests: string;
let out: string;
let controller: CliProcess;
let master: MasterCli;
let metrics: string;
let httpPort: number;
let httpsPort: number;
const fleet = new EchoFleet();
const backends: Record<string, EchoServer> = {};

function configMap(name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'shop' }, data };
}

function service(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } };
}

function slice(name: string, serviceName: string, servers: readonly EchoServer[]): KubeObject {
  const port = servers[0]?.port ?? 1;
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'shop', labels: { 'kubernetes.io/service-name': serviceName } },
    addressType: 'IPv4',
    // One port per slice, so every endpoint of a slice listens on it: each echo server gets its own slice.
    ports: [{ name: 'http', port, protocol: 'TCP' }],
    endpoints: servers.map((s) => ({ addresses: [s.host], conditions: { ready: true } })),
  };
}

function ingress(name: string, host: string, paths: [string, string][]): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'shop' },
    spec: {
      ingressClassName: 'haproxy',
      rules: [{ host, http: { paths: paths.map(([path, svc]) => ({ path, pathType: 'Prefix', backend: { service: { name: svc, port: { number: 80 } } } })) } }],
    },
  };
}

const write = (file: string, ...objects: KubeObject[]): Promise<void> => writeFile(join(manifests, file), objects.map((o) => stringify(o)).join('---\n'));
const get = (host: string, path = '/') => send({ port: httpPort, host, path, timeoutMs: 2000 });
const served = async (host: string, path = '/'): Promise<string | undefined> => (await get(host, path).catch(() => undefined))?.echo?.name;
/** `show proc`, retried while the master re-executes during a reload (its socket refuses meanwhile). */
const proc = () => eventually(() => master.showProc(), 'show proc on the master socket', 10_000);
const metric = async (name: string): Promise<number> => {
  const text = await (await fetch(`http://${metrics}/metrics`)).text();
  return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
};

describe.skipIf(SKIP_HAPROXY)('run --manifests --haproxy', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-haproxy-'));
    manifests = join(dir, 'manifests');
    templates = join(dir, 'templates.yaml');
    out = join(dir, 'out');
    await mkdir(manifests);
    for (const name of ['web-1', 'web-2', 'web-3', 'api-1']) backends[name] = await fleet.start(name);
    let statusPort: number;
    [httpPort, httpsPort, statusPort] = (await freePorts(3)) as [number, number, number];
    await write('shop.yaml', service('web'), service('api'), ingress('shop', 'shop.test', [['/', 'web'], ['/api', 'api']]));
    await writeFile(templates, await extendedTemplateSet());
    await write('slices.yaml', slice('web-a', 'web', [backends['web-1'] as EchoServer]), slice('api-a', 'api', [backends['api-1'] as EchoServer]));
    controller = startCli([
      'run', '--manifests', manifests, '--out', out, '--haproxy', '--metrics-addr', '127.0.0.1:0', '--threads', '1', '--templates', templates,
      '--min-deployment-interval', '1500',
      '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${httpPort}`, '--set', `httpsPort=${httpsPort}`, '--set', `statusPort=${statusPort}`,
      '--set', 'allowLoopbackEndpoints=true',
    ]);
    ({ metrics, master } = await whenServing(controller, out));
  }, 120_000);

  afterAll(async () => {
    await killWithHaproxy(controller, master);
    await fleet.stopAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('routes each Host and path to its backend, and answers 404 where nothing matches', async () => {
    expect(await served('shop.test', '/')).toBe('web-1');
    expect(await served('shop.test', '/api/orders')).toBe('api-1');
    expect((await get('nobody.test', '/')).status).toBe(404);
  });

  it('moves traffic on an EndpointSlice edit through the Runtime API, without a reload, well under a second', async () => {
    const before = await proc();
    const edited = Date.now();
    await write('slices.yaml', slice('web-a', 'web', [backends['web-2'] as EchoServer]), slice('api-a', 'api', [backends['api-1'] as EchoServer]));
    await eventually(async () => (await served('shop.test', '/')) === 'web-2', 'traffic on web-2', 10_000, 10);
    const tookMs = Date.now() - edited;
    const after = await proc();
    expect(after.master.reloads).toBe(before.master.reloads);
    expect(after.workers.map((w) => w.pid)).toEqual(before.workers.map((w) => w.pid));
    expect(tookMs).toBeLessThan(1000);
    await eventually(async () => (await metric('haptic_deployments_total{kind="runtime",outcome="success"}')) >= 1, 'a runtime deployment counted');
  });

  it('balances in a second EndpointSlice of the same Service', async () => {
    await write(
      'slices.yaml',
      slice('web-a', 'web', [backends['web-2'] as EchoServer]),
      slice('web-b', 'web', [backends['web-3'] as EchoServer]),
      slice('api-a', 'api', [backends['api-1'] as EchoServer]),
    );
    await eventually(async () => {
      const seen = new Set<string | undefined>();
      for (let i = 0; i < 8; i++) seen.add(await served('shop.test', '/'));
      return seen.has('web-2') && seen.has('web-3');
    }, 'both slices serving', 10_000);
  });

  it('writes the files of an endpoint change applied at runtime, and a reload after it keeps serving the new endpoint', async () => {
    const [web1, web2, web3] = [backends['web-1'], backends['web-2'], backends['web-3']] as [EchoServer, EchoServer, EchoServer];
    const before = await proc();
    await write('slices.yaml', slice('web-a', 'web', [web1]), slice('web-b', 'web', [web1]), slice('api-a', 'api', [backends['api-1'] as EchoServer]));
    await eventually(async () => (await served('shop.test', '/')) === 'web-1' && (await served('shop.test', '/')) === 'web-1', 'traffic on web-1 alone', 10_000, 10);
    expect((await proc()).master.reloads).toBe(before.master.reloads);
    // The files say what HAProxy serves: a restart or a reload would load the same endpoints.
    const names = (text: string, server: EchoServer): boolean => new RegExp(`:${server.port}\\b`).test(text);
    await eventually(async () => {
      const config = await readFile(join(out, 'haproxy.cfg'), 'utf8');
      return names(config, web1) && !names(config, web2) && !names(config, web3);
    }, 'haproxy.cfg naming web-1 only', 10_000, 10);
    // A reload (a new Ingress) loads those files: shop.test stays on web-1.
    await write('reload.yaml', service('other'), slice('other-a', 'other', [backends['api-1'] as EchoServer]), ingress('other', 'other.test', [['/', 'other']]));
    await eventually(async () => (await served('other.test', '/')) === 'api-1', 'the reload done', 20_000);
    expect((await proc()).master.reloads).toBe(before.master.reloads + 1);
    for (let i = 0; i < 6; i++) expect(await served('shop.test', '/')).toBe('web-1');
    await write('slices.yaml', slice('web-a', 'web', [web2]), slice('web-b', 'web', [web3]), slice('api-a', 'api', [backends['api-1'] as EchoServer]));
    await eventually(async () => (await served('shop.test', '/')) !== 'web-1', 'traffic back on web-2 and web-3', 10_000, 10);
  });

  it('routes a new Ingress after exactly one reload', async () => {
    const before = await proc();
    await write('blog.yaml', service('blog'), slice('blog-a', 'blog', [backends['api-1'] as EchoServer]), ingress('blog', 'blog.test', [['/', 'blog']]));
    await eventually(async () => (await served('blog.test', '/')) === 'api-1', 'the new Ingress routed', 20_000);
    const after = await proc();
    expect(after.master.reloads).toBe(before.master.reloads + 1);
  });

  it('paces a burst of structural edits into few reloads', async () => {
    const before = await proc();
    // Ten structural edits, each a new host, written one after another as fast as the disk allows.
    for (let i = 0; i < 10; i++) {
      await write('burst.yaml', service('burst'), slice('burst-a', 'burst', [backends['web-1'] as EchoServer]), ingress('burst', `burst-${i}.test`, [['/', 'burst']]));
    }
    await eventually(async () => (await served('burst-9.test', '/')) === 'web-1', 'the last edit served', 20_000);
    const reloads = (await proc()).master.reloads - before.master.reloads;
    expect(reloads).toBeGreaterThanOrEqual(1);
    expect(reloads).toBeLessThanOrEqual(3);
  });

  it('never reloads a render HAProxy refuses, and keeps the old config serving', async () => {
    const before = await proc();
    const refusedBefore = await metric('haptic_rendergate_verdicts_total{verdict="refused"}');
    const [port] = (await freePorts(1)) as [number];
    await write('extra.yaml', configMap('extra-refused', { port: String(port), fetch: 'no_such_fetch' }));
    await eventually(async () => (await metric('haptic_rendergate_verdicts_total{verdict="refused"}')) > refusedBefore, 'the gate refusing the render', 30_000);
    const after = await proc();
    expect(after.master.reloads).toBe(before.master.reloads);
    expect(['web-2', 'web-3']).toContain(await served('shop.test', '/'));
    await write('extra.yaml');
  });

  it('leaves the old config serving when a reload fails on a port already taken', async () => {
    const [port] = (await freePorts(1)) as [number];
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', () => resolve()));
    try {
      const before = await proc();
      const failuresBefore = await metric('haptic_deployments_total{kind="reload",outcome="failure"}');
      await write('extra.yaml', configMap('extra-taken', { port: String(port), fetch: 'src' }));
      await eventually(async () => (await metric('haptic_deployments_total{kind="reload",outcome="failure"}')) > failuresBefore, 'a failed reload', 30_000);
      const after = await proc();
      expect(after.workers.map((w) => w.pid)).toContain(before.workers[0]?.pid);
      expect(['web-2', 'web-3']).toContain(await served('shop.test', '/'));
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    await write('extra.yaml');
  });

  it('brings HAProxy back after it is killed with SIGKILL, and counts the restart', async () => {
    const { master: m } = await proc();
    process.kill(m.pid, 'SIGKILL');
    for (const w of (await proc().catch(() => ({ workers: [] as { pid: number }[] }))).workers) process.kill(w.pid, 'SIGKILL');
    await eventually(async () => (await proc().catch(() => undefined))?.master.pid !== m.pid && (await served('shop.test', '/')) !== undefined, 'HAProxy serving again', 30_000);
    expect(await metric('haptic_haproxy_restarts_total')).toBeGreaterThanOrEqual(1);
  });

  it('stops everything on SIGTERM within 10 s', async () => {
    const { master: m } = await proc();
    const { code, ms } = await controller.stop('SIGTERM');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(() => process.kill(m.pid, 0)).toThrow();
    await expect(get('shop.test', '/')).rejects.toThrow();
  });
});

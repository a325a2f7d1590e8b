// Faults injected into the real controller (`run --haproxy`, a child process driving a real
// HAProxy) during a flood of changes: HAProxy SIGKILLed (a worker, then a master), reloads that
// fail on a port another program holds until it lets go, and source watches dropped, failed with
// 500s and compacted. A flood rewrites the objects every few milliseconds for a few seconds; its
// last write is the final version. Each test ends once the controller has converged: --out holds
// exactly a fresh render of the final objects, and a real request through HAProxy reaches the
// echo backend only the final version routes to. (Faults inside the engine: faults.test.ts.)
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { stringify } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadControllerTemplateSet } from '../../src/main/controller/controller.js';
import { MasterCli } from '../../src/main/haproxy/master-cli.js';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import { loadManifests } from '../../src/main/sources/manifest/manifest-loader.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { DEFAULT_TEMPLATE_SET_PATH } from '../../src/main/template-set/template-set.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { endpointSlice, ingress, rule, service, storeNameFor } from '../helpers/cluster.js';
import { send, type Reply } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { extendedTemplateSet, extraListener } from '../helpers/e2e-templates.js';
import { eventually } from '../helpers/eventually.js';
import { FakeKubeApi } from '../helpers/fake-kube-api.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/controller-faults.test.ts');

const NS = 'shop';
const HOST = 'flood.test';
/** The Services flood versions route to, by turns (see floodIngress). */
const FLOODED = ['flood-a', 'flood-b'] as const;

/** The flood's version `i`: HOST and a host of its own, both to one of FLOODED (a pair of versions each). */
function floodIngress(i: number): KubeObject {
  const target = FLOODED[Math.floor(i / 2) % 2] as string;
  // Within a pair only the version's own host changes (a map edit, applied at runtime); between
  // pairs the backend changes too (a reload).
  return ingress(NS, 'flood', { ingressClassName: 'haproxy', rules: [rule(HOST, { path: '/', service: target }), rule(`v${i}.${HOST}`, { path: '/', service: target })] });
}

/** The final version: HOST and `<tag>.HOST` to the Service `tag`, which no flood version names. */
function finalIngress(tag: string): KubeObject {
  return ingress(NS, 'flood', { ingressClassName: 'haproxy', rules: [rule(HOST, { path: '/', service: tag }), rule(`${tag}.${HOST}`, { path: '/', service: tag })] });
}

/** A Service with one ready endpoint: the echo server of the same name. */
function backend(echo: EchoServer): KubeObject[] {
  return [service(NS, echo.name), endpointSlice(NS, echo.name, [{ address: echo.host, ready: true }], { name: 'http', port: echo.port })];
}

interface Flood {
  /** Versions written so far; the next one written is version `written`. */
  readonly written: number;
  /** Ends the flood after the write in progress; resolves with the last version written. */
  stop(): Promise<number>;
}

/** Floods started by the test running; a failed test leaves none running (afterEach). */
const floods: Flood[] = [];

/**
 * Writes version 0, 1, 2, ... one every `everyMs` (the pace of the flood, not a wait for the
 * controller) until stopped. A write that throws fails `stop()`.
 */
function startFlood(write: (version: number) => unknown, everyMs: number): Flood {
  let stopped = false;
  let written = 0;
  const running = (async () => {
    while (!stopped) {
      await write(written);
      written++;
      await delay(everyMs);
    }
  })();
  const flood: Flood = {
    get written() {
      return written;
    },
    async stop() {
      stopped = true;
      await running;
      return written - 1;
    },
  };
  floods.push(flood);
  return flood;
}

interface Controller {
  readonly cli: CliProcess;
  readonly out: string;
  readonly httpPort: number;
  readonly metrics: string;
  readonly master: MasterCli;
  /** `--set` pairs it runs with: a fresh render takes the same. */
  readonly set: readonly string[];
  readonly templates: string;
}

/**
 * Starts `run --haproxy` on `source` and waits until HAProxy serves its first render. Drift
 * prevention is pushed far out: a forced redeploy must not be what makes a test converge.
 */
async function startController(source: readonly string[], out: string, templates: string): Promise<Controller> {
  const [httpPort, httpsPort, statusPort] = (await freePorts(3)) as [number, number, number];
  const set = ['bindAddress=127.0.0.1', `httpPort=${httpPort}`, `httpsPort=${httpsPort}`, `statusPort=${statusPort}`, 'allowLoopbackEndpoints=true'];
  const cli = startCli([
    'run', ...source, '--out', out, '--haproxy', '--templates', templates, '--metrics-addr', '127.0.0.1:0', '--threads', '1',
    '--min-deployment-interval', '300', '--drift-interval', '600000',
    ...set.flatMap((pair) => ['--set', pair]),
  ]);
  const metrics = await eventually(() => /"metrics":"(127\.0\.0\.1:\d+)"/.exec(cli.output())?.[1], 'the metrics address', 60_000);
  await eventually(async () => (await fetch(`http://${metrics}/readyz`)).status === 200, '/readyz once HAProxy serves the first config', 60_000);
  return { cli, out, httpPort, metrics, master: new MasterCli({ socketPath: join(out, 'run', 'master.sock') }), set, templates };
}

async function stopController(controller: Controller | undefined): Promise<void> {
  if (controller === undefined) return;
  await controller.cli.stop('SIGTERM');
  // Should the controller have left its HAProxy behind, stop it through its master socket.
  await controller.master.showProc().then(({ master }) => process.kill(master.pid, 'SIGTERM')).catch(() => undefined);
}

const metric = async (c: Controller, name: string): Promise<number> => {
  const text = await (await fetch(`http://${c.metrics}/metrics`)).text();
  return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
};

const RECONCILED = 'haptic_reconciliations_total{outcome="success"}';
const RELOAD_FAILED = 'haptic_deployments_total{kind="reload",outcome="failure"}';
const RELOADED = 'haptic_deployments_total{kind="reload",outcome="success"}';

/** Waits, while the flood goes on, until the controller has rendered `count` more of its versions. */
async function rendersMore(c: Controller, count: number, what: string): Promise<void> {
  const before = await metric(c, RECONCILED);
  await eventually(async () => (await metric(c, RECONCILED)) >= before + count, what, 30_000, 50);
}

/** `show proc`, retried while the master re-executes or is being restarted. */
const proc = (c: Controller) => eventually(() => c.master.showProc(), 'show proc on the master socket', 20_000);

/** Whether something accepts a TCP connection on 127.0.0.1:<port>. */
const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

const request = (c: Controller, host: string): Promise<Reply | undefined> => send({ port: c.httpPort, host, timeoutMs: 2000 }).catch(() => undefined);

/** A render of `objects` as the controller renders them: its template set, its `--set` values, its --out. */
async function freshRender(c: Controller, objects: readonly KubeObject[]): Promise<PipelineResult> {
  const set = await loadControllerTemplateSet({ out: c.out, templates: c.templates, set: c.set }, { runtimeSocket: join(c.out, 'run', 'admin.sock') });
  const stores = new StoreProvider(set.stores);
  for (const object of objects) stores.store(storeNameFor(object, set.stores)).upsert(object);
  return new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
}

/**
 * Converged on the final version: HAProxy routes HOST and `<tag>.HOST` to the echo server `tag`
 * on every request (an orphaned old worker would answer some), the flood's last own host is gone
 * (404), and --out holds exactly a fresh render of `finalObjects`.
 */
async function expectServesFinal(c: Controller, tag: string, lastFlooded: number, finalObjects: () => Promise<readonly KubeObject[]>): Promise<void> {
  const reply = await eventually(async () => {
    const replies = await Promise.all([HOST, HOST, HOST, `${tag}.${HOST}`].map((host) => request(c, host)));
    const gone = await request(c, `v${lastFlooded}.${HOST}`);
    return replies.every((r) => r?.headers['x-echo-name'] === tag) && gone?.status === 404 ? replies[0] : undefined;
  }, `HAProxy routing ${HOST} to ${tag}`, 30_000, 50);
  expect(reply.status).toBe(200);
  expect(reply.echo?.name).toBe(tag);
  expect(reply.echo?.headers.host).toBe(HOST);
  const fresh = await freshRender(c, await finalObjects());
  expect(await readFile(join(c.out, 'haproxy.cfg'), 'utf8')).toBe(fresh.haproxyConfig);
  expect(fresh.haproxyConfig).toContain(`backend ing_${NS}_flood_${tag}_80`);
  for (const [name, text] of Object.entries(fresh.auxiliaryFiles.maps)) expect(await readFile(join(c.out, 'maps', name), 'utf8')).toBe(text);
}

const fleet = new EchoFleet();
/** The flood's backends, and one for the final version of each test. */
const echoes: EchoServer[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'controller-faults-'));
  for (const name of [...FLOODED, 'after-kills', 'after-reloads', 'after-drops']) echoes.push(await fleet.start(name));
});

afterEach(async () => {
  await Promise.all(floods.splice(0).map((flood) => flood.stop().catch(() => undefined)));
});

afterAll(async () => {
  await fleet.stopAll();
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(SKIP_HAPROXY)('run --manifests --haproxy: faults during a flood of manifest edits', () => {
  let manifests: string;
  let c: Controller | undefined;

  const writeManifest = (file: string, objects: readonly KubeObject[]): Promise<void> => writeFile(join(manifests, file), objects.map((o) => stringify(o)).join('---\n'));
  const manifestObjects = async (): Promise<KubeObject[]> => {
    const set = await loadControllerTemplateSet({ out: (c as Controller).out, templates: (c as Controller).templates });
    return (await loadManifests(manifests, set.stores)).objects.map((loaded) => loaded.object);
  };

  beforeAll(async () => {
    manifests = join(dir, 'manifests');
    await mkdir(manifests);
    await writeManifest('backends.yaml', echoes.flatMap(backend));
    await writeManifest('flood.yaml', [floodIngress(0)]);
    const templates = join(dir, 'extended.yaml');
    await writeFile(templates, await extendedTemplateSet());
    c = await startController(['--manifests', manifests], join(dir, 'out-manifests'), templates);
  }, 120_000);

  afterAll(async () => {
    await stopController(c);
  });

  it('serves the final version after HAProxy is SIGKILLed during the flood, a worker first and then a master', async () => {
    const controller = c as Controller;
    const restartsBefore = await metric(controller, 'haptic_haproxy_restarts_total');
    const first = await proc(controller);
    const flood = startFlood((i) => writeManifest('flood.yaml', [floodIngress(i)]), 10);

    await rendersMore(controller, 2, 'flood versions rendered before the fault');
    // A SIGKILLed worker takes its master down with it (HAProxy's exit-on-failure).
    await eventually(async () => {
      // Read just before the kill: a reload of the flood may have replaced the worker.
      const worker = (await controller.master.showProc()).workers[0];
      if (worker === undefined) return false;
      process.kill(worker.pid, 'SIGKILL');
      return true;
    }, 'the current worker killed', 20_000);
    const second = await eventually(async () => {
      const now = await controller.master.showProc().catch(() => undefined);
      return now !== undefined && now.master.pid !== first.master.pid && now.workers.length > 0 ? now : undefined;
    }, 'HAProxy restarted after the worker was killed', 20_000, 50);
    // A SIGKILLed master leaves its worker serving until that worker notices it is orphaned.
    process.kill(second.master.pid, 'SIGKILL');
    await rendersMore(controller, 2, 'flood versions rendered after the master was killed');
    const last = await flood.stop();

    await writeManifest('flood.yaml', [finalIngress('after-kills')]);
    await expectServesFinal(controller, 'after-kills', last, manifestObjects);
    expect(await metric(controller, 'haptic_haproxy_restarts_total')).toBeGreaterThanOrEqual(restartsBefore + 2);
    expect((await proc(controller)).master.pid).not.toBe(second.master.pid);
  });

  it('serves the final version when reloads fail during the flood on a port another program holds, once that port is free', async () => {
    const controller = c as Controller;
    const [port] = (await freePorts(1)) as [number];
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', () => resolve()));
    const failuresBefore = await metric(controller, RELOAD_FAILED);
    // Every version asks for a listener on the held port: each reload fails until it is free.
    const listener = extraListener(NS, 'extra-flood', port);
    const flood = startFlood((i) => writeManifest('flood.yaml', [floodIngress(i), listener]), 10);
    try {
      await eventually(async () => (await metric(controller, RELOAD_FAILED)) >= failuresBefore + 2, 'reloads failing during the flood', 30_000);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    const reloadsAtFree = await metric(controller, RELOADED);
    await eventually(async () => (await metric(controller, RELOADED)) > reloadsAtFree, 'a reload going through during the flood once the port is free', 30_000);
    const last = await flood.stop();

    await writeManifest('flood.yaml', [finalIngress('after-reloads'), listener]);
    await expectServesFinal(controller, 'after-reloads', last, manifestObjects);
    // The port the reloads could not bind is HAProxy's now.
    expect(await accepts(port)).toBe(true);
  });
});

describe.skipIf(SKIP_HAPROXY)('run --kubeconfig --haproxy: faults during a flood of API changes', () => {
  const PATHS: Record<string, string> = {
    Service: '/api/v1/services',
    EndpointSlice: '/apis/discovery.k8s.io/v1/endpointslices',
    Ingress: '/apis/networking.k8s.io/v1/ingresses',
  };
  let api: FakeKubeApi;
  let c: Controller | undefined;
  const seeded: KubeObject[] = [];

  const upsert = (object: KubeObject): void => {
    api.upsert(PATHS[object.kind as string] as string, structuredClone(object) as never);
  };

  beforeAll(async () => {
    api = await FakeKubeApi.start();
    const kubeconfig = await api.writeKubeconfig(dir);
    seeded.push(...echoes.flatMap(backend));
    for (const object of seeded) upsert(object);
    upsert(floodIngress(0));
    c = await startController(['--kubeconfig', kubeconfig], join(dir, 'out-kubernetes'), DEFAULT_TEMPLATE_SET_PATH);
  }, 120_000);

  afterAll(async () => {
    await stopController(c);
    await api?.close();
  });

  it('serves the final version after its watches are dropped, failed with 500s and compacted during the flood', async () => {
    const controller = c as Controller;
    const problemsBefore = await metric(controller, 'haptic_source_problems_total');
    const flood = startFlood((i) => upsert(floodIngress(i)), 5);
    // One fault after the other while the flood goes on; after each the controller renders flood versions again.
    const faults: Record<string, () => void> = {
      'the watches were dropped': () => api.dropWatches(),
      'the watches were dropped and the rewatches answered 500': () => {
        api.failNext(2, 500, (r) => r.watch);
        api.dropWatches();
      },
      'a compaction, so the resumes were answered 410 Gone': () => {
        api.compact();
        api.dropWatches();
      },
    };
    for (const [fault, inject] of Object.entries(faults)) {
      inject();
      await rendersMore(controller, 2, `flood versions rendered after ${fault}`);
    }
    const last = await flood.stop();

    upsert(finalIngress('after-drops'));
    // The final change may be in flight on a connection that is cut now: only a resume sees it.
    api.dropWatches();
    await expectServesFinal(controller, 'after-drops', last, async () => [...seeded, finalIngress('after-drops')].map(stored));
    expect(await metric(controller, 'haptic_source_problems_total')).toBeGreaterThan(problemsBefore);
  });

  /** The object as the API server holds it (resourceVersion, uid): what the controller was sent. */
  function stored(object: KubeObject): KubeObject {
    const held = api.get(PATHS[object.kind as string] as string, `${object.metadata.namespace}/${object.metadata.name}`);
    if (held === undefined) throw new Error(`the API server lost ${object.kind}/${object.metadata.name}`);
    return held as KubeObject;
  }
});

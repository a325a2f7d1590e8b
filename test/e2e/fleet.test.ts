// A fleet end to end: three `haptic-reconciler agent` processes on 127.0.0.2, .3 and .4, each with
// its own HAProxy and --dir, and one `run --manifests … --agents …` controller deploying to all
// three. Every route is served by every instance; an EndpointSlice edit reaches all three through
// the Runtime API with no reload; a new Ingress costs one reload per instance; an apply replayed
// below an agent's (epoch, sequence) gets 409; a SIGKILLed agent restarted on its --dir serves
// its render at once and takes the next change, one restarted on an empty --dir is given the
// whole render unasked; a SIGSTOPped agent delays no one and catches up after SIGCONT.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterCli } from '../../src/main/haproxy/master-cli.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { endpointSlice, ingress, rule, service } from '../helpers/cluster.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { eventually } from '../helpers/eventually.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/fleet.test.ts');

const TOKEN = 'fleet-test-token';
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;

interface Instance {
  readonly address: string;
  readonly dir: string;
  readonly api: string;
  process: CliProcess;
  readonly master: MasterCli;
}

let root: string;
let manifests: string;
let httpPort: number;
let controller: CliProcess;
let metrics: string;
/** Each agent's /readyz status before the controller started. */
let readyBefore: number[];
const instances: Instance[] = [];
const echoes = new EchoFleet();
const backends: Record<string, EchoServer> = {};

const write = (file: string, ...objects: KubeObject[]): Promise<void> => writeFile(join(manifests, file), objects.map((o) => stringify(o)).join('---\n'));
const slice = (name: string, svc: string, echo: EchoServer): KubeObject => endpointSlice('shop', svc, [{ address: echo.host, ready: true }], { name: 'http', port: echo.port }, name);
const route = (name: string, host: string, svc: string): KubeObject => ingress('shop', name, { ingressClassName: 'haproxy', rules: [rule(host, { path: '/', service: svc })] });
const served = async (address: string, host: string): Promise<string | undefined> =>
  (await send({ address, port: httpPort, host, timeoutMs: 2000 }).catch(() => undefined))?.echo?.name;
const servedEverywhere = async (host: string): Promise<(string | undefined)[]> => Promise.all(ADDRESSES.map((address) => served(address, host)));
const proc = (instance: Instance) => eventually(() => instance.master.showProc(), `show proc of ${instance.address}`, 10_000);
const state = async (instance: Instance): Promise<{ epoch: number; sequence: number; checksum: string | null }> =>
  (await fetch(`http://${instance.api}/v1/state`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as Promise<{ epoch: number; sequence: number; checksum: string | null }>;

function startAgent(instance: { address: string; dir: string; api: string }): CliProcess {
  return startCli(['agent', '--dir', instance.dir, '--listen', instance.api, '--token-file', join(root, 'token'), '--bind-address', instance.address]);
}

describe.skipIf(SKIP_HAPROXY)('a fleet of three agents and one controller', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-e2e-'));
    manifests = join(root, 'manifests');
    await mkdir(manifests);
    await writeFile(join(root, 'token'), `${TOKEN}\n`);
    for (const name of ['web-1', 'web-2', 'web-3', 'blog-1']) backends[name] = await echoes.start(name);
    const ports = await freePorts(3 + ADDRESSES.length);
    const [http, https, status] = ports as [number, number, number];
    httpPort = http;
    for (const [i, address] of ADDRESSES.entries()) {
      const instance = { address, dir: join(root, `agent-${i}`), api: `${address}:${ports[3 + i] as number}` };
      instances.push({ ...instance, process: startAgent(instance), master: new MasterCli({ socketPath: join(instance.dir, 'run', 'master.sock') }) });
    }
    await write('shop.yaml', service('shop', 'web'), route('shop', 'shop.test', 'web'));
    await write('slices.yaml', slice('web-a', 'web', backends['web-1'] as EchoServer));
    for (const instance of instances) await eventually(async () => (await fetch(`http://${instance.api}/healthz`).catch(() => undefined))?.ok, `agent ${instance.address} listening`, 30_000);
    readyBefore = await Promise.all(instances.map(async (i) => (await fetch(`http://${i.api}/readyz`)).status));
    controller = startCli([
      'run', '--manifests', manifests, '--out', join(root, 'out'), '--metrics-addr', '127.0.0.1:0', '--threads', '1',
      '--agents', instances.map((i) => i.api).join(','), '--agent-token-file', join(root, 'token'), '--min-deployment-interval', '500',
      '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${http}`, '--set', `httpsPort=${https}`, '--set', `statusPort=${status}`, '--set', 'allowLoopbackEndpoints=true',
    ]);
    metrics = await eventually(() => /"metrics":"(127\.0\.0\.1:\d+)"/.exec(controller.output())?.[1], 'the metrics address', 30_000);
  }, 60_000);

  afterAll(async () => {
    await controller?.stop('SIGTERM');
    for (const instance of instances) {
      instance.process.child.kill('SIGCONT');
      await instance.process.stop('SIGTERM');
    }
    await echoes.stopAll();
    await rm(root, { recursive: true, force: true });
  });

  it('keeps every agent unready until its first config, then each serves every route on its own address', async () => {
    expect(readyBefore).toEqual([503, 503, 503]);
    await eventually(async () => (await Promise.all(instances.map(async (i) => (await fetch(`http://${i.api}/readyz`)).status))).every((s) => s === 200), 'every agent ready', 30_000);
    expect(await servedEverywhere('shop.test')).toEqual(['web-1', 'web-1', 'web-1']);
    expect((await send({ address: '127.0.0.3', port: httpPort, host: 'nobody.test' })).status).toBe(404);
  });

  it('applies an EndpointSlice edit on all three through the Runtime API, with no reload', async () => {
    const before = await Promise.all(instances.map(proc));
    await write('slices.yaml', slice('web-a', 'web', backends['web-2'] as EchoServer));
    await eventually(async () => (await servedEverywhere('shop.test')).every((name) => name === 'web-2'), 'web-2 served by every agent', 10_000);
    const after = await Promise.all(instances.map(proc));
    for (const [i, snapshot] of after.entries()) {
      expect(snapshot.master.reloads).toBe(before[i]?.master.reloads);
      expect(snapshot.workers.map((w) => w.pid)).toEqual(before[i]?.workers.map((w) => w.pid));
    }
    // An agent's HAProxy serves the edit a moment before its deployment (files written too) is counted.
    await eventually(async () => /^haptic_fleet_instances\{state="in_sync"\} 3$/m.test(await (await fetch(`http://${metrics}/metrics`)).text()), 'every instance counted in sync', 10_000);
  });

  it('costs exactly one reload per instance for a new Ingress', async () => {
    const before = await Promise.all(instances.map(proc));
    await write('blog.yaml', service('shop', 'blog'), slice('blog-a', 'blog', backends['blog-1'] as EchoServer), route('blog', 'blog.test', 'blog'));
    await eventually(async () => (await servedEverywhere('blog.test')).every((name) => name === 'blog-1'), 'the new Ingress on every agent', 20_000);
    const after = await Promise.all(instances.map(proc));
    for (const [i, snapshot] of after.entries()) expect(snapshot.master.reloads).toBe((before[i]?.master.reloads ?? 0) + 1);
  });

  it('answers 409 to an apply replayed at the (epoch, sequence) an agent already took, and changes nothing', async () => {
    const instance = instances[0] as Instance;
    await eventually(async () => /^haptic_fleet_instances\{state="in_sync"\} 3$/m.test(await (await fetch(`http://${metrics}/metrics`)).text()), 'every instance in sync');
    const taken = await state(instance);
    const response = await fetch(`http://${instance.api}/v1/apply`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ epoch: taken.epoch, sequence: taken.sequence, checksum: 'replayed', baseChecksum: null, full: true, config: 'global\n', paths: { mapsDir: '/x/maps', filesDir: '/x/files', certsDir: '/x/certs', runDir: '/x/run' }, reload: true }),
    });
    expect(response.status).toBe(409);
    expect(await state(instance)).toMatchObject({ checksum: taken.checksum, sequence: taken.sequence });
    expect(await served(instance.address, 'shop.test')).toBe('web-2');
  });

  it('brings an agent SIGKILLed and restarted on its --dir back: it serves its render at once and takes the next change', async () => {
    const instance = instances[1] as Instance;
    const { master: m } = await proc(instance);
    await instance.process.stop('SIGKILL');
    // HAProxy dies with its pod; here it outlives the agent, so end it the same way.
    process.kill(m.pid, 'SIGKILL');
    await eventually(async () => (await served(instance.address, 'shop.test')) === undefined, 'the killed instance down', 10_000);
    instance.process = startAgent(instance);
    await eventually(async () => (await served(instance.address, 'shop.test')) === 'web-2', 'the restarted agent serving its kept render', 30_000);
    await write('slices.yaml', slice('web-a', 'web', backends['web-3'] as EchoServer));
    await eventually(async () => (await servedEverywhere('shop.test')).every((name) => name === 'web-3'), 'the next change on every agent', 20_000);
  }, 60_000);

  it('gives an agent restarted on an empty --dir the whole render, without waiting for a change', async () => {
    const instance = instances[0] as Instance;
    const { master: m } = await proc(instance);
    await instance.process.stop('SIGKILL');
    process.kill(m.pid, 'SIGKILL');
    await rm(instance.dir, { recursive: true, force: true });
    await eventually(async () => (await served(instance.address, 'shop.test')) === undefined, 'the killed instance down', 10_000);
    instance.process = startAgent(instance);
    await eventually(async () => (await fetch(`http://${instance.api}/readyz`).catch(() => undefined))?.status === 503, 'the empty agent up and unready', 30_000);
    await eventually(async () => (await served(instance.address, 'shop.test')) === 'web-3', 'the empty agent given the whole render', 20_000);
    expect(await served(instance.address, 'blog.test')).toBe('blog-1');
  }, 60_000);

  it('applies the next change on the others while one agent is stopped, and the stopped one catches up after SIGCONT', async () => {
    const stopped = instances[2] as Instance;
    stopped.process.child.kill('SIGSTOP');
    try {
      const edited = Date.now();
      await write('slices.yaml', slice('web-a', 'web', backends['web-1'] as EchoServer));
      await eventually(async () => (await Promise.all([served(ADDRESSES[0], 'shop.test'), served(ADDRESSES[1], 'shop.test')])).every((n) => n === 'web-1'), 'the change on the running agents', 10_000);
      expect(Date.now() - edited).toBeLessThan(3000);
    } finally {
      stopped.process.child.kill('SIGCONT');
    }
    await eventually(async () => (await served(stopped.address, 'shop.test')) === 'web-1', 'the stopped agent caught up', 30_000);
  }, 60_000);
});

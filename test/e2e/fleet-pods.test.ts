// Fleet discovery end to end: `run --kubeconfig … --haproxy-pods SELECTOR --haproxy-namespace NS
// --agent-port P` against the fake API server, with three real agents (each with its own HAProxy
// and --dir) on 127.0.0.2, .3 and .4, all on port P. HAProxy Pods in the fake server carry the
// selector's labels and loopback podIPs. Every Running Pod with a podIP gets the config (a real
// request through its HAProxy answers the route); a Pod that does not match, is not Running or
// has a malformed podIP gets nothing; a Pod added later is deployed to; a deleted or terminating
// Pod gets no more applies (its agent's /v1/state sequence stops moving).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { endpointSlice, ingress, rule, service } from '../helpers/cluster.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { eventually } from '../helpers/eventually.js';
import { FakeKubeApi } from '../helpers/fake-kube-api.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/fleet-pods.test.ts');

const TOKEN = 'pods-test-token';
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;
const PODS = '/api/v1/pods';
const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';
const LABELS = { 'app.kubernetes.io/name': 'haptic-reconciler', 'app.kubernetes.io/component': 'haproxy' };

let root: string;
let api: FakeKubeApi;
let httpPort: number;
let agentPort: number;
let controller: CliProcess;
const agents: CliProcess[] = [];
const echoes = new EchoFleet();
const backends: Record<string, EchoServer> = {};

function pod(name: string, podIP: string | undefined, fields: { labels?: Record<string, string>; phase?: string; namespace?: string; deleting?: boolean } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: fields.namespace ?? 'haptic', labels: fields.labels ?? LABELS, ...(fields.deleting === true ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { containers: [{ name: 'haproxy', image: 'haproxy' }] },
    status: { phase: fields.phase ?? 'Running', ...(podIP === undefined ? {} : { podIP }) },
  };
}

const slice = (echo: EchoServer): KubeObject => endpointSlice('shop', 'web', [{ address: echo.host, ready: true }], { name: 'http', port: echo.port }, 'web-a');
const served = async (address: string): Promise<string | undefined> => (await send({ address, port: httpPort, host: 'shop.test', timeoutMs: 2000 }).catch(() => undefined))?.echo?.name;
const state = async (address: string): Promise<{ sequence: number; checksum: string | null }> =>
  (await fetch(`http://${address}:${agentPort}/v1/state`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as Promise<{ sequence: number; checksum: string | null }>;
const fleetInstances = async (metrics: string): Promise<number> => {
  const text = await (await fetch(`http://${metrics}/metrics`)).text();
  return [...text.matchAll(/^haptic_fleet_instances\{state="[a-z_]+"\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
};
const ready = async (address: string): Promise<number> => (await fetch(`http://${address}:${agentPort}/readyz`)).status;

describe.skipIf(SKIP_HAPROXY)('run --haproxy-pods: the fleet discovered from Pods', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-pods-e2e-'));
    await writeFile(join(root, 'token'), `${TOKEN}\n`);
    for (const name of ['web-1', 'web-2', 'web-3']) backends[name] = await echoes.start(name);
    const [http, https, status, agent] = (await freePorts(4)) as [number, number, number, number];
    httpPort = http;
    agentPort = agent;
    for (const [i, address] of ADDRESSES.entries()) {
      agents.push(startCli(['agent', '--dir', join(root, `agent-${i}`), '--listen', `${address}:${agentPort}`, '--token-file', join(root, 'token'), '--bind-address', address]));
    }
    api = await FakeKubeApi.start();
    api.upsert('/api/v1/services', service('shop', 'web') as never);
    api.upsert(SLICES, slice(backends['web-1'] as EchoServer) as never);
    api.upsert('/apis/networking.k8s.io/v1/ingresses', ingress('shop', 'shop', { ingressClassName: 'haproxy', rules: [rule('shop.test', { path: '/', service: 'web' })] }) as never);
    // Two HAProxy Pods; 127.0.0.4 is behind Pods that are no targets: another label, another
    // namespace, not Running, and a podIP that is not an address.
    api.upsert(PODS, pod('haproxy-a', '127.0.0.2') as never);
    api.upsert(PODS, pod('haproxy-b', '127.0.0.3') as never);
    api.upsert(PODS, pod('other-app', '127.0.0.4', { labels: { 'app.kubernetes.io/name': 'other' } }) as never);
    api.upsert(PODS, pod('elsewhere', '127.0.0.4', { namespace: 'tenant' }) as never);
    api.upsert(PODS, pod('starting', '127.0.0.4', { phase: 'Pending' }) as never);
    api.upsert(PODS, pod('forged', '127.0.0.4:1\nbad') as never);
    for (const address of ADDRESSES) await eventually(async () => (await fetch(`http://${address}:${agentPort}/healthz`).catch(() => undefined))?.ok, `agent ${address} listening`, 30_000);
    controller = startCli([
      'run', '--kubeconfig', await api.writeKubeconfig(root), '--out', join(root, 'out'), '--metrics-addr', '127.0.0.1:0', '--threads', '1',
      '--haproxy-pods', 'app.kubernetes.io/name=haptic-reconciler,app.kubernetes.io/component=haproxy', '--haproxy-namespace', 'haptic', '--agent-port', String(agentPort),
      '--agent-token-file', join(root, 'token'), '--min-deployment-interval', '200', '--events', 'false',
      '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${http}`, '--set', `httpsPort=${https}`, '--set', `statusPort=${status}`, '--set', 'allowLoopbackEndpoints=true',
    ]);
  }, 60_000);

  afterAll(async () => {
    if (process.env.DEBUG_PODS !== undefined) await writeFile(process.env.DEBUG_PODS, controller.output() + agents.map((a) => a.output()).join('\n=====\n'));
    await controller?.stop('SIGTERM');
    for (const agent of agents) await agent.stop('SIGTERM');
    await echoes.stopAll();
    await api?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('deploys to every Running Pod with a podIP that the selector matches in the namespace, and to no other', async () => {
    await eventually(async () => (await served('127.0.0.2')) === 'web-1' && (await served('127.0.0.3')) === 'web-1', 'both Pods serving the route', 30_000);
    await eventually(async () => (await ready('127.0.0.2')) === 200 && (await ready('127.0.0.3')) === 200, 'both Pods ready', 5_000);
    expect(await ready('127.0.0.4')).toBe(503);
    expect(await served('127.0.0.4')).toBeUndefined();
    expect(controller.output()).toContain('"reason":"Pod forged: status.podIP is not an IP address","msg":"object refused by its store"');
  });

  it('deploys to a Pod added later, in full', async () => {
    api.upsert(PODS, pod('haproxy-c', '127.0.0.4') as never);
    await eventually(async () => (await served('127.0.0.4')) === 'web-1', 'the added Pod serving the route', 20_000);
    await eventually(async () => (await ready('127.0.0.4')) === 200, 'the added Pod ready', 5_000);
  });

  it('sends no more applies to a deleted Pod or a terminating one, while the rest take the next change', async () => {
    api.delete(PODS, 'haptic/haproxy-b');
    api.upsert(PODS, pod('haproxy-c', '127.0.0.4', { deleting: true }) as never);
    await eventually(() => controller.output().includes('"removed":["haptic/haproxy-b@127.0.0.3","haptic/haproxy-c@127.0.0.4"],"instances":1,"msg":"HAProxy pods changed"'), 'the fleet down to one instance', 10_000);
    const [b, c] = [await state('127.0.0.3'), await state('127.0.0.4')];
    api.upsert(SLICES, slice(backends['web-2'] as EchoServer) as never);
    await eventually(async () => (await served('127.0.0.2')) === 'web-2', 'the remaining Pod taking the change', 20_000);
    api.upsert(SLICES, slice(backends['web-3'] as EchoServer) as never);
    await eventually(async () => (await served('127.0.0.2')) === 'web-3', 'the remaining Pod taking a second change', 20_000);
    expect(await state('127.0.0.3')).toEqual(b);
    expect(await state('127.0.0.4')).toEqual(c);
    expect(await served('127.0.0.3')).toBe('web-1');
    expect(await served('127.0.0.4')).toBe('web-1');
    const metrics = /"metrics":"(127\.0\.0\.1:\d+)"/.exec(controller.output())?.[1] as string;
    await eventually(async () => (await fleetInstances(metrics)) === 1, 'haptic_fleet_instances counting the one instance left', 5_000);
  });
});

// Fleet failover end to end: three agents (each with its own HAProxy) on 127.0.0.2, .3 and .4, and
// two `run --kubeconfig … --leader-elect --agents …` replicas against the fake API server. The
// leader deploys to all three; after it is SIGKILLed the follower takes the Lease, its epoch is
// higher on every agent, and the next EndpointSlice change reaches all three.
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

skipNotice('test/e2e/fleet-failover.test.ts');

const TOKEN = 'failover-test-token';
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;
const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';
const ELECTION = ['--leader-elect', '--lease-namespace', 'default', '--lease-name', 'haptic-failover', '--lease-duration', '3', '--renew-deadline', '2', '--retry-period', '0.5'];

let root: string;
let api: FakeKubeApi;
let httpPort: number;
let agentPort: number;
const agents: CliProcess[] = [];
const replicas = new Map<string, { process: CliProcess; metrics: string }>();
const echoes = new EchoFleet();
const backends: Record<string, EchoServer> = {};

const slice = (echo: EchoServer): KubeObject => endpointSlice('shop', 'web', [{ address: echo.host, ready: true }], { name: 'http', port: echo.port }, 'web-a');
const served = async (address: string): Promise<string | undefined> => (await send({ address, port: httpPort, host: 'shop.test', timeoutMs: 2000 }).catch(() => undefined))?.echo?.name;
const servedEverywhere = async (): Promise<(string | undefined)[]> => Promise.all(ADDRESSES.map(served));
const epochs = async (): Promise<number[]> =>
  Promise.all(ADDRESSES.map(async (address) => ((await (await fetch(`http://${address}:${agentPort}/v1/state`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { epoch: number }).epoch));
const leading = async (metrics: string): Promise<boolean> => {
  const text = await (await fetch(`http://${metrics}/metrics`).catch(() => undefined))?.text();
  return text !== undefined && /^haptic_leader 1$/m.test(text);
};

describe.skipIf(SKIP_HAPROXY)('a fleet with two leader-elected controllers', () => {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fleet-failover-e2e-'));
    await writeFile(join(root, 'token'), `${TOKEN}\n`);
    for (const name of ['web-1', 'web-2']) backends[name] = await echoes.start(name);
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
    for (const address of ADDRESSES) await eventually(async () => (await fetch(`http://${address}:${agentPort}/healthz`).catch(() => undefined))?.ok, `agent ${address} listening`, 30_000);
    const kubeconfig = await api.writeKubeconfig(root);
    for (const identity of ['a', 'b']) {
      const process = startCli([
        'run', '--kubeconfig', kubeconfig, '--out', join(root, `out-${identity}`), '--metrics-addr', '127.0.0.1:0', '--threads', '1', ...ELECTION, '--identity', identity,
        '--agents', ADDRESSES.map((a) => `${a}:${agentPort}`).join(','), '--agent-token-file', join(root, 'token'), '--min-deployment-interval', '200', '--events', 'false',
        '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${http}`, '--set', `httpsPort=${https}`, '--set', `statusPort=${status}`, '--set', 'allowLoopbackEndpoints=true',
      ]);
      const metrics = await eventually(() => /"metrics":"(127\.0\.0\.1:\d+)"/.exec(process.output())?.[1], `the metrics address of replica ${identity}`, 30_000);
      replicas.set(identity, { process, metrics });
    }
  }, 90_000);

  afterAll(async () => {
    for (const { process } of replicas.values()) await process.stop('SIGKILL');
    for (const agent of agents) await agent.stop('SIGTERM');
    await echoes.stopAll();
    await api?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('serves from every agent, and after the leader is SIGKILLed the follower deploys the next change to all three under a higher epoch', async () => {
    await eventually(async () => (await servedEverywhere()).every((name) => name === 'web-1'), 'every agent serving web-1', 40_000);
    const leader = await eventually(async () => {
      for (const [identity, { metrics }] of replicas) if (await leading(metrics)) return identity;
      return undefined;
    }, 'a leader', 20_000);
    const follower = leader === 'a' ? 'b' : 'a';
    const before = await epochs();

    await replicas.get(leader)?.process.stop('SIGKILL');
    await eventually(async () => ((await leading((replicas.get(follower) as { metrics: string }).metrics)) ? true : undefined), 'the follower leading', 20_000, 50);
    api.upsert(SLICES, slice(backends['web-2'] as EchoServer) as never);
    await eventually(async () => (await servedEverywhere()).every((name) => name === 'web-2'), 'every agent serving web-2 after the failover', 30_000);
    // An agent answers with the new backend once HAProxy has it, a moment before it records the apply.
    const after = await eventually(async () => {
      const now = await epochs();
      return now.every((epoch, i) => epoch > (before[i] as number)) ? now : undefined;
    }, 'every agent fenced at the successor epoch', 10_000);
    expect(after).toHaveLength(3);
  }, 120_000);
});

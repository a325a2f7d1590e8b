// `run`'s fleet flags as `fleetFrom` reads them: --haproxy-pods refused with what it excludes, or
// malformed, with a message that names the flag; the discovered fleet's options otherwise.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetFrom, type FleetFlags } from '../../../src/main/cli/run.js';

let dir: string;
let token: string;

const flags = (extra: Partial<FleetFlags>): FleetFlags => ({ leaderElect: false, haproxy: false, agentPort: 5555, agentInsecure: false, agentConcurrency: 16, ...extra });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleet-flags-'));
  token = join(dir, 'token');
  await writeFile(token, 'secret\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('run --haproxy-pods flags', () => {
  it('give the discovered fleet: selector, namespace, agent port and the shared agent settings', async () => {
    expect(await fleetFrom(flags({ haproxyPods: 'app=haproxy', haproxyNamespace: 'haptic', agentPort: 6000, agentTokenFile: token, agentConcurrency: 4 }))).toEqual({
      agents: [],
      token: 'secret',
      insecure: false,
      concurrency: 4,
      pods: { selector: 'app=haproxy', namespace: 'haptic', port: 6000 },
    });
  });

  it.each([
    ['with --manifests', { manifests: '/tmp', haproxyPods: 'app=haproxy' }, '--haproxy-pods discovers Pods on an API server: use it with --kubeconfig or --in-cluster'],
    ['with --agents', { haproxyPods: 'app=haproxy', agents: '127.0.0.2:5555' }, '--agents and --haproxy-pods exclude each other'],
    ['with --haproxy', { haproxyPods: 'app=haproxy', haproxy: true }, '--haproxy and --haproxy-pods exclude each other'],
    ['with a malformed selector', { haproxyPods: 'app=haproxy;rm' }, '--haproxy-pods "app=haproxy;rm" is not a label selector'],
    ['with a malformed namespace', { haproxyPods: 'app=haproxy', haproxyNamespace: 'Not_A_Namespace' }, '--haproxy-namespace "Not_A_Namespace" is not a namespace name'],
    ['with --haproxy-namespace alone', { haproxyNamespace: 'haptic' }, '--haproxy-namespace needs --haproxy-pods SELECTOR'],
  ] as const)('are refused %s, naming the flag', async (_what, extra, message) => {
    await expect(fleetFrom(flags({ agentTokenFile: token, ...extra }))).rejects.toThrow(message);
  });

  it('need a token file', async () => {
    await expect(fleetFrom(flags({ haproxyPods: 'app=haproxy' }))).rejects.toThrow('--haproxy-pods needs --agent-token-file FILE');
  });
});

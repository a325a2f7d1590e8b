// `run --manifests --haproxy --max-old-workers 2` end to end, as a tenant would try it: hold a
// WebSocket open, edit the Ingress's annotations (each edit is a reload), and repeat. Without a
// bound every reload left one more draining worker for as long as hard-stop-after; with it the
// master never lists more than two old workers, the oldest are stopped (their tunnels end), the
// newest tunnels keep echoing, and haptic_haproxy_old_workers_stopped_total counts the stops.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MasterCli } from '../../src/main/haproxy/master-cli.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { endpointSlice, ingress, rule, service } from '../helpers/cluster.js';
import { EchoFleet } from '../helpers/e2e-echo.js';
import { openTunnel, type Tunnel } from '../helpers/e2e-tunnel.js';
import { eventually } from '../helpers/eventually.js';
import { whenServing } from '../helpers/run-haproxy.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/run-draining.test.ts');

const HOST = 'chat.test';
let dir: string;
let manifests: string;
let controller: CliProcess | undefined;
let master: MasterCli | undefined;
let metrics: string;
let httpPort: number;
const fleet = new EchoFleet();
const tunnels: Tunnel[] = [];

/** The tenant's Ingress; each `version` sets another tunnel timeout, a backend change HAProxy must reload for. */
async function writeIngress(version: number): Promise<void> {
  const object = ingress('chat', 'chat', { ingressClassName: 'haproxy', rules: [rule(HOST, { path: '/', service: 'chat' })] }, { annotations: { 'haproxy.org/timeout-tunnel': `${60 + version}s` } });
  await writeFile(join(manifests, 'ingress.yaml'), stringify(object));
}

const metric = async (name: string): Promise<number> => {
  const text = await (await fetch(`http://${metrics}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
};
const proc = () => eventually(() => (master as MasterCli).showProc(), 'show proc on the master socket', 10_000);

describe.skipIf(SKIP_HAPROXY)('run --haproxy --max-old-workers: a tenant holding WebSockets while editing its Ingress', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-draining-'));
    manifests = join(dir, 'manifests');
    const out = join(dir, 'out');
    await mkdir(manifests);
    const echo = await fleet.start('chat', '127.0.0.2');
    await writeFile(join(manifests, 'backend.yaml'), [service('chat', 'chat'), endpointSlice('chat', 'chat', [{ address: echo.host, ready: true }], { name: 'http', port: echo.port })].map((o) => stringify(o)).join('---\n'));
    await writeIngress(0);
    const [http, https, status] = (await freePorts(3)) as [number, number, number];
    httpPort = http;
    controller = startCli([
      'run', '--manifests', manifests, '--out', out, '--haproxy', '--metrics-addr', '127.0.0.1:0', '--threads', '1',
      '--min-deployment-interval', '0', '--max-old-workers', '2',
      '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${http}`, '--set', `httpsPort=${https}`, '--set', `statusPort=${status}`,
      '--set', 'allowLoopbackEndpoints=true',
    ]);
    ({ metrics, master } = await whenServing(controller, out));
  }, 120_000);

  afterAll(async () => {
    for (const tunnel of tunnels) tunnel.close();
    await controller?.stop('SIGTERM');
    await fleet.stopAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('never keeps more than two old workers, stops the oldest with their tunnels, and counts them', async () => {
    const oldWorkersSeen: number[] = [];
    for (let version = 1; version <= 5; version++) {
      const opened = await openTunnel(httpPort, HOST);
      tunnels.push(opened);
      expect(await opened.exchange(`hello ${version}`)).toBe(`hello ${version}`);
      const before = (await proc()).master.reloads;
      await writeIngress(version);
      const after = await eventually(async () => {
        const now = await proc();
        return now.master.reloads > before && now.workers.length === 1 ? now : undefined;
      }, `the reload for version ${version}`, 30_000);
      oldWorkersSeen.push(after.oldWorkers.length);
    }
    expect(Math.max(...oldWorkersSeen)).toBeLessThanOrEqual(2);
    // Five tunnels, five reloads: the three oldest generations were stopped, the two newest echo.
    await Promise.all(tunnels.slice(0, 3).map((t) => t.closed));
    expect(await tunnels[3]?.exchange('fourth')).toBe('fourth');
    expect(await tunnels[4]?.exchange('fifth')).toBe('fifth');
    expect((await proc()).oldWorkers).toHaveLength(2);
    await eventually(async () => (await metric('haptic_haproxy_old_workers_stopped_total')) === 3, 'three stopped workers counted');
  });
});

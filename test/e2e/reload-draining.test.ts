// Reloads without downtime, and bounded draining, on a real HAProxy 2.6 supervised by
// HaproxyProcess with the default template's output: a WebSocket-style Upgrade tunnel to an echo
// backend keeps working across a reload (the old worker serves it) until hard-stop-after; held
// tunnels never leave more than maxOldWorkers old workers, the oldest being stopped first; and 20
// reloads under 200 requests/s on fresh connections plus 200 requests/s over keep-alive lose no
// request and refuse no connection (the master hands the listening sockets to each new worker,
// and idle keep-alive connections are closed only after their next answer). HAPTIC_REPORT=1
// prints the measured figures. With CI=true these tests always run; elsewhere they are skipped,
// with a notice, without HAProxy.
import { mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HaproxyProcess, HaproxyProcessOptions } from '../../src/main/haproxy/haproxy-process.js';
import { DEFAULT_MAX_OLD_WORKERS } from '../../src/main/haproxy/old-workers.js';
import { endpointSlice, ingress, rule, service } from '../helpers/cluster.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet } from '../helpers/e2e-echo.js';
import { percentile, startLoad, type LoadReport } from '../helpers/e2e-load.js';
import { renderToDir, type RenderedDir } from '../helpers/e2e-render.js';
import { openTunnel, type Tunnel } from '../helpers/e2e-tunnel.js';
import { eventually } from '../helpers/eventually.js';
import { SKIP_HAPROXY, healthy, skipNotice, startHaproxy, type RunningHaproxy } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/reload-draining.test.ts');

const HOST = 'live.example.test';
const REPORT = process.env.HAPTIC_REPORT === '1';

let root: string;
let counter = 0;
const echoes = new EchoFleet();
const tunnels: Tunnel[] = [];
const running: RunningHaproxy[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-reload-'));
});
afterEach(async () => {
  for (const tunnel of tunnels.splice(0)) tunnel.close();
  // Old workers leave once their tunnels are closed; then the soft stop has nothing to wait for.
  await Promise.all(running.map((r) => eventually(async () => (await r.process.masterCli.showProc()).oldWorkers.length === 0, 'old workers to leave', 3_000).catch(() => undefined)));
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await echoes.stopAll();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** One Ingress for HOST, served by an echo backend on 127.0.0.2, rendered with `values`. */
async function liveSite(values: Record<string, unknown> = {}): Promise<RenderedDir> {
  const echo = await echoes.start('live', '127.0.0.2');
  const objects = [
    ingress('live', 'site', { rules: [rule(HOST, { path: '/', service: 'live' })] }),
    service('live', 'live'),
    endpointSlice('live', 'live', [echo.host], { name: 'http', port: echo.port }),
  ];
  return renderToDir(join(root, `out-${++counter}`), objects, values);
}

async function supervised(rendered: RenderedDir, options: Partial<HaproxyProcessOptions> = {}): Promise<HaproxyProcess> {
  const haproxy = await startHaproxy(rendered.paths.configFile, { statusPort: rendered.ports.status, adminSocket: rendered.adminSocket, ...options });
  running.push(haproxy);
  return haproxy.process;
}

async function tunnel(rendered: RenderedDir): Promise<Tunnel> {
  const opened = await openTunnel(rendered.ports.http, HOST);
  tunnels.push(opened);
  return opened;
}

/** Writes a new config (its /healthz says `ok-<n>`), reloads, and checks the reload took. */
async function reloadWithChange(haproxy: HaproxyProcess, rendered: RenderedDir, n: number): Promise<void> {
  const config = await readFile(rendered.paths.configFile, 'utf8');
  await writeFile(rendered.paths.configFile, config.replace(/string ok[-\d]* if \{ path \/healthz \}/, `string ok-${n} if { path /healthz }`));
  const result = await haproxy.reload({ pollMs: 25 });
  expect(result.ok, result.detail).toBe(true);
}

interface Sample {
  readonly atMs: number;
  readonly oldWorkers: number;
}

/** Reads `show proc` back to back until stopped; polls that meet a re-executing master are skipped. */
function sampleOldWorkers(haproxy: HaproxyProcess): { stop(): Promise<Sample[]> } {
  const samples: Sample[] = [];
  const began = performance.now();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        samples.push({ atMs: Math.round(performance.now() - began), oldWorkers: (await haproxy.masterCli.showProc()).oldWorkers.length });
      } catch {
        // The master closes its socket while it re-executes itself.
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return samples;
    },
  };
}

/** Inodes of the sockets listening on 127.0.0.1:<port> (from /proc/net/tcp). */
async function listeningInodes(port: number): Promise<string[]> {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const rows = (await readFile('/proc/net/tcp', 'utf8')).split('\n').map((line) => line.trim().split(/\s+/));
  return rows.filter((f) => f[1] === local && f[3] === '0A').map((f) => f[9] as string).sort();
}

/** Inodes of the sockets process `pid` holds. */
async function socketInodes(pid: number): Promise<Set<string>> {
  const links = await Promise.all((await readdir(`/proc/${pid}/fd`)).map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return new Set(links.flatMap((link) => /^socket:\[(\d+)\]$/.exec(link)?.[1] ?? []));
}

function report(what: string, figures: Record<string, unknown>): void {
  if (REPORT) console.info(`${what}: ${JSON.stringify(figures)}`);
}

describe.skipIf(SKIP_HAPROXY)('reloads under held connections and load (real HAProxy)', () => {
  it('keeps a WebSocket tunnel working across a reload: the old worker serves it, the new one takes new connections', async () => {
    const rendered = await liveSite();
    expect(rendered.result.haproxyConfig).toMatch(/^\s+hard-stop-after 30m$/m);
    expect(rendered.result.haproxyConfig).toMatch(/^\s+option idle-close-on-response$/m);
    const haproxy = await supervised(rendered);
    const held = await tunnel(rendered);
    expect(held.backend).toBe('live');
    expect(await held.exchange('before the reload')).toBe('before the reload');
    const before = await haproxy.masterCli.showProc();

    await reloadWithChange(haproxy, rendered, 1);
    const after = await haproxy.masterCli.showProc();
    expect(after.oldWorkers.map((w) => w.pid)).toEqual(before.workers.map((w) => w.pid));
    expect(after.workers.map((w) => w.pid)).not.toEqual(before.workers.map((w) => w.pid));
    expect(await held.exchange('after the reload')).toBe('after the reload');
    expect(await healthy(rendered.ports.status)).toBe('ok-1');
    const fresh = await send({ port: rendered.ports.http, host: HOST, path: '/new' });
    expect([fresh.status, fresh.echo?.name, fresh.echo?.url]).toEqual([200, 'live', '/new']);
    expect(await (await tunnel(rendered)).exchange('a new tunnel')).toBe('a new tunnel');
    expect(await held.exchange('still there')).toBe('still there');
  });

  it('ends a held tunnel once hard-stop-after has passed since the reload, and the old worker with it', async () => {
    const rendered = await liveSite({ hardStopAfter: '1s' });
    expect(rendered.result.haproxyConfig).toMatch(/^\s+hard-stop-after 1s$/m);
    const haproxy = await supervised(rendered);
    const held = await tunnel(rendered);
    const reloadedAt = performance.now();
    await reloadWithChange(haproxy, rendered, 1);
    expect(await held.exchange('within the drain bound')).toBe('within the drain bound');
    expect((await haproxy.masterCli.showProc()).oldWorkers).toHaveLength(1);
    await Promise.race([held.closed, new Promise((_, reject) => setTimeout(() => reject(new Error('the tunnel outlived hard-stop-after by 5 s')), 6_000))]);
    const drainedMs = Math.round(performance.now() - reloadedAt);
    // The old worker's clock starts when the master tells it to stop, during the reload.
    expect(drainedMs).toBeGreaterThanOrEqual(950);
    await eventually(async () => (await haproxy.masterCli.showProc()).oldWorkers.length === 0, 'the old worker to exit');
    report('hard-stop-after 1s', { tunnelClosedAfterMs: drainedMs });
  });

  it('never lets held tunnels keep more than maxOldWorkers old workers: the oldest are stopped first, and counted', async () => {
    const rendered = await liveSite();
    const onOldWorkersStopped = vi.fn();
    const haproxy = await supervised(rendered, { maxOldWorkers: 2, onOldWorkersStopped });
    const sampler = sampleOldWorkers(haproxy);
    const held: Tunnel[] = [];
    const afterEachReload: number[] = [];
    for (let n = 1; n <= 6; n++) {
      held.push(await tunnel(rendered));
      await reloadWithChange(haproxy, rendered, n);
      afterEachReload.push((await haproxy.masterCli.showProc()).oldWorkers.length);
    }
    const samples = await sampler.stop();
    expect(afterEachReload).toEqual([1, 2, 2, 2, 2, 2]);
    expect(samples.length).toBeGreaterThan(10);
    expect(Math.max(...samples.map((s) => s.oldWorkers))).toBeLessThanOrEqual(2);
    // The four oldest generations were stopped, their tunnels with them; the two newest still echo.
    await Promise.all(held.slice(0, 4).map((t) => t.closed));
    expect(await held[4]?.exchange('fifth')).toBe('fifth');
    expect(await held[5]?.exchange('sixth')).toBe('sixth');
    expect(onOldWorkersStopped.mock.calls.map(([event]) => (event as { stopped: number }).stopped).reduce((a, b) => a + b, 0)).toBe(4);
    report('held tunnels, maxOldWorkers 2, 6 reloads', { afterEachReload, maxSampled: Math.max(...samples.map((s) => s.oldWorkers)), samples: samples.length, series: compress(samples) });
  });

  it('loses no request and refuses no connection during 20 reloads under 200 requests/s fresh and 200 requests/s keep-alive', async () => {
    const rendered = await liveSite();
    const haproxy = await supervised(rendered);
    const listeners = await listeningInodes(rendered.ports.http);
    expect(listeners).toHaveLength(1);
    const fresh = startLoad({ port: rendered.ports.http, host: HOST, ratePerSecond: 200, keepAlive: false });
    const kept = startLoad({ port: rendered.ports.http, host: HOST, ratePerSecond: 200, keepAlive: true });
    const sampler = sampleOldWorkers(haproxy);
    const began = performance.now();
    for (let n = 1; n <= 20; n++) await reloadWithChange(haproxy, rendered, n);
    const stormMs = Math.round(performance.now() - began);
    const [freshReport, keptReport] = await Promise.all([fresh.stop(), kept.stop()]);
    const samples = await sampler.stop();

    for (const [kind, load] of [['fresh connections', freshReport], ['keep-alive', keptReport]] as const) {
      expect({ kind, errors: load.errors, refused: load.refused, samples: load.samples }).toEqual({ kind, errors: 0, refused: 0, samples: [] });
      expect(load.ok).toBe(load.sent);
      // The load kept its rate through the storm (a timer on a busy machine may fall a little behind).
      expect(load.sent).toBeGreaterThan((load.durationMs / 1000) * 200 * 0.8);
    }
    const after = await haproxy.masterCli.showProc();
    expect(after.master.reloads).toBe(20);
    // The master handed the same listening socket to every new worker: nothing was bound again.
    expect(await listeningInodes(rendered.ports.http)).toEqual(listeners);
    expect([...(await socketInodes(after.workers[0]?.pid as number))]).toContain(listeners[0]);
    expect(Math.max(...samples.map((s) => s.oldWorkers))).toBeLessThanOrEqual(DEFAULT_MAX_OLD_WORKERS);
    report('reload storm, 20 reloads', { stormMs, fresh: figures(freshReport), keepAlive: figures(keptReport), maxOldWorkersSampled: Math.max(...samples.map((s) => s.oldWorkers)) });
  });
});

function figures(load: LoadReport): Record<string, number> {
  const p = (q: number): number => Math.round(percentile(load.latenciesMs, q) * 10) / 10;
  return { requests: load.sent, ok: load.ok, errors: load.errors, refused: load.refused, p50Ms: p(50), p99Ms: p(99), maxMs: p(100) };
}

/** Samples as `[atMs, oldWorkers]` at each change of the count. */
function compress(samples: readonly Sample[]): [number, number][] {
  const series: [number, number][] = [];
  for (const s of samples) if (series.at(-1)?.[1] !== s.oldWorkers) series.push([s.atMs, s.oldWorkers]);
  return series;
}

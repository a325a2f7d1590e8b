// The pure parts of `soak --haproxy`, on a fake clock: the traffic's pacing and tallies, the
// HAProxy process sample (show proc + VmRSS), the worker-count judgement, the recovery rule when
// serving, the HAProxy kill fault, and the synthetic cluster's pods and stable apps; and the real
// HTTP probe against a loopback server that resets connections.
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ProcSnapshot } from '../../../src/main/haproxy/show-proc.js';
import { SyntheticCluster } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { FaultInjector } from '../../../src/main/tools/soak/fault-injector.js';
import { awaitedSuccess, FaultLog } from '../../../src/main/tools/soak/fault-log.js';
import { countGrowth } from '../../../src/main/tools/soak/growth.js';
import { haproxySample, vmRssKb } from '../../../src/main/tools/soak/haproxy-sampler.js';
import { SwitchableElector } from '../../../src/main/tools/soak/switchable-elector.js';
import { httpProbe, SoakTraffic, type Outcome } from '../../../src/main/tools/soak/soak-traffic.js';
import { validateSoakOptions, type SoakOptions } from '../../../src/main/tools/soak/soak-options.js';
import { WorkerFaultSwitch } from '../../../src/main/tools/soak/worker-faults.js';
import { ROUTING_STORES } from '../../helpers/cluster.js';
import { FakeClock } from '../../helpers/fake-clock.js';

describe('SoakTraffic', () => {
  function traffic(answer: (host: string) => Outcome, faultOpen = (): boolean => false) {
    const clock = new FakeClock();
    const sent: { host: string; keepAlive: boolean }[] = [];
    const t = new SoakTraffic({
      clock,
      hosts: ['a.test', 'b.test', 'c.test'],
      ratePerSecond: 100,
      faultOpen: () => faultOpen(),
      probe: async (host, keepAlive) => {
        sent.push({ host, keepAlive });
        return answer(host);
      },
    });
    return { clock, sent, t };
  }

  it('sends at its rate, rotating hosts and alternating fresh and keep-alive connections', async () => {
    const { clock, sent, t } = traffic(() => ({ ok: true, latencyMs: 2 }));
    t.start();
    await clock.advance(1000);
    await t.stop();
    expect(sent.length).toBeGreaterThanOrEqual(99);
    expect(sent.length).toBeLessThanOrEqual(100);
    expect(sent.slice(0, 4)).toEqual([
      { host: 'a.test', keepAlive: false },
      { host: 'b.test', keepAlive: true },
      { host: 'c.test', keepAlive: false },
      { host: 'a.test', keepAlive: true },
    ]);
    expect(t.totals).toMatchObject({ sent: sent.length, ok: sent.length, errors: 0, refused: 0 });
    expect(t.latency.p50Ms).toBeCloseTo(2, 1);
  });

  it('counts failures during a HAProxy fault apart from the failures outside one, and names the latter', async () => {
    let open = false;
    const { clock, t } = traffic((host) => (host === 'b.test' ? { ok: false, refused: true, what: 'ECONNREFUSED' } : { ok: false, refused: false, what: 'status 503' }), () => open);
    t.start();
    await clock.advance(30);
    open = true;
    await clock.advance(30);
    await t.stop();
    const totals = t.totals;
    expect(totals.ok).toBe(0);
    expect(totals.errors + totals.refused).toBeGreaterThan(0);
    expect(totals.faultErrors + totals.faultRefused).toBeGreaterThan(0);
    expect(totals.errors + totals.refused + totals.faultErrors + totals.faultRefused).toBe(totals.sent);
    expect(totals.failureSamples[0]).toMatch(/^a\.test: status 503$/);
  });

  it('gives each sample period its own counts and latency, then starts the next', async () => {
    let latencyMs = 1;
    const { clock, t } = traffic(() => ({ ok: true, latencyMs }));
    t.start();
    await clock.advance(500);
    const first = t.takePeriod();
    latencyMs = 40;
    await clock.advance(500);
    const second = t.takePeriod();
    await t.stop();
    expect(first.ok).toBeGreaterThanOrEqual(49);
    expect(first.maxMs).toBeCloseTo(1, 1);
    expect(second.p50Ms).toBeCloseTo(40, 0);
    expect(t.latency.maxMs).toBeCloseTo(40, 0);
    expect(t.takePeriod()).toEqual({ ok: 0, failed: 0, faultFailed: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 });
  });
});

describe('httpProbe', () => {
  it('names the connection a failure met: a reset of a reused keep-alive connection, or of a fresh one', async () => {
    // Answers each connection's first request with a kept-alive 200, and resets it at the second;
    // resets every connection at once while `resetFirst` is set.
    let resetFirst = false;
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      let requests = 0;
      socket.on('data', () => {
        requests++;
        if (resetFirst || requests > 1) socket.resetAndDestroy();
        else socket.write('HTTP/1.1 200 OK\r\nx-backend: echo\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok');
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { probe, close } = httpProbe('127.0.0.1', (server.address() as AddressInfo).port, { maxSockets: 1 });
    try {
      expect(await probe('a.test', true)).toMatchObject({ ok: true });
      expect(await probe('a.test', true)).toMatchObject({ ok: false, refused: false, what: expect.stringMatching(/^ECONNRESET on a reused keep-alive connection after \d+ ms$/) });
      resetFirst = true;
      expect(await probe('a.test', false)).toMatchObject({ ok: false, what: expect.stringMatching(/^ECONNRESET on a fresh connection after \d+ ms$/) });
    } finally {
      close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('HAProxy process samples', () => {
  const snapshot: ProcSnapshot = {
    master: { pid: 10, reloads: 2, uptimeSeconds: 60, version: '2.6', failedReloads: 0 },
    workers: [{ pid: 12, reloads: 0, uptimeSeconds: 5, version: '2.6' }],
    oldWorkers: [
      { pid: 11, reloads: 1, uptimeSeconds: 30, version: '2.6' },
      { pid: 9, reloads: 2, uptimeSeconds: 50, version: '2.6' },
    ],
    programs: [],
  };
  const status = (kb: number): string => `Name:\thaproxy\nVmPeak:\t  900000 kB\nVmRSS:\t  ${kb} kB\nThreads:\t2\n`;

  it('reads VmRSS from /proc/<pid>/status, and nothing from a text without it', () => {
    expect(vmRssKb(status(20480))).toBe(20480);
    expect(vmRssKb('Name:\thaproxy\n')).toBeUndefined();
  });

  it('counts the current and draining workers and sums the RSS of the master and every worker; a process gone counts 0', async () => {
    const rss: Record<number, number> = { 10: 10240, 12: 51200, 11: 40960 };
    const sample = await haproxySample(snapshot, async (pid) => {
      const kb = rss[pid];
      if (kb === undefined) throw new Error('ENOENT');
      return status(kb);
    });
    expect(sample).toEqual({ workers: 3, oldWorkers: 2, rssMb: 100, masterPid: 10 });
  });
});

describe('countGrowth', () => {
  const series = (value: (i: number) => number): [number, number][] => Array.from({ length: 120 }, (_, i) => [i * 1000, value(i)]);

  it('finds a worker count that returns to one between reloads bounded', () => {
    const g = countGrowth(series((i) => (i % 10 < 3 ? 3 : 1)), 0, 5);
    expect(g).toMatchObject({ firstHalfFloor: 1, secondHalfFloor: 1, peak: 3, growing: false });
  });

  it('finds a floor that rises, or a peak past the bound, growing', () => {
    expect(countGrowth(series((i) => (i < 60 ? 1 : 2)), 0, 5)?.growing).toBe(true);
    expect(countGrowth(series((i) => (i === 100 ? 6 : 1)), 0, 5)).toMatchObject({ peak: 6, growing: true });
  });

  it('gives no verdict on too few samples', () => {
    expect(countGrowth([[0, 1]], 0, 5)).toBeNull();
  });
});

describe('faults against a serving HAProxy', () => {
  it('recovers a fault only at a deployment of the version at clearing or later, not at a render', () => {
    const log = new FaultLog({ serving: true });
    expect(awaitedSuccess('crash', true)).toBe('deploy');
    log.injected('crash', 0);
    log.cleared(10, 7);
    log.succeeded('render', 20, 9);
    log.succeeded('deploy', 30, 6);
    expect(log.open?.kind).toBe('crash');
    log.succeeded('deploy', 40, 7);
    expect(log.open).toBeUndefined();
    expect(log.records[0]).toMatchObject({ recoveredMs: 40, recoveredVersion: 7 });
  });

  it('kills HAProxy and clears the fault once HAProxy runs again, at the store version then', async () => {
    const clock = new FakeClock();
    const log = new FaultLog({ serving: true });
    const stores = new StoreProvider();
    const killed: string[] = [];
    const injector = new FaultInjector({
      log,
      workers: new WorkerFaultSwitch(),
      elector: new SwitchableElector(),
      outputRoot: '/nonexistent/soak-test',
      stores,
      clock,
      holdMs: 1000,
      elapsedMs: () => clock.monotonic(),
      renderTimeoutMs: 5000,
      haproxy: {
        kill: async (which) => {
          killed.push(which);
          await clock.advance(700);
        },
        boundMs: 60_000,
      },
    });
    const injectedAt = clock.monotonic();
    await injector.inject('haproxy-master');
    expect(killed).toEqual(['master']);
    expect(log.open).toMatchObject({ kind: 'haproxy-master', injectedMs: injectedAt, clearedMs: injectedAt + 700, clearedVersion: stores.version });
  });

  it('records a HAProxy fault without a HAProxy as failed, naming why, and closes it', async () => {
    const clock = new FakeClock();
    const log = new FaultLog();
    const injector = new FaultInjector({ log, workers: new WorkerFaultSwitch(), elector: new SwitchableElector(), outputRoot: '/x', stores: new StoreProvider(), clock, holdMs: 1, elapsedMs: () => 0, renderTimeoutMs: 5000 });
    await injector.inject('haproxy-worker');
    expect(log.open).toBeUndefined();
    expect(log.records[0]).toMatchObject({ clearedMs: null, recoveredMs: null, failure: 'haproxy-worker could not be injected: haproxy-worker needs a HAProxy' });
  });
});

describe('SyntheticCluster for a served soak', () => {
  it('puts every pod where podAddress says, on podPort, and never deletes the stable apps', () => {
    const stores = new StoreProvider(ROUTING_STORES);
    const cluster = new SyntheticCluster({ ingresses: 20, seed: 3, stable: 10, podPort: 9000, podAddress: (index, pod, slot) => `127.0.91.${1 + slot * 4 + ((index + pod) % 4)}` });
    cluster.populate(stores);
    for (let i = 0; i < 3000; i++) cluster.change(stores);
    for (let i = 0; i < 10; i++) expect(stores.store('ingresses').get(`${cluster.namespace(i)}/app-${i}`), `app-${i}`).toBeDefined();
    const slice = cluster.endpointSlice(5, 7) as unknown as { ports: { port: number }[]; endpoints: { addresses: string[] }[] };
    expect(slice.ports[0]?.port).toBe(9000);
    // Generation 7 moves slot 1 to pod 7; slots 0 and 2 keep pods 0 and 2.
    expect(slice.endpoints.map((e) => e.addresses[0])).toEqual(['127.0.91.2', '127.0.91.5', '127.0.91.12']);
  });

  it('edits an Ingress with annotations of its own beside the common ones', () => {
    const stores = new StoreProvider(ROUTING_STORES);
    const cluster = new SyntheticCluster({ ingresses: 2, annotations: { 'haproxy.org/check': 'false' } });
    cluster.populate(stores);
    cluster.editIngress(stores, 1, { 'haproxy.org/timeout-server': '31s' });
    const ingress = stores.store('ingresses').get(`${cluster.namespace(1)}/app-1`) as unknown as { metadata: { annotations: Record<string, string> }; spec: { rules: { host: string }[] } };
    expect(ingress.metadata.annotations).toMatchObject({ 'haproxy.org/check': 'false', 'haproxy.org/timeout-server': '31s' });
    expect(ingress.spec.rules[0]?.host).toBe(cluster.host(1));
  });
});

describe('soak options with --haproxy', () => {
  const base: SoakOptions = { durationSeconds: 60, ingresses: 10, rate: 5, faultIntervalSeconds: 10, faults: [], renderTimeoutMs: 5000, workerHeapMb: 64, seed: 1, outDir: '/tmp/x' };
  const haproxy = { trafficRate: 100, reloadIntervalSeconds: 10, maxOldWorkers: 3 };

  it('refuses the HAProxy faults without --haproxy, naming them', () => {
    expect(() => validateSoakOptions({ ...base, faults: ['haproxy-master'] })).toThrow('--faults haproxy-worker, haproxy-master need --haproxy');
    expect(() => validateSoakOptions({ ...base, faults: ['haproxy-master'], haproxy })).not.toThrow();
  });

  it('refuses the output fault with --haproxy, and a traffic rate or bound out of range', () => {
    expect(() => validateSoakOptions({ ...base, faults: ['output'], haproxy })).toThrow('--faults output cannot be used with --haproxy');
    expect(() => validateSoakOptions({ ...base, haproxy: { ...haproxy, trafficRate: 0 } })).toThrow('--traffic-rate');
    expect(() => validateSoakOptions({ ...base, haproxy: { ...haproxy, maxOldWorkers: -1 } })).toThrow('--max-old-workers');
    expect(() => validateSoakOptions({ ...base, haproxy: { ...haproxy, reloadIntervalSeconds: Number.NaN } })).toThrow('--reload-interval');
  });
});

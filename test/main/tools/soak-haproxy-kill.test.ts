// The soak's HAProxy kill (haproxy-kill.ts) and the bounds on every fault's clearing and recovery
// (FaultInjector), against a fake master CLI on a fake clock: a HAProxy whose master re-executes
// for a reload (its CLI refusing connections meanwhile), whose worker a reload replaces, and
// whose master the supervisor restarts a while after its current worker was killed.
import { describe, expect, it } from 'vitest';
import { HaproxyCliError } from '../../../src/main/core/errors.js';
import type { ProcEntry, ProcSnapshot } from '../../../src/main/haproxy/show-proc.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { CLEAR_MARGIN_MS, FaultInjector, RECOVERY_MARGIN_MS } from '../../../src/main/tools/soak/fault-injector.js';
import { FaultLog, type FaultRecord } from '../../../src/main/tools/soak/fault-log.js';
import { killHaproxyProcess } from '../../../src/main/tools/soak/haproxy-kill.js';
import { SwitchableElector } from '../../../src/main/tools/soak/switchable-elector.js';
import { WorkerFaultSwitch, takeWorkerFault, type WorkerFaultData } from '../../../src/main/tools/soak/worker-faults.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const SOCKET = '/run/soak/master.sock';
const BOUND_MS = 60_000;

/** A master and its workers as `show proc` lists them; time is the fake clock's. */
class FakeHaproxy {
  master = 100;
  workers: number[] = [101];
  oldWorkers: number[] = [];
  /** Until then (monotonic ms), the master CLI refuses connections: the master re-executes. */
  busyUntil = -1;
  /** How long after its current worker dies the supervisor has a new master with a worker. */
  restartMs = 3000;
  /** When set, `show proc` never answers. */
  silent = false;
  readonly killed: number[] = [];
  readonly asked: number[] = [];
  #nextPid = 200;

  constructor(readonly clock: FakeClock) {}

  showProc = (): Promise<ProcSnapshot> => {
    this.asked.push(this.clock.monotonic());
    if (this.silent) return new Promise(() => undefined);
    if (this.clock.monotonic() < this.busyUntil) {
      return Promise.reject(new HaproxyCliError(SOCKET, 'connect', `ECONNREFUSED: connect ECONNREFUSED ${SOCKET}`));
    }
    const entry = (pid: number): ProcEntry => ({ pid, reloads: 0, uptimeSeconds: 1, version: '2.6.12' });
    return Promise.resolve({
      master: { ...entry(this.master), failedReloads: 0 },
      workers: this.workers.map(entry),
      oldWorkers: this.oldWorkers.map(entry),
      programs: [],
    });
  };

  /** SIGKILL: a current worker's death takes the master down; the supervisor starts another later. */
  kill = (pid: number): void => {
    const alive = pid === this.master || this.workers.includes(pid) || this.oldWorkers.includes(pid);
    if (!alive) throw Object.assign(new Error(`kill ESRCH ${pid}`), { code: 'ESRCH' });
    this.killed.push(pid);
    this.oldWorkers = this.oldWorkers.filter((w) => w !== pid);
    if (pid === this.master || this.workers.includes(pid)) {
      this.workers = [];
      this.oldWorkers = [];
      this.busyUntil = Number.POSITIVE_INFINITY;
      this.clock.setTimeout(() => {
        this.master = this.#nextPid++;
        this.workers = [this.#nextPid++];
        this.busyUntil = -1;
      }, this.restartMs);
    }
  };

  /** A reload: the master re-executes for `busyMs`, then a new worker is current and the old one drains. */
  reload(busyMs: number): void {
    this.busyUntil = this.clock.monotonic() + busyMs;
    const fresh = this.#nextPid++;
    this.clock.setTimeout(() => {
      this.oldWorkers = [...this.oldWorkers, ...this.workers];
      this.workers = [fresh];
    }, busyMs);
  }
}

describe('killHaproxyProcess', () => {
  it('asks show proc again while the master CLI refuses connections during a reload, then kills the worker current after it', async () => {
    const clock = new FakeClock();
    const haproxy = new FakeHaproxy(clock);
    haproxy.reload(4000);
    const killing = killHaproxyProcess({ which: 'worker', showProc: haproxy.showProc, kill: haproxy.kill, clock, boundMs: BOUND_MS });
    await clock.advance(4000 + haproxy.restartMs + 200);
    // Polled every 50 ms through the 4 s of the reload.
    await expect(killing).resolves.toEqual({ pid: 200, retries: 80, firstRetry: `show proc failed: HAProxy CLI ${SOCKET}: ECONNREFUSED: connect ECONNREFUSED ${SOCKET}` });
    expect(haproxy.killed).toEqual([200]);
    expect(haproxy.workers).toEqual([202]);
  });

  it('reads the table again when the listed worker is gone by the signal, and kills the current one', async () => {
    const clock = new FakeClock();
    const haproxy = new FakeHaproxy(clock);
    const listed = haproxy.showProc;
    let first = true;
    // The first table is stale: a reload replaced 101 by 150, and 101 has finished draining.
    haproxy.showProc = async () => {
      const table = await listed();
      if (!first) return table;
      first = false;
      haproxy.workers = [150];
      return table;
    };
    const killing = killHaproxyProcess({ which: 'worker', showProc: haproxy.showProc, kill: haproxy.kill, clock, boundMs: BOUND_MS });
    await clock.advance(haproxy.restartMs + 200);
    await expect(killing).resolves.toEqual({ pid: 150, retries: 1, firstRetry: 'worker 101 was already gone when signalled' });
    expect(haproxy.killed).toEqual([150]);
  });

  it('is done when a reload replaced the killed worker before the master noticed, without a master restart', async () => {
    const clock = new FakeClock();
    const haproxy = new FakeHaproxy(clock);
    // This HAProxy's master stays: the killed worker was already being replaced.
    haproxy.kill = (pid) => {
      haproxy.killed.push(pid);
      haproxy.workers = [300];
    };
    const killing = killHaproxyProcess({ which: 'worker', showProc: haproxy.showProc, kill: haproxy.kill, clock, boundMs: BOUND_MS });
    await clock.advance(100);
    await expect(killing).resolves.toEqual({ pid: 101, retries: 0, firstRetry: undefined });
    expect(haproxy.killed).toEqual([101]);
    expect(haproxy.master).toBe(100);
  });

  it('after killing the master, waits for a new master with a worker', async () => {
    const clock = new FakeClock();
    const haproxy = new FakeHaproxy(clock);
    let done = false;
    const killing = killHaproxyProcess({ which: 'master', showProc: haproxy.showProc, kill: haproxy.kill, clock, boundMs: BOUND_MS }).then(() => {
      done = true;
    });
    await clock.advance(haproxy.restartMs - 100);
    expect(done).toBe(false);
    await clock.advance(200);
    await killing;
    expect(haproxy.killed).toEqual([100]);
  });

  it('rejects at its bound, naming what it last saw, when show proc never answers', async () => {
    const clock = new FakeClock();
    const haproxy = new FakeHaproxy(clock);
    haproxy.silent = true;
    const killing = killHaproxyProcess({ which: 'worker', showProc: haproxy.showProc, kill: haproxy.kill, clock, boundMs: BOUND_MS });
    const outcome = killing.then(
      () => 'resolved',
      (error: unknown) => (error as Error).message,
    );
    await clock.advance(BOUND_MS);
    expect(await outcome).toMatch(/^HAProxy's worker was not found and killed within 60 s \(show proc failed: timed out .*show proc\)$/);
    expect(haproxy.killed).toEqual([]);
  });

  it('rejects at its bound when HAProxy never runs again, naming the killed worker', async () => {
    const clock = new FakeClock();
    const haproxy = new FakeHaproxy(clock);
    haproxy.restartMs = 10 * BOUND_MS;
    haproxy.kill = (pid) => {
      haproxy.killed.push(pid);
    };
    const outcome = killHaproxyProcess({ which: 'worker', showProc: haproxy.showProc, kill: haproxy.kill, clock, boundMs: BOUND_MS }).then(
      () => 'resolved',
      (error: unknown) => (error as Error).message,
    );
    await clock.advance(BOUND_MS);
    expect(await outcome).toBe("HAProxy's worker was not replaced after the kill within 60 s (after killing worker 101: master 100, current workers 101)");
  });
});

describe('fault bounds', () => {
  const stores = new StoreProvider();

  function rig(kill: (which: 'worker' | 'master') => Promise<void>, renderTimeoutMs = 5000, clock = new FakeClock()) {
    const log = new FaultLog({ serving: true });
    const workers = new WorkerFaultSwitch();
    const failed: FaultRecord[] = [];
    const injector = new FaultInjector({
      log,
      workers,
      elector: new SwitchableElector(),
      outputRoot: '/nonexistent/soak-test',
      stores,
      clock,
      holdMs: 1000,
      elapsedMs: () => clock.monotonic(),
      renderTimeoutMs,
      haproxy: { kill, boundMs: BOUND_MS },
      onFailed: (record) => failed.push(record),
    });
    return { clock, log, workers, injector, failed };
  }

  it('kills a worker while a reload makes the master CLI refuse its first show proc, and clears the fault', async () => {
    const clock = new FakeClock();
    const haproxy = new FakeHaproxy(clock);
    const { log, injector } = rig((which) => killHaproxyProcess({ which, showProc: haproxy.showProc, kill: haproxy.kill, clock, boundMs: BOUND_MS }).then(() => undefined), 5000, clock);
    haproxy.reload(2000);
    const injecting = injector.inject('haproxy-worker');
    await clock.advance(2000 + haproxy.restartMs + 200);
    await injecting;
    expect(log.open).toMatchObject({ kind: 'haproxy-worker', failure: null });
    expect(log.open?.clearedMs).not.toBeNull();
    expect(haproxy.killed).toEqual([200]);
  });

  it('gives a HAProxy fault whose kill rejects up as failed with the reason, and the next fault may follow', async () => {
    const { log, injector, failed } = rig(() => Promise.reject(new Error('HAProxy did not run again')));
    await injector.inject('haproxy-worker');
    expect(log.open).toBeUndefined();
    expect(log.records[0]).toMatchObject({ kind: 'haproxy-worker', clearedMs: null, recoveredMs: null, failedMs: 0, failure: 'haproxy-worker could not be injected: HAProxy did not run again' });
    expect(failed.map((r) => r.kind)).toEqual(['haproxy-worker']);
    await log.settled();
    // The rotation goes on: the next injection is accepted (and, with this kill, fails too).
    await injector.inject('haproxy-master');
    expect(log.records.map((r) => [r.kind, r.failure !== null])).toEqual([
      ['haproxy-worker', true],
      ['haproxy-master', true],
    ]);
  });

  it('gives a fault up at its clear bound when its kill never settles, and a late clearing does not touch the next fault', async () => {
    let finishKill: () => void = () => undefined;
    const { clock, log, injector, failed } = rig((which) =>
      which === 'worker' ? new Promise<void>((resolve) => (finishKill = resolve)) : new Promise<void>(() => undefined),
    );
    void injector.inject('haproxy-worker');
    await clock.advance(BOUND_MS + CLEAR_MARGIN_MS - 1);
    expect(log.open?.kind).toBe('haproxy-worker');
    await clock.advance(1);
    expect(log.open).toBeUndefined();
    expect(failed[0]?.failure).toBe(`not cleared within ${(BOUND_MS + CLEAR_MARGIN_MS) / 1000} s of its injection`);
    void injector.inject('haproxy-master');
    finishKill();
    await clock.advance(10);
    expect(log.open).toMatchObject({ kind: 'haproxy-master', clearedMs: null });
  });

  it('gives a worker fault no render took up at one render timeout plus the margin, and withdraws it', async () => {
    const { clock, log, workers, injector } = rig(() => Promise.resolve(), 5000);
    await injector.inject('hang');
    await clock.advance(5000 + CLEAR_MARGIN_MS);
    expect(log.records[0]?.failure).toBe(`not cleared within ${(5000 + CLEAR_MARGIN_MS) / 1000} s of its injection`);
    expect(takeWorkerFault(workers.worker.workerData as WorkerFaultData)).toBeUndefined();
  });

  it('gives a cleared fault up when it does not recover within one render timeout plus the margin', async () => {
    const { clock, log, injector, failed } = rig(() => Promise.resolve(), 5000);
    await injector.inject('haproxy-master');
    const clearedVersion = log.open?.clearedVersion;
    expect(clearedVersion).toBe(stores.version);
    // Only a deployment of an older version comes: it proves nothing.
    log.succeeded('deploy', 10, stores.version - 1);
    await clock.advance(5000 + RECOVERY_MARGIN_MS);
    expect(log.open).toBeUndefined();
    expect(failed[0]?.failure).toBe(`cleared, but not recovered within ${(5000 + RECOVERY_MARGIN_MS) / 1000} s (no render or deployment of store version ${clearedVersion} or later)`);
  });

  it('leaves a fault that recovers in time alone', async () => {
    const { clock, log, injector, failed } = rig(() => Promise.resolve(), 5000);
    await injector.inject('haproxy-master');
    log.succeeded('deploy', 10, stores.version);
    await injector.inject('haproxy-worker');
    log.succeeded('deploy', 20, stores.version);
    await clock.advance(10 * (5000 + RECOVERY_MARGIN_MS + BOUND_MS));
    expect(failed).toEqual([]);
    expect(log.records.map((r) => r.recoveredMs)).toEqual([10, 20]);
    expect(clock.pending).toBe(0);
  });
});

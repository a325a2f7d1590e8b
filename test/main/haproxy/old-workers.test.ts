// OldWorkerBound against a scripted process table and a FakeClock: it picks the oldest old
// workers past the bound, signals only children of the master, escalates to SIGKILL when a worker
// stays listed, leaves room before a reload, and refuses a bound that is not a whole number.
import { describe, expect, it } from 'vitest';
import { OldWorkerBound, excessOldWorkers, parentPid } from '../../../src/main/haproxy/old-workers.js';
import type { ProcEntry, ProcSnapshot } from '../../../src/main/haproxy/show-proc.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const MASTER = 100;

function entry(pid: number, reloads: number, uptimeSeconds = reloads * 10): ProcEntry {
  return { pid, reloads, uptimeSeconds, version: '2.6.12' };
}

/** A process table whose old workers leave when signalled (unless `stubborn` holds their pid). */
class Table {
  old: ProcEntry[];
  readonly signals: [number, NodeJS.Signals][] = [];
  readonly stubborn = new Set<number>();
  readonly parents = new Map<number, number>();

  constructor(old: ProcEntry[]) {
    this.old = old;
    for (const w of old) this.parents.set(w.pid, MASTER);
  }

  snapshot(): ProcSnapshot {
    return { master: { ...entry(MASTER, 9), failedReloads: 0 }, workers: [entry(900, 0)], oldWorkers: [...this.old], programs: [] };
  }

  bound(maxOldWorkers: number, clock = new FakeClock()): OldWorkerBound {
    return new OldWorkerBound({
      maxOldWorkers,
      clock,
      showProc: async () => this.snapshot(),
      kill: (pid, signal) => {
        this.signals.push([pid, signal]);
        if (signal === 'SIGKILL' || !this.stubborn.has(pid)) this.old = this.old.filter((w) => w.pid !== pid);
      },
      parentOf: async (pid) => this.parents.get(pid),
    });
  }
}

describe('OldWorkerBound', () => {
  it('names the old workers past the bound oldest first: most reloads survived, then longest uptime', () => {
    const table = new Table([entry(11, 1), entry(13, 3), entry(12, 2, 5), entry(14, 2, 50)]);
    expect(excessOldWorkers(table.snapshot(), 1).map((w) => w.pid)).toEqual([13, 14, 12]);
    expect(excessOldWorkers(table.snapshot(), 4)).toEqual([]);
    expect(excessOldWorkers(table.snapshot(), 0).map((w) => w.pid)).toEqual([13, 14, 12, 11]);
  });

  it('stops the oldest old workers with SIGTERM until the bound holds, and leaves the current worker alone', async () => {
    const table = new Table([entry(11, 1), entry(12, 2), entry(13, 3), entry(14, 4)]);
    const result = await table.bound(2).afterReload();
    expect(result).toEqual({ stopped: [14, 13], killed: [], remaining: 2 });
    expect(table.signals).toEqual([
      [14, 'SIGTERM'],
      [13, 'SIGTERM'],
    ]);
    expect(table.old.map((w) => w.pid)).toEqual([11, 12]);
  });

  it('does nothing while the old workers are within the bound', async () => {
    const table = new Table([entry(11, 1), entry(12, 2)]);
    expect(await table.bound(2).afterReload()).toEqual({ stopped: [], killed: [], remaining: 2 });
    expect(table.signals).toEqual([]);
  });

  it('makes room for the worker a reload is about to retire, so the count never passes the bound', async () => {
    const table = new Table([entry(11, 1), entry(12, 2)]);
    expect(await table.bound(2).beforeReload()).toMatchObject({ stopped: [12], remaining: 1 });
    const none = new Table([entry(11, 1)]);
    expect(await none.bound(0).beforeReload()).toMatchObject({ stopped: [11], remaining: 0 });
  });

  it('sends SIGKILL to an old worker still listed after killAfterMs on the injected clock', async () => {
    const table = new Table([entry(11, 1), entry(12, 2)]);
    table.stubborn.add(12);
    const clock = new FakeClock();
    const pending = table.bound(1, clock).afterReload();
    await clock.advance(1_950);
    expect(table.signals).toEqual([[12, 'SIGTERM']]);
    await clock.advance(100);
    expect(await pending).toEqual({ stopped: [12], killed: [12], remaining: 1 });
    expect(table.signals).toEqual([
      [12, 'SIGTERM'],
      [12, 'SIGKILL'],
    ]);
  });

  it('never signals a pid that is no longer a child of the master (gone, or reused by another process)', async () => {
    const table = new Table([entry(11, 1), entry(12, 2), entry(13, 3)]);
    table.parents.set(13, 1);
    table.parents.delete(12);
    const result = await table.bound(0).afterReload();
    expect(result.stopped).toEqual([11]);
    expect(table.signals).toEqual([[11, 'SIGTERM']]);
  });

  it('refuses a bound that is not a whole number of workers', () => {
    const table = new Table([]);
    expect(() => table.bound(-1)).toThrow(/maxOldWorkers must be a whole number of workers, 0 or more \(got -1\)/);
    expect(() => table.bound(1.5)).toThrow(/got 1\.5/);
  });

  it("reads a live process's parent from /proc, and nothing for a pid that does not exist", async () => {
    expect(await parentPid(process.pid)).toBe(process.ppid);
    expect(await parentPid(2 ** 22 + 1)).toBeUndefined();
  });
});

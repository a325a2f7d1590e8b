import { queueOptionsSymbol, type PiscinaTask } from 'piscina';
import { describe, expect, it } from 'vitest';
import { PipelineError } from '../../../src/main/core/errors.js';
import { WorkerLeases, type BalancedWorker, type Lease } from '../../../src/main/pipeline/pool/worker-leases.js';
import { track, waitUntil } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const never = new AbortController().signal;

/** Leases over a pool whose announced workers are `available` and whose piscina threads are `running`. */
function leasesOver(available: number[], running: Set<number> = new Set(available), clock = new FakeClock()): WorkerLeases {
  return new WorkerLeases({ clock, available: () => available, running: (id) => running.has(id) });
}

function taskFor(lease: Lease | null): PiscinaTask {
  return { taskId: 1, filename: 'worker.js', name: 'default', created: 0, isAbortable: true, [queueOptionsSymbol]: lease };
}

function worker(id: number, currentUsage = 0): BalancedWorker {
  return { id, currentUsage, terminating: false, destroyed: false };
}

describe('WorkerLeases', () => {
  it('leases the preferred worker while it is free, and the oldest free one while another execute holds it', async () => {
    const leases = leasesOver([1, 2, 3]);
    const sticky = await leases.acquire(2, never, 1000);
    const next = await leases.acquire(2, never, 1000);
    expect([sticky.threadId, next.threadId]).toEqual([2, 1]);
    expect(leases.isLeased(2)).toBe(true);
    expect(leases.isLeased(3)).toBe(false);
  });

  it('makes an acquire wait while every worker is leased, and hands it whichever worker is released first', async () => {
    const leases = leasesOver([1, 2]);
    const first = await leases.acquire(1, never, 1000);
    const second = await leases.acquire(1, never, 1000);
    const waiting = track(leases.acquire(1, never, 1000));
    await waitUntil(() => leases.waiting === 1, 'the acquire to wait');
    leases.release(second);
    expect((await waiting.promise).threadId).toBe(2);
    expect(leases.waiting).toBe(0);
    expect(leases.isLeased(first.threadId)).toBe(true);
  });

  it('hands a waiting acquire a worker that arrives', async () => {
    const available = [1];
    const leases = leasesOver(available, new Set([1, 2]));
    await leases.acquire(1, never, 1000);
    const waiting = track(leases.acquire(1, never, 1000));
    await waitUntil(() => leases.waiting === 1, 'the acquire to wait');
    available.push(2);
    leases.changed();
    expect((await waiting.promise).threadId).toBe(2);
  });

  it('fails a wait for a free worker with POOL_UNAVAILABLE once its deadline passes on the clock', async () => {
    const clock = new FakeClock();
    const leases = leasesOver([1], new Set([1]), clock);
    await leases.acquire(1, never, 1000);
    const waiting = track(leases.acquire(1, never, 1000).catch((error: unknown) => error));
    await clock.advance(999);
    expect(waiting.done).toBe(false);
    await clock.advance(1);
    const failure = await waiting.promise;
    expect(failure).toBeInstanceOf(PipelineError);
    expect(failure).toMatchObject({ code: 'POOL_UNAVAILABLE', terminal: false, message: 'render failed: no worker became free within 1000 ms' });
  });

  it('rejects a waiting acquire with an AbortError when its signal aborts, and one after close with POOL_UNAVAILABLE', async () => {
    const leases = leasesOver([1]);
    await leases.acquire(1, never, 1000);
    const caller = new AbortController();
    const aborted = leases.acquire(1, caller.signal, 1000).catch((error: unknown) => error);
    const closed = leases.acquire(1, never, 1000).catch((error: unknown) => error);
    await waitUntil(() => leases.waiting === 2, 'both acquires to wait');
    caller.abort();
    expect(await aborted).toMatchObject({ name: 'AbortError' });
    leases.close();
    expect(await closed).toMatchObject({ code: 'POOL_UNAVAILABLE' });
    expect(leases.waiting).toBe(0);
  });

  it('balances a task onto its lease\'s worker once that one is idle, and holds it while that worker is busy or still starting', async () => {
    const leases = leasesOver([1, 2]);
    const lease = await leases.acquire(2, never, 1000);
    const task = taskFor(lease);
    expect(leases.pick(task, [worker(1), worker(2)])?.id).toBe(2);
    expect(leases.pick(task, [worker(1), worker(2, Infinity)])).toBeNull();
    // Piscina offers only ready workers while its queue is empty; worker 2 still runs, so wait for it.
    expect(leases.pick(task, [worker(1)])).toBeNull();
  });

  it('moves a task whose worker exited, and its lease, to an idle worker nobody leases', async () => {
    const running = new Set([1, 2, 3]);
    const leases = leasesOver([1, 2, 3], running);
    const lease = await leases.acquire(1, never, 1000);
    await leases.acquire(2, never, 1000);
    running.delete(1);
    expect(leases.pick(taskFor(lease), [worker(2), worker(3)])?.id).toBe(3);
    expect(lease.threadId).toBe(3);
    expect(leases.isLeased(1)).toBe(false);
    expect(leases.isLeased(3)).toBe(true);
    expect(leases.pick(taskFor(null), [worker(2), worker(3)])).toBeNull();
  });
});

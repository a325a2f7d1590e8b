import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock, TimerHandle } from '../../../src/main/core/clock.js';
import { LeaseElector, microTime } from '../../../src/main/leadership/lease-elector.js';
import { loadKubeConfig } from '../../../src/main/sources/kubernetes/kube-config.js';
import { kubeRequest } from '../../../src/main/sources/kubernetes/kube-http.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeKubeApi, type FakeObject } from '../../helpers/fake-kube-api.js';
import { silentLogger, spyLogger, type SpyLogger } from '../../helpers/loggers.js';

const LEASE_MS = 15_000;
const RENEW_MS = 10_000;
const RETRY_MS = 2_000;
const LEASES = '/apis/coordination.k8s.io/v1/leases';
const KEY = 'kube-system/haptic';
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * One replica's view of the shared FakeClock. It counts the replica's waits between two ticks (a
 * timer of exactly retryPeriod), so a test knows when a tick's real HTTP round trip is over and
 * the replica is parked on the clock again.
 */
class ReplicaClock implements Clock {
  parks = 0;
  constructor(readonly shared: FakeClock) {}
  now(): number {
    return this.shared.now();
  }
  monotonic(): number {
    return this.shared.monotonic();
  }
  setTimeout(callback: () => void, ms: number): TimerHandle {
    if (ms === RETRY_MS) this.parks++;
    return this.shared.setTimeout(callback, ms);
  }
  clearTimeout(handle: TimerHandle | undefined): void {
    this.shared.clearTimeout(handle);
  }
}

interface Replica {
  readonly identity: string;
  readonly elector: LeaseElector;
  readonly clock: ReplicaClock;
  readonly log: SpyLogger;
  /** `became` / `lost: <reason>`, with the fake time it happened at. */
  readonly events: { readonly what: string; readonly at: number }[];
  readonly stop: AbortController;
  done: Promise<void>;
}

let api: FakeKubeApi;
let dir: string;
let kubeConfig: KubeConfig;
let clock: FakeClock;
let replicas: Replica[];

beforeEach(async () => {
  api = await FakeKubeApi.start();
  dir = await mkdtemp(join(tmpdir(), 'lease-elector-'));
  kubeConfig = loadKubeConfig(await api.writeKubeconfig(dir));
  clock = new FakeClock();
  replicas = [];
});

afterEach(async () => {
  for (const replica of replicas) replica.stop.abort();
  await Promise.all(replicas.map((r) => r.done));
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

function replica(identity: string): Replica {
  const replicaClock = new ReplicaClock(clock);
  const log = spyLogger();
  const elector = new LeaseElector({
    kubeConfig,
    namespace: 'kube-system',
    name: 'haptic',
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    clock: replicaClock,
    logger: log.logger,
  });
  const r: Replica = { identity, elector, clock: replicaClock, log, events: [], stop: new AbortController(), done: Promise.resolve() };
  replicas.push(r);
  return r;
}

/** Starts campaigning and waits until the first tick is over. */
async function start(r: Replica): Promise<Replica> {
  r.done = r.elector.run(
    {
      onBecameLeader: () => r.events.push({ what: 'became', at: clock.now() }),
      onLostLeadership: (reason) => r.events.push({ what: `lost: ${reason}`, at: clock.now() }),
    },
    r.stop.signal,
  );
  await eventually(() => r.clock.parks >= 1, `${r.identity}'s first tick`);
  return r;
}

/** Steps until `done` holds, failing after `limit` steps instead of running into the test timeout. */
async function stepUntil(done: () => boolean, what: string, running: Replica[], limit = 30): Promise<void> {
  for (let i = 0; i < limit && !done(); i++) await step(...running);
  if (!done()) throw new Error(`still waiting for ${what} after ${limit} retry periods`);
}

/** Moves the clock one retry period on, and waits until every running replica's tick is over. */
async function step(...running: Replica[]): Promise<void> {
  const before = running.map((r) => r.clock.parks);
  await clock.advance(RETRY_MS);
  await eventually(() => running.every((r, i) => r.clock.parks > (before[i] ?? 0)), 'every replica parked again');
}

const lease = (): FakeObject => {
  const stored = api.get(LEASES, KEY);
  if (stored === undefined) throw new Error('no lease on the server');
  return stored;
};
const spec = () => lease().spec as { holderIdentity: string; renewTime: string; acquireTime: string; leaseTransitions: number; leaseDurationSeconds: number };
const leaders = () => replicas.filter((r) => r.elector.leading).map((r) => r.identity);

describe('LeaseElector', () => {
  it('creates the lease and leads when it is the first replica, writing MicroTime times', async () => {
    const a = await start(replica('a'));
    expect(a.events.map((e) => e.what)).toEqual(['became']);
    expect(spec()).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: microTime(clock.now()),
      renewTime: microTime(clock.now()),
      leaseTransitions: 0,
    });
    expect(spec().renewTime).toMatch(MICRO_TIME);
    expect(api.statuses).toEqual([404, 201]);
  });

  it('keeps a second replica following while the leader renews every retry period', async () => {
    const a = await start(replica('a'));
    const b = await start(replica('b'));
    for (let i = 0; i < 12; i++) {
      await step(a, b);
      expect(spec().renewTime).toBe(microTime(clock.now()));
    }
    // 24 s: well past the lease duration, and b never took over.
    expect(leaders()).toEqual(['a']);
    expect(b.events).toEqual([]);
    expect(spec()).toMatchObject({ holderIdentity: 'a', leaseTransitions: 0 });
    expect(api.statuses.filter((s) => s !== 200 && s !== 201 && s !== 404)).toEqual([]);
  });

  it('steps down when no renewal succeeds for the renew deadline, and leads again once its own lease is readable', async () => {
    const a = await start(replica('a'));
    const renewedAt = clock.now();
    api.failNext(1_000);
    await stepUntil(() => !a.elector.leading, 'a to step down', [a]);
    expect(a.events.map((e) => e.what)).toEqual(['became', 'lost: renew deadline exceeded']);
    expect((a.events[1]?.at ?? 0) - renewedAt).toBe(RENEW_MS);
    expect(a.log.warn).toHaveBeenCalledWith(expect.objectContaining({ reason: 'renew deadline exceeded' }), 'lost the lease');

    // The API answers again; the lease still names a and has not expired: a takes it back.
    api.failNext(0);
    await step(a);
    expect(a.events.map((e) => e.what)).toEqual(['became', 'lost: renew deadline exceeded', 'became']);
    expect(spec()).toMatchObject({ holderIdentity: 'a', leaseTransitions: 0 });
  });

  it('takes over an expired lease within leaseDuration + retryPeriod', async () => {
    const startedAt = clock.now();
    api.upsert(LEASES, leaseHeldBy('ghost', microTime(startedAt), 3));
    const b = await start(replica('b'));
    await stepUntil(() => b.elector.leading, 'b to take over', [b]);
    const took = clock.now() - startedAt;
    expect(took).toBeGreaterThanOrEqual(LEASE_MS);
    expect(took).toBeLessThanOrEqual(LEASE_MS + RETRY_MS);
    expect(spec()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 4 });
  });

  it('takes over at once a lease whose holder stopped renewing long ago', async () => {
    api.upsert(LEASES, leaseHeldBy('ghost', microTime(clock.now() - 60_000), 0));
    const b = await start(replica('b'));
    expect(b.events.map((e) => e.what)).toEqual(['became']);
  });

  it('counts a renewTime in its own future from when it first saw it (the holder clock runs ahead)', async () => {
    const startedAt = clock.now();
    api.upsert(LEASES, leaseHeldBy('ghost', microTime(startedAt + 60_000), 0));
    const b = await start(replica('b'));
    await stepUntil(() => b.elector.leading, 'b to take over', [b]);
    const took = clock.now() - startedAt;
    expect(took).toBeGreaterThanOrEqual(LEASE_MS);
    expect(took).toBeLessThanOrEqual(LEASE_MS + RETRY_MS);
  });

  it('lets exactly one of two replicas racing to create the lease win; the loser takes the 409 as a lost race', async () => {
    api.hold(2, (r) => r.method === 'POST');
    const [a, b] = await Promise.all([start(replica('a')), start(replica('b'))]);
    expect(leaders()).toHaveLength(1);
    expect(api.statuses.filter((s) => s === 409)).toHaveLength(1);
    const loser = leaders()[0] === 'a' ? b : a;
    expect(loser.log.debug).toHaveBeenCalledWith('lost the race to create the lease (409 AlreadyExists)');
    expect(loser.log.warn).not.toHaveBeenCalled();
    for (let i = 0; i < 3; i++) await step(a, b);
    expect(leaders()).toEqual([spec().holderIdentity]);
  });

  it('lets exactly one of two replicas racing for a free lease win with the resourceVersion both read', async () => {
    api.upsert(LEASES, leaseHeldBy('', microTime(clock.now()), 2));
    api.hold(2, (r) => r.method === 'GET');
    const [a, b] = await Promise.all([start(replica('a')), start(replica('b'))]);
    expect(leaders()).toHaveLength(1);
    expect(api.statuses).toEqual([200, 200, 200, 409]);
    const loser = leaders()[0] === 'a' ? b : a;
    expect(loser.log.debug).toHaveBeenCalledWith({ holder: '' }, 'lost the race for the lease (409 Conflict)');
    expect(loser.log.warn).not.toHaveBeenCalled();
    expect(spec()).toMatchObject({ holderIdentity: leaders()[0], leaseTransitions: 3 });
  });

  it('releases the lease on a clean stop, and the follower takes over at its next read', async () => {
    const a = await start(replica('a'));
    const b = await start(replica('b'));
    await step(a, b);
    a.stop.abort();
    await a.done;
    expect(a.events.map((e) => e.what)).toEqual(['became', 'lost: stopping']);
    expect(spec().holderIdentity).toBe('');
    expect(spec().renewTime).toMatch(MICRO_TIME);
    const stoppedAt = clock.now();

    await step(b);
    expect(b.events.map((e) => e.what)).toEqual(['became']);
    expect(clock.now() - stoppedAt).toBeLessThanOrEqual(RETRY_MS);
    expect(spec()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('steps down at once when a renewal conflicts and another replica holds the lease', async () => {
    const a = await start(replica('a'));
    api.upsert(LEASES, leaseHeldBy('intruder', microTime(clock.now()), 1));
    await step(a);
    expect(a.events.map((e) => e.what)).toEqual(['became', 'lost: the lease is now held by intruder']);
    expect(spec().holderIdentity).toBe('intruder');
  });

  it('rejects options that break the protocol, showing the value it got', () => {
    const base = { kubeConfig, namespace: 'kube-system', name: 'haptic', identity: 'a', logger: silentLogger() };
    expect(() => new LeaseElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(/renewDeadlineMs \(10000\) must be less than leaseDurationMs \(10000\)/);
    expect(() => new LeaseElector({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 3_000 })).toThrow(/retryPeriodMs \(3000\) must be less than renewDeadlineMs \(2000\)/);
    expect(() => new LeaseElector({ ...base, retryPeriodMs: Number.NaN })).toThrow(TypeError);
    expect(() => new LeaseElector({ ...base, identity: ' ' })).toThrow(/identity must be a non-empty string, got " "/);
    expect(() => new LeaseElector({ ...base, namespace: 'Kube System' })).toThrow(/"Kube System"/);
  });
});

describe('the fake API server', () => {
  it('refuses Lease times that are not MicroTime, as a real API server does', async () => {
    const post = (renewTime: string) =>
      kubeRequest(kubeConfig, {
        method: 'POST',
        path: '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases',
        body: { metadata: { name: renewTime.length > 24 ? 'micro' : 'date' }, spec: { holderIdentity: 'x', renewTime } },
      });
    // What a JS Date serializes to (client-node 1.4 sends this) is refused.
    expect((await post(new Date(clock.now()).toISOString())).status).toBe(400);
    expect((await post(microTime(clock.now()))).status).toBe(201);
  });
});

function leaseHeldBy(holderIdentity: string, renewTime: string, leaseTransitions: number): FakeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'haptic', namespace: 'kube-system' },
    spec: { holderIdentity, leaseDurationSeconds: 15, acquireTime: renewTime, renewTime, leaseTransitions },
  };
}

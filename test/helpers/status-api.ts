// The Ingress status, Gateway API status and Event APIs of the product, pointed at a FakeKubeApi, with every call
// stamped on a FakeClock: tests drive the pacing with the fake clock while the writes are real
// HTTP requests. `drive` advances the fake clock whenever nothing is in flight.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { afterEach, beforeEach } from 'vitest';
import { loadKubeConfig } from '../../src/main/sources/kubernetes/kube-config.js';
import { kubeEventApi, type KubeEventApi } from '../../src/main/kube-events/kube-event-api.js';
import { kubeIngressStatusApi, type IngressStatusApi } from '../../src/main/status/ingress-status-api.js';
import { kubeGatewayStatusApi, type GatewayStatusApi } from '../../src/main/status/gateway-status-api.js';
import { FakeClock } from './fake-clock.js';
import { FakeKubeApi } from './fake-kube-api.js';

export interface RecordedApis {
  readonly status: IngressStatusApi;
  readonly gatewayStatus: GatewayStatusApi;
  readonly events: KubeEventApi;
  /** Fake-clock time (ms) of each status write, in order. */
  readonly statusTimes: number[];
  /** Fake-clock time (ms) of each Event write (create or patch), in order. */
  readonly eventTimes: number[];
  readonly inFlight: () => number;
  /** Resolves once no request is in flight. */
  readonly idle: () => Promise<void>;
}

export async function recordedApis(api: FakeKubeApi, clock: FakeClock, dir: string): Promise<RecordedApis> {
  const kubeConfig = loadKubeConfig(await api.writeKubeconfig(dir));
  const status = kubeIngressStatusApi(kubeConfig);
  const gatewayStatus = kubeGatewayStatusApi(kubeConfig);
  const events = kubeEventApi(kubeConfig);
  const statusTimes: number[] = [];
  const eventTimes: number[] = [];
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  const counted = async <T>(work: () => Promise<T>): Promise<T> => {
    inFlight++;
    try {
      return await work();
    } finally {
      inFlight--;
      if (inFlight === 0) {
        const woken = waiters;
        waiters = [];
        for (const wake of woken) wake();
      }
    }
  };
  return {
    status: {
      writeStatus: (ns, name, addresses, signal) => {
        statusTimes.push(clock.now());
        return counted(() => status.writeStatus(ns, name, addresses, signal));
      },
    },
    gatewayStatus: {
      writeStatus: (write, signal) => {
        statusTimes.push(clock.now());
        return counted(() => gatewayStatus.writeStatus(write, signal));
      },
    },
    events: {
      create: (ns, event, signal) => {
        eventTimes.push(clock.now());
        return counted(() => events.create(ns, event, signal));
      },
      patch: (ns, name, patch, signal) => {
        eventTimes.push(clock.now());
        return counted(() => events.patch(ns, name, patch, signal));
      },
    },
    statusTimes,
    eventTimes,
    inFlight: () => inFlight,
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  };
}

/**
 * Lets real requests finish and fake timers run until `done()` holds: while nothing is in flight
 * the clock jumps to its next timer. Fails after `maxSteps`.
 */
export async function drive(clock: FakeClock, apis: Pick<RecordedApis, 'inFlight' | 'idle'>, done: () => boolean, maxSteps = 100_000): Promise<void> {
  for (let step = 0; step < maxSteps; step++) {
    if (done()) return;
    await tick();
    if (apis.inFlight() > 0) {
      await apis.idle();
      continue;
    }
    await tick();
    if (done()) return;
    const due = clock.nextDue;
    if (due !== undefined && apis.inFlight() === 0) await clock.advance(Math.max(0, due - clock.now()));
  }
  throw new Error('drive: the condition never held');
}

/** A fresh fake API server, fake clock and recorded APIs for each test of the file (`beforeEach`), closed after it. */
export interface StatusApiFixture {
  readonly api: FakeKubeApi;
  readonly clock: FakeClock;
  readonly apis: RecordedApis;
  /** A private directory (its kubeconfig is there). */
  readonly dir: string;
}

export function useStatusApi(prefix: string): StatusApiFixture {
  let current: { api: FakeKubeApi; clock: FakeClock; apis: RecordedApis; dir: string } | undefined;
  beforeEach(async () => {
    const api = await FakeKubeApi.start();
    const dir = await mkdtemp(join(tmpdir(), prefix));
    const clock = new FakeClock();
    current = { api, clock, dir, apis: await recordedApis(api, clock, dir) };
  });
  afterEach(async () => {
    await current?.api.close();
    if (current !== undefined) await rm(current.dir, { recursive: true, force: true });
    current = undefined;
  });
  const now = (): NonNullable<typeof current> => {
    if (current === undefined) throw new Error('useStatusApi: read inside a test');
    return current;
  };
  return {
    get api() {
      return now().api;
    },
    get clock() {
      return now().clock;
    },
    get apis() {
      return now().apis;
    },
    get dir() {
      return now().dir;
    },
  };
}

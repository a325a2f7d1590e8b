// IngressStatusWriter against the fake API server, paced on a fake clock: what it writes (only
// what differs), what it clears (only what it published), how fast (the token bucket), and how it
// takes a 403 (one warning naming the permission, retries with backoff).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IngressStatusWriter } from '../../../src/main/status/ingress-status-writer.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeKubeApi, type FakeObject } from '../../helpers/fake-kube-api.js';
import { silentLogger, spyLogger } from '../../helpers/loggers.js';
import { drive, recordedApis, type RecordedApis } from '../../helpers/status-api.js';

const INGRESSES = '/apis/networking.k8s.io/v1/ingresses';
const LB = [{ ip: '203.0.113.7' }, { hostname: 'lb.example.com' }];

let api: FakeKubeApi;
let dir: string;
let clock: FakeClock;
let apis: RecordedApis;
const stop = new AbortController();

function ingress(ns: string, name: string, status?: unknown): FakeObject {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: ns }, spec: { ingressClassName: 'haproxy' }, ...(status === undefined ? {} : { status }) };
}

function writerFor(options: { logger?: ReturnType<typeof spyLogger>['logger'] } = {}): IngressStatusWriter {
  const lookup = (key: string): KubeObject | undefined => api.get(INGRESSES, key) as KubeObject | undefined;
  return new IngressStatusWriter({
    api: apis.status,
    lookup,
    keys: () => [...listKeys()],
    clock,
    logger: options.logger ?? silentLogger(),
    backoff: { random: () => 0 },
  });
}

const keys = new Set<string>();
function listKeys(): Set<string> {
  return keys;
}
function add(ns: string, name: string, status?: unknown): void {
  api.upsert(INGRESSES, ingress(ns, name, status));
  keys.add(`${ns}/${name}`);
}
const statusOf = (key: string): unknown => (api.get(INGRESSES, key)?.status as { loadBalancer?: unknown } | undefined)?.loadBalancer;

beforeEach(async () => {
  api = await FakeKubeApi.start();
  dir = await mkdtemp(join(tmpdir(), 'status-writer-'));
  clock = new FakeClock();
  apis = await recordedApis(api, clock, dir);
  keys.clear();
});

afterEach(async () => {
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

describe('IngressStatusWriter', () => {
  it('publishes the addresses on every served Ingress once, through the status subresource, without bumping the generation', async () => {
    add('shop', 'web');
    add('blog', 'site');
    const writer = writerFor();
    const term = new AbortController();
    const running = writer.run(term.signal);
    writer.setAddresses(LB);
    writer.setServed(['blog/site', 'shop/web']);
    await drive(clock, apis, () => api.statusWrites.length === 2 && apis.inFlight() === 0);
    expect(statusOf('shop/web')).toEqual({ ingress: LB });
    expect(statusOf('blog/site')).toEqual({ ingress: LB });
    expect(api.statusWrites.map((w) => w.resourcePath)).toEqual([INGRESSES, INGRESSES]);
    expect(api.get(INGRESSES, 'shop/web')?.metadata.generation).toBe(1);
    // The same render again, and a new render with the same list: nothing more to write.
    writer.setServed(['blog/site', 'shop/web']);
    await drive(clock, apis, () => writer.stats.queued === 0);
    expect(api.statusWrites).toHaveLength(2);
    term.abort();
    await running;
  });

  it('writes nothing to an Ingress that already holds the addresses (a new leader after a previous one)', async () => {
    add('shop', 'web', { loadBalancer: { ingress: LB } });
    add('shop', 'api');
    const writer = writerFor();
    const term = new AbortController();
    const running = writer.run(term.signal);
    writer.setAddresses(LB);
    writer.setServed(['shop/api', 'shop/web']);
    await drive(clock, apis, () => api.statusWrites.length === 1 && writer.stats.queued === 0 && apis.inFlight() === 0);
    expect(api.statusWrites.map((w) => w.key)).toEqual(['shop/api']);
    term.abort();
    await running;
  });

  it('follows new addresses and clears an Ingress it stops serving, leaving alone one another controller published', async () => {
    add('shop', 'web');
    add('shop', 'other', { loadBalancer: { ingress: [{ ip: '198.51.100.9' }] } });
    const writer = writerFor();
    const term = new AbortController();
    const running = writer.run(term.signal);
    writer.setAddresses(LB);
    writer.setServed(['shop/web']);
    await drive(clock, apis, () => api.statusWrites.length === 1 && apis.inFlight() === 0);
    writer.setAddresses([{ ip: '192.0.2.1' }]);
    await drive(clock, apis, () => api.statusWrites.length === 2 && apis.inFlight() === 0);
    expect(statusOf('shop/web')).toEqual({ ingress: [{ ip: '192.0.2.1' }] });
    writer.setServed([]);
    await drive(clock, apis, () => api.statusWrites.length === 3 && apis.inFlight() === 0);
    expect(statusOf('shop/web')).toEqual({});
    await drive(clock, apis, () => writer.stats.queued === 0);
    expect(statusOf('shop/other')).toEqual({ ingress: [{ ip: '198.51.100.9' }] });
    expect(api.statusWrites).toHaveLength(3);
    term.abort();
    await running;
  });

  it('clears an Ingress no longer served that holds the addresses a previous leader published, once the addresses are known', async () => {
    add('shop', 'web');
    add('shop', 'moved', { loadBalancer: { ingress: LB } });
    const writer = writerFor();
    const term = new AbortController();
    const running = writer.run(term.signal);
    // The first render comes before the Service's addresses are known.
    writer.setAddresses(undefined);
    writer.setServed(['shop/web']);
    await drive(clock, apis, () => writer.stats.queued === 0);
    expect(api.statusWrites).toHaveLength(0);
    writer.setAddresses(LB);
    await drive(clock, apis, () => api.statusWrites.length === 2 && apis.inFlight() === 0);
    expect(statusOf('shop/moved')).toEqual({});
    expect(statusOf('shop/web')).toEqual({ ingress: LB });
    term.abort();
    await running;
  });

  it('writes nothing while the addresses are unknown (a --publish-service that does not exist)', async () => {
    add('shop', 'web');
    const writer = writerFor();
    const term = new AbortController();
    const running = writer.run(term.signal);
    writer.setAddresses(undefined);
    writer.setServed(['shop/web']);
    await drive(clock, apis, () => writer.stats.queued === 0);
    expect(api.statusWrites).toHaveLength(0);
    term.abort();
    await running;
  });

  it('at 2,000 Ingresses, a first pass writes each at most once and never faster than 20 writes per second', async () => {
    const served: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const name = `app-${String(i).padStart(4, '0')}`;
      add('load', name);
      served.push(`load/${name}`);
    }
    const writer = writerFor();
    const term = new AbortController();
    const running = writer.run(term.signal);
    const start = clock.now();
    writer.setAddresses(LB);
    writer.setServed(served);
    // A few renders arrive while the pass runs; they add nothing.
    writer.setServed([...served]);
    await drive(clock, apis, () => api.statusWrites.length === 2000 && apis.inFlight() === 0, 1_000_000);
    writer.setServed([...served]);
    await drive(clock, apis, () => writer.stats.queued === 0);
    const perKey = new Map<string, number>();
    for (const write of api.statusWrites) perKey.set(write.key, (perKey.get(write.key) ?? 0) + 1);
    expect(perKey.size).toBe(2000);
    expect(Math.max(...perKey.values())).toBe(1);
    // Token bucket of 20/s with a burst of 20: write i (0-based) happens no sooner than (i - 19) / 20 s.
    apis.statusTimes.forEach((at, i) => expect(at - start).toBeGreaterThanOrEqual(Math.max(0, ((i - 19) / 20) * 1000) - 1));
    const seconds = ((apis.statusTimes.at(-1) as number) - start) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(98);
    expect(seconds).toBeLessThan(101);
    term.abort();
    await running;
  }, 60_000);

  it('a 403 gets one warning naming ingresses/status, is retried with backoff, and succeeds once permitted', async () => {
    add('shop', 'web');
    add('shop', 'api');
    const spy = spyLogger();
    const writer = writerFor({ logger: spy.logger });
    api.failNext(Number.POSITIVE_INFINITY, 403, (r) => r.method === 'PATCH');
    const term = new AbortController();
    const running = writer.run(term.signal);
    writer.setAddresses(LB);
    writer.setServed(['shop/api', 'shop/web']);
    await drive(clock, apis, () => writer.stats.forbidden >= 6);
    const warnings = spy.warn.mock.calls.filter((call) => String(call[1]).includes('ingresses/status'));
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.[1])).toMatch(/403.*update ingresses\/status/);
    // Backoff: 500 ms doubling (no jitter here), so six refusals took at least 0.5+1+2+4+8 s.
    expect(clock.monotonic()).toBeGreaterThanOrEqual(15_500);
    api.failNext(0);
    await drive(clock, apis, () => statusOf('shop/web') !== undefined && statusOf('shop/api') !== undefined && apis.inFlight() === 0);
    expect(statusOf('shop/web')).toEqual({ ingress: LB });
    term.abort();
    await running;
  });
});

void stop;

// HttpResourceFetcher against a local HTTP server, with the FakeClock driving the refresh timer
// and fetch timeouts (real I/O is awaited with `eventually`). On its own bus it shows the fetch
// side (pending content, conditional requests, failures, stop); inside a real Engine with the
// inline pipeline it shows the render side (accepted after a good render, rejected after a failed
// one, never breaking a render).
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { Engine } from '../../../src/main/engine.js';
import { newEvent, type ControllerEvent, type EventOf, type EventType } from '../../../src/main/events/events.js';
import { attachHttpResources, HttpResourceFetcher, type HttpResourceFetcherOptions } from '../../../src/main/http-resources/http-resource-fetcher.js';
import { ControllerMetrics } from '../../../src/main/metrics/metrics.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { parseTemplateSet } from '../../../src/main/template-set/template-set.js';
import type { HttpResourceDefinition } from '../../../src/worker/protocol.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { eventually } from '../../helpers/eventually.js';
import { resourceUpdated } from '../../helpers/events.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';
import { ResourceServer, type ServedMode } from './resource-server.js';

const REFRESH_MS = 30_000;
const TIMEOUT_MS = 2_000;
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(mode: ServedMode): Promise<ResourceServer> {
  const s = await ResourceServer.start();
  s.mode = mode;
  cleanups.push(() => s.close());
  return s;
}

/** Runs `start(signal)` until the test ends (or `stop()` is called). */
function run(start: (signal: AbortSignal) => Promise<void>): { readonly running: Promise<void>; stop(): void } {
  const controller = new AbortController();
  const running = start(controller.signal);
  cleanups.push(async () => {
    controller.abort();
    await running;
  });
  return { running, stop: () => controller.abort() };
}

function recorder(bus: EventBus<ControllerEvent>) {
  const publish = vi.spyOn(bus, 'publish');
  const published = (): ControllerEvent[] => publish.mock.calls.map(([event]) => event);
  return { published, ofType: <T extends EventType>(type: T) => published().filter((e): e is EventOf<T> => e.type === type) };
}

/** The fetcher on its own bus and stores: nothing renders, so content stays pending. */
async function standalone(mode: ServedMode, options: Partial<HttpResourceFetcherOptions> = {}) {
  const s = await server(mode);
  const clock = new FakeClock();
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const stores = new StoreProvider();
  const resource: HttpResourceDefinition = { name: 'blocklist', url: s.url(), refreshIntervalMs: REFRESH_MS, timeoutMs: TIMEOUT_MS };
  const fetcher = new HttpResourceFetcher({ bus, stores, resources: [resource], clock, logger: silentLogger(), ...options });
  bus.start();
  return { server: s, clock, bus, stores, fetcher, ...recorder(bus) };
}

const templateYaml = (url: string): string => `
httpResources:
  - name: blocklist
    url: ${url}
    refreshInterval: ${REFRESH_MS}ms
    timeout: ${TIMEOUT_MS}ms
maps:
  blocklist.lst: '{{httpResource "blocklist"}}'
values:
  mapsDir: /etc/haproxy/maps
haproxyConfig: |
  global
    daemon
  defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
  frontend fe
    bind 127.0.0.1:8080
    # blocklist: {{httpResource "blocklist"}}
    http-request deny if { src -f {{mapPath "blocklist.lst"}} }
    default_backend be
  backend be
    server s1 127.0.0.1:8081
`;

/** A real Engine (inline pipeline) whose template set reads the resource in its config and a map. */
async function withEngine(mode: ServedMode) {
  const s = await server(mode);
  const clock = new FakeClock();
  const templateSet = parseTemplateSet(templateYaml(s.url()), 'http-resources.yaml');
  const engine = await Engine.create({ templateSet, pipeline: 'inline', clock, logger: silentLogger() });
  const metrics = new ControllerMetrics({ defaultMetrics: false });
  const fetcher = attachHttpResources(engine, templateSet, { onRejected: () => metrics.countHttpResourceRejection() }) as HttpResourceFetcher;
  const events = recorder(engine.bus);
  run((signal) => engine.start(signal));
  const rendered = (): EventOf<'template.rendered'>[] => events.ofType('template.rendered');
  return {
    server: s,
    clock,
    engine,
    fetcher,
    metrics,
    ...events,
    rendered,
    /** A render of the current stores, as after any cluster change. */
    async renderNow(): Promise<EventOf<'template.rendered'>> {
      const before = rendered().length;
      engine.bus.publish(resourceUpdated('ingresses'));
      await eventually(() => rendered().length > before, 'a render after a cluster change');
      return rendered().at(-1) as EventOf<'template.rendered'>;
    },
    async rejections(): Promise<number> {
      const line = (await metrics.metrics()).split('\n').find((l) => l.startsWith('haptic_http_resource_rejections_total '));
      return Number(line?.split(' ')[1]);
    },
  };
}

type EngineHarness = Awaited<ReturnType<typeof withEngine>>;

/** Waits until `content` is accepted and the render its acceptance triggers has run. */
async function accepted(h: EngineHarness, content: string): Promise<void> {
  await eventually(() => h.ofType('http.resource.accepted').some((e) => e.checksum === sha256(content)), `acceptance of ${JSON.stringify(content)}`);
  await eventually(() => h.rendered().some((e) => e.triggerReason === 'http_resource_accepted' && e.haproxyConfig.includes(`# blocklist: ${content}\n`)), 'the render after acceptance');
}

describe('HttpResourceFetcher: fetching', () => {
  it('makes the first fetched content pending and publishes http.resource.updated', async () => {
    const h = await standalone({ kind: 'content', body: '10.0.0.1\n', etag: '"v1"' });
    const versionBefore = h.stores.version;
    run((signal) => h.fetcher.start(signal));
    await eventually(() => h.ofType('http.resource.updated').length === 1, 'http.resource.updated');

    expect(h.ofType('http.resource.updated')[0]).toMatchObject({ url: h.server.url(), checksum: sha256('10.0.0.1\n'), contentSize: 9 });
    expect(h.fetcher.store.get('blocklist')).toMatchObject({ kind: 'HttpResource', metadata: { name: 'blocklist' }, pending: { content: '10.0.0.1\n', checksum: sha256('10.0.0.1\n') } });
    expect(h.fetcher.store.get('blocklist')?.accepted).toBeUndefined();
    expect(h.stores.version).toBe(versionBefore + 1);
    // The next fetch waits for the refresh interval on the injected clock.
    expect((h.clock.nextDue ?? 0) - h.clock.now()).toBe(REFRESH_MS);
  });

  it('sends If-None-Match and If-Modified-Since on refresh, and a 304 changes nothing', async () => {
    const lastModified = 'Wed, 01 Jan 2025 00:00:00 GMT';
    const h = await standalone({ kind: 'content', body: 'a\n', etag: '"v1"', lastModified });
    run((signal) => h.fetcher.start(signal));
    await eventually(() => h.fetcher.stats.fetches === 1, 'the first fetch');
    const version = h.stores.version;

    await h.clock.advance(REFRESH_MS);
    await eventually(() => h.fetcher.stats.notModified === 1, 'a 304 answer');

    expect(h.server.requests).toHaveLength(2);
    expect(h.server.requests[0]?.headers['if-none-match']).toBeUndefined();
    expect(h.server.requests[1]?.headers).toMatchObject({ 'if-none-match': '"v1"', 'if-modified-since': lastModified });
    expect(h.stores.version).toBe(version);
    expect(h.ofType('http.resource.updated')).toHaveLength(1);
  });

  it('offers content that changed at the server as new pending content', async () => {
    const h = await standalone({ kind: 'content', body: 'a\n', etag: '"a"' });
    run((signal) => h.fetcher.start(signal));
    await eventually(() => h.fetcher.stats.fetches === 1, 'the first fetch');
    h.server.mode = { kind: 'content', body: 'b\n', etag: '"b"' };
    await h.clock.advance(REFRESH_MS);
    await eventually(() => h.ofType('http.resource.updated').length === 2, 'the second http.resource.updated');
    expect(h.ofType('http.resource.updated')[1]?.checksum).toBe(sha256('b\n'));
    expect(h.fetcher.store.get('blocklist')?.pending?.content).toBe('b\n');
  });

  it('accepts pending content only on a render at or after its store version, and rejects it only for a reconciliation started after it was announced', async () => {
    const h = await standalone({ kind: 'content', body: 'a\n' });
    // A reconciliation that started (and read its store version) just before the content was
    // offered, whose event the fetcher only sees afterwards: its failure says nothing of it.
    h.bus.pause();
    const early = newEvent('reconciliation.started', { trigger: 'resource_change' });
    h.bus.publish(early);
    run((signal) => h.fetcher.start(signal));
    await eventually(() => h.fetcher.store.get('blocklist')?.pending, 'the content offered');
    h.bus.start();
    const version = h.stores.version;
    h.bus.publish(newEvent('reconciliation.failed', { error: 'validation failed: x', phase: 'validation', triggerReason: 'resource_change' }, early));
    h.bus.publish(rendered(version - 1));
    await flushMicrotasks();
    expect(h.fetcher.store.get('blocklist')?.pending?.content).toBe('a\n');
    expect(h.fetcher.stats).toMatchObject({ accepted: 0, rejected: 0 });

    h.bus.publish(rendered(version));
    await eventually(() => h.fetcher.stats.accepted === 1, 'acceptance');
    expect(h.fetcher.store.get('blocklist')).toMatchObject({ accepted: { content: 'a\n' } });
    expect(h.fetcher.store.get('blocklist')?.pending).toBeUndefined();
    expect(h.ofType('http.resource.accepted')[0]).toMatchObject({ url: h.server.url(), checksum: sha256('a\n'), contentSize: 2 });
  });

  it('rejects pending content when a reconciliation started after its announcement fails', async () => {
    const rejections: unknown[] = [];
    const h = await standalone({ kind: 'content', body: 'a\n' }, { onRejected: (r) => rejections.push(r) });
    run((signal) => h.fetcher.start(signal));
    await eventually(() => h.ofType('http.resource.updated').length === 1, 'the content announced');
    const started = newEvent('reconciliation.started', { trigger: 'http_resource_change' });
    h.bus.publish(started);
    h.bus.publish(newEvent('reconciliation.failed', { error: 'validation failed: bad', phase: 'validation', triggerReason: 'http_resource_change' }, started));
    await eventually(() => h.fetcher.stats.rejected === 1, 'the rejection');
    expect(rejections).toEqual([{ name: 'blocklist', url: h.server.url(), checksum: sha256('a\n'), error: 'validation failed: bad' }]);
    expect(h.fetcher.store.get('blocklist')?.pending).toBeUndefined();
  });

  it('stops when the term aborts, aborting the fetch in flight', async () => {
    const h = await standalone({ kind: 'hang' });
    const term = run((signal) => h.fetcher.start(signal));
    await h.fetcher.whenReady();
    await eventually(() => h.server.requests.length === 1, 'the request in flight');
    term.stop();
    await term.running;
    await eventually(() => h.server.requests[0]?.abortedByClient, 'the server to see the request aborted');
    expect(h.fetcher.stats).toMatchObject({ fetches: 0, failures: 0 });
    expect(h.clock.pending).toBe(0);
    expect(h.bus.subscriberCount).toBe(0);
  });
});

function rendered(storeVersion: number): EventOf<'template.rendered'> {
  return newEvent('template.rendered', {
    renderId: `r${storeVersion}`,
    haproxyConfig: '',
    auxiliaryFiles: { maps: {}, files: {}, certificates: {} },
    checksum: 'c',
    configBytes: 0,
    auxiliaryFileCount: 0,
    durationMs: 1,
    triggerReason: 'http_resource_change',
    coalescible: true,
    storeVersion,
  });
}

describe('HttpResourceFetcher in an Engine', () => {
  it('renders pending content at once, then accepts it and publishes http.resource.accepted', async () => {
    const h = await withEngine({ kind: 'content', body: '10.0.0.1', etag: '"a"' });
    await accepted(h, '10.0.0.1');

    h.server.mode = { kind: 'content', body: '10.0.0.2', etag: '"b"' };
    await h.clock.advance(REFRESH_MS);
    await accepted(h, '10.0.0.2');

    const events = h.published();
    const announced = events.findIndex((e) => e.type === 'http.resource.updated' && e.checksum === sha256('10.0.0.2'));
    const render = events.findIndex((e, i) => i > announced && e.type === 'template.rendered');
    const acceptance = events.findIndex((e) => e.type === 'http.resource.accepted' && e.checksum === sha256('10.0.0.2'));
    expect(announced).toBeGreaterThanOrEqual(0);
    expect(render).toBeGreaterThan(announced);
    expect(acceptance).toBeGreaterThan(render);
    const used = events[render] as EventOf<'template.rendered'>;
    expect(used.triggerReason).toBe('http_resource_change');
    expect(used.haproxyConfig).toContain('# blocklist: 10.0.0.2\n');
    expect(used.auxiliaryFiles.maps['blocklist.lst']).toBe('10.0.0.2');
    expect(events[acceptance]?.causationId).toBe(used.eventId);
    expect(h.fetcher.store.get('blocklist')).toMatchObject({ accepted: { content: '10.0.0.2', checksum: sha256('10.0.0.2') } });
    expect(h.fetcher.store.get('blocklist')?.pending).toBeUndefined();
    expect(h.ofType('reconciliation.failed')).toEqual([]);
  });

  it('keeps the accepted content when the render of new content fails, counts the rejection, and does not offer that content again', async () => {
    const h = await withEngine({ kind: 'content', body: '10.0.0.1', etag: '"a"' });
    await accepted(h, '10.0.0.1');
    const bad = '10.0.0.9\nbogus directive';
    // The server ignores If-None-Match: it keeps sending the bad content in full.
    h.server.mode = { kind: 'content', body: bad, etag: '"bad"', conditional: false };
    await h.clock.advance(REFRESH_MS);
    await eventually(() => h.fetcher.stats.rejected === 1, 'the rejection');

    expect(h.ofType('reconciliation.failed')).toHaveLength(1);
    expect(h.ofType('reconciliation.failed')[0]).toMatchObject({ phase: 'validation', triggerReason: 'http_resource_change' });
    expect(await h.rejections()).toBe(1);
    expect(h.fetcher.store.get('blocklist')).toMatchObject({ accepted: { content: '10.0.0.1' } });
    expect(h.fetcher.store.get('blocklist')?.pending).toBeUndefined();
    const next = await h.renderNow();
    expect(next.haproxyConfig).toContain('# blocklist: 10.0.0.1\n');
    expect(next.auxiliaryFiles.maps['blocklist.lst']).toBe('10.0.0.1');

    const version = h.engine.stores.version;
    const renders = h.rendered().length;
    await h.clock.advance(REFRESH_MS);
    await eventually(() => h.server.requests.length === 3 && h.fetcher.stats.fetches === 3, 'the refresh');
    expect(h.server.requests[2]?.headers['if-none-match']).toBe('"bad"');
    expect(h.ofType('http.resource.updated')).toHaveLength(2);
    expect(h.engine.stores.version).toBe(version);
    expect(h.rendered()).toHaveLength(renders);
    expect(await h.rejections()).toBe(1);

    // Content that changes again is offered again.
    h.server.mode = { kind: 'content', body: '10.0.0.3', etag: '"c"' };
    await h.clock.advance(REFRESH_MS);
    await accepted(h, '10.0.0.3');
  });

  it('keeps rendering with the previous content when a fetch fails (500, timeout, oversize, refused), retrying only on the refresh interval', async () => {
    const h = await withEngine({ kind: 'content', body: '10.0.0.1', etag: '"a"' });
    await accepted(h, '10.0.0.1');
    const failures: [string, () => Promise<void>][] = [
      ['a 500', async () => void (h.server.mode = { kind: 'status', status: 500 })],
      ['a timeout', async () => void (h.server.mode = { kind: 'hang' })],
      ['content over the cap, declared', async () => void (h.server.mode = { kind: 'oversize', bytes: 4 * 1024 * 1024 + 1, declared: true })],
      ['content over the cap, streamed', async () => void (h.server.mode = { kind: 'oversize', bytes: 4 * 1024 * 1024 + 1 })],
      ['a refused connection', () => h.server.close()],
    ];
    for (const [what, cause] of failures) {
      const before = h.fetcher.stats.failures;
      const requests = h.server.requests.length;
      await cause();
      await h.clock.advance(REFRESH_MS);
      if (what === 'a timeout') {
        await eventually(() => h.server.requests.length === requests + 1, 'the request that hangs');
        await h.clock.advance(TIMEOUT_MS);
      }
      await eventually(() => h.fetcher.stats.failures === before + 1, `the failure after ${what}`);
      // Paced like a success: the next attempt is one refresh interval away, nothing sooner.
      expect((h.clock.nextDue ?? 0) - h.clock.now(), what).toBe(REFRESH_MS);
      expect(h.clock.pending, what).toBe(1);
      const next = await h.renderNow();
      expect(next.haproxyConfig, what).toContain('# blocklist: 10.0.0.1\n');
      expect(h.fetcher.store.get('blocklist'), what).toMatchObject({ accepted: { content: '10.0.0.1' } });
    }
    expect(h.ofType('reconciliation.failed')).toEqual([]);
    expect(h.ofType('http.resource.updated')).toHaveLength(1);
    expect(await h.rejections()).toBe(0);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { systemClock, type Clock } from '../../../src/main/core/clock.js';
import type { ControllerEvent } from '../../../src/main/events/events.js';
import type { BackoffOptions } from '../../../src/main/sources/kubernetes/backoff.js';
import { contextNamespace, loadKubeConfig } from '../../../src/main/sources/kubernetes/kube-config.js';
import { kubernetesSource } from '../../../src/main/sources/kubernetes/kubernetes-source.js';
import { pluralOf, resourceLocation } from '../../../src/main/sources/kubernetes/resource-paths.js';
import type { SourceSink } from '../../../src/main/sources/source.js';
import { WatcherSet } from '../../../src/main/sources/watcher-set.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { KubeObject, StoreDefinition } from '../../../src/worker/protocol.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeKubeApi, type FakeObject } from '../../helpers/fake-kube-api.js';
import { silentLogger } from '../../helpers/loggers.js';

const SERVICES = '/api/v1/services';
const INGRESSES = '/apis/networking.k8s.io/v1/ingresses';
const CLASSES = '/apis/networking.k8s.io/v1/ingressclasses';

const DEFINITIONS: StoreDefinition[] = [
  { name: 'services', apiVersion: 'v1', kind: 'Service', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 },
  { name: 'ingresses', apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 },
  { name: 'ingressclasses', apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', indexBy: ['metadata.name'], debounceMs: 0 },
];

const service = (namespace: string, name: string, port = 80, labels: Record<string, string> = {}): FakeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace, labels },
  spec: { ports: [{ port }] },
});
const ingress = (namespace: string, name: string): FakeObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace }, spec: {} });
const ingressClass = (name: string): FakeObject => ({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name }, spec: { controller: 'haptic' } });

let api: FakeKubeApi;
let dir: string;
let stop: AbortController;
let running: Promise<void> | undefined;

beforeEach(async () => {
  api = await FakeKubeApi.start();
  dir = await mkdtemp(join(tmpdir(), 'kubernetes-source-'));
  stop = new AbortController();
  running = undefined;
});

afterEach(async () => {
  stop.abort();
  await running;
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

interface StartOptions {
  readonly clock?: Clock;
  readonly namespace?: string;
  readonly definitions?: readonly StoreDefinition[];
  readonly backoff?: BackoffOptions;
  readonly pageSize?: number;
}

async function start(options: StartOptions = {}) {
  const definitions = options.definitions ?? DEFINITIONS;
  const clock = options.clock ?? systemClock;
  const kubeConfig = loadKubeConfig(await api.writeKubeconfig(dir));
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const stores = new StoreProvider();
  const watchers = new WatcherSet({ definitions, stores, bus, clock, logger: silentLogger() });
  const synchronized: ControllerEvent[] = [];
  const subscription = bus.subscribe('test', { types: ['index.synchronized'] });
  void (async () => {
    for await (const event of subscription) synchronized.push(event);
  })();
  bus.start();
  const source = kubernetesSource({
    kubeConfig,
    clock,
    logger: silentLogger(),
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
  });
  running = source.run(definitions, watchers, stop.signal);
  const keys = (store: string): string[] => stores.store(store).list().map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  return { stores, watchers, synchronized, keys, close: () => subscription.close() };
}

/** Lists (watch false) or watches (true) of services, in any namespace. */
const serviceRequests = (watch: boolean) => api.requests.filter((r) => r.path.endsWith('/services') && r.watch === watch);

describe('KubernetesSource', () => {
  it('lists every resource into its store with kind and apiVersion set, then publishes index.synchronized once', async () => {
    api.upsert(SERVICES, service('shop', 'web'));
    api.upsert(SERVICES, service('blog', 'api'));
    api.upsert(INGRESSES, ingress('shop', 'web'));
    api.upsert(CLASSES, ingressClass('haproxy'));
    const { stores, watchers, synchronized, keys } = await start();

    await watchers.whenSynchronized();
    expect(keys('services').sort()).toEqual(['blog/api', 'shop/web']);
    expect(keys('ingresses')).toEqual(['shop/web']);
    expect(keys('ingressclasses')).toEqual(['/haproxy']);
    // The fake server's LIST items carry no kind/apiVersion: the watcher stamps them.
    expect(stores.store('services').get('shop/web')).toMatchObject({ kind: 'Service', apiVersion: 'v1' });
    expect(stores.store('ingressclasses').get('haproxy')).toMatchObject({ kind: 'IngressClass', apiVersion: 'networking.k8s.io/v1' });
    await eventually(() => synchronized.length === 1, 'index.synchronized');
    expect(synchronized[0]).toMatchObject({ type: 'index.synchronized', resourceCounts: { services: 2, ingresses: 1, ingressclasses: 1 } });

    // A later relist (after a compaction) must not announce synchronization again.
    api.compact();
    api.dropWatches();
    api.upsert(SERVICES, service('shop', 'late'));
    await eventually(() => keys('services').includes('shop/late'), 'the relisted service');
    expect(synchronized).toHaveLength(1);
  });

  it('follows adds, updates and deletes made after the initial list', async () => {
    api.upsert(SERVICES, service('shop', 'web'));
    const { stores, watchers, keys } = await start();
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === DEFINITIONS.length, 'every watch open');

    api.upsert(SERVICES, service('shop', 'cart'));
    await eventually(() => keys('services').includes('shop/cart'), 'the added service');
    api.upsert(SERVICES, service('shop', 'web', 8080));
    await eventually(() => (stores.store('services').get('shop/web')?.spec as { ports: { port: number }[] }).ports[0]?.port === 8080, 'the update');
    api.delete(SERVICES, 'shop/web');
    await eventually(() => !keys('services').includes('shop/web'), 'the delete');
    api.upsert(CLASSES, ingressClass('other'));
    await eventually(() => stores.store('ingressclasses').get('other') !== undefined, 'the cluster-scoped add');
    expect(keys('services')).toEqual(['shop/cart']);
  });

  it('recovers from dropped watches and delivers the changes made while they were down', async () => {
    api.upsert(SERVICES, service('shop', 'web'));
    const { watchers, keys } = await start();
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === DEFINITIONS.length, 'every watch open');

    const recoveries: number[] = [];
    for (let round = 0; round < 3; round++) {
      const began = performance.now();
      api.dropWatches();
      api.upsert(SERVICES, service('shop', `while-down-${round}`));
      await eventually(() => keys('services').includes(`shop/while-down-${round}`), `the change made while round ${round} was down`);
      await eventually(() => api.openWatches === DEFINITIONS.length, 'every watch open again');
      recoveries.push(performance.now() - began);
    }
    console.log(`watch recovery after a drop: ${recoveries.map((ms) => `${ms.toFixed(0)} ms`).join(', ')}`);
    expect(watchers.problems).toBeGreaterThan(0);
    expect(Math.max(...recoveries)).toBeLessThan(5_000);
  });

  it('relists after a compaction and deletes the objects that vanished while the watch was down', async () => {
    api.upsert(SERVICES, service('shop', 'web'));
    api.upsert(SERVICES, service('shop', 'gone'));
    const { watchers, keys } = await start();
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === DEFINITIONS.length, 'every watch open');
    const listsBefore = serviceRequests(false).length;

    const began = performance.now();
    api.dropWatches();
    api.delete(SERVICES, 'shop/gone');
    api.upsert(SERVICES, service('shop', 'web', 9090));
    api.compact();
    await eventually(() => !keys('services').includes('shop/gone'), 'the delete found by the relist');
    console.log(`relist after 410 Gone applied the deletion in ${(performance.now() - began).toFixed(0)} ms`);
    expect(keys('services')).toEqual(['shop/web']);
    expect(serviceRequests(false).length).toBeGreaterThan(listsBefore);
    expect(api.statuses.filter((s) => s === 500)).toEqual([]);
  });

  it('retries a failing list with a growing, capped backoff and never faster than it allows', async () => {
    const clock = new FakeClock();
    api.upsert(SERVICES, service('shop', 'web'));
    api.failNext(5);
    const definitions = [DEFINITIONS[0] as StoreDefinition];
    const { watchers, keys } = await start({ clock, definitions, backoff: { initialMs: 100, maxMs: 500, random: () => 0 } });

    const delays: number[] = [];
    for (let failure = 1; failure <= 5; failure++) {
      await eventually(() => api.requestCount === failure && clock.pending === 1, `failure ${failure} and its retry timer`);
      // Parked on the backoff timer: not a single request more until the clock moves.
      expect(api.requestCount).toBe(failure);
      const delay = (clock.nextDue ?? 0) - clock.now();
      delays.push(delay);
      await clock.advance(delay);
    }
    await watchers.whenSynchronized();
    expect(delays).toEqual([100, 200, 400, 500, 500]);
    expect(keys('services')).toEqual(['shop/web']);
    expect(watchers.problems).toBe(5);
    // Five failed lists, one good list, one watch.
    await eventually(() => api.openWatches === 1, 'the watch');
    expect(api.requests.map((r) => (r.watch ? 'watch' : 'list'))).toEqual(['list', 'list', 'list', 'list', 'list', 'list', 'watch']);
  });

  it('takes a resource the server does not serve (a missing CRD) as synced and empty, warns once, and picks it up once it is served', async () => {
    const clock = new FakeClock();
    const GATEWAYS = '/apis/gateway.networking.k8s.io/v1/gateways';
    api.unserved.add(GATEWAYS);
    api.upsert(SERVICES, service('shop', 'web'));
    const gatewayDefinition: StoreDefinition = { name: 'gateways', apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 };
    const definitions = [DEFINITIONS[0] as StoreDefinition, gatewayDefinition];
    const { watchers, keys } = await start({ clock, definitions, backoff: { initialMs: 100, maxMs: 400, random: () => 0 } });

    await watchers.whenSynchronized();
    expect(keys('services')).toEqual(['shop/web']);
    expect(keys('gateways')).toEqual([]);
    const gatewayLists = () => api.requests.filter((r) => r.path === GATEWAYS && !r.watch).length;
    for (let retry = 1; retry <= 4; retry++) {
      await eventually(() => gatewayLists() === retry && clock.pending >= 1, `404 number ${retry} and its retry timer`);
      await clock.advance((clock.nextDue ?? 0) - clock.now());
    }
    expect(watchers.problems).toBe(1);

    api.unserved.delete(GATEWAYS);
    api.upsert(GATEWAYS, { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'edge', namespace: 'shop' }, spec: { gatewayClassName: 'haptic', listeners: [] } });
    for (let i = 0; i < 5 && !keys('gateways').includes('shop/edge'); i++) {
      await eventually(() => clock.pending >= 1 || keys('gateways').includes('shop/edge'), 'the next retry');
      if (!keys('gateways').includes('shop/edge')) await clock.advance((clock.nextDue ?? 0) - clock.now());
    }
    await eventually(() => keys('gateways').includes('shop/edge'), 'the gateway listed once the resource is served');
    expect(watchers.problems).toBe(1);
  });

  it('restarts a watch that fails with 500 after the backoff, from where it left off', async () => {
    const clock = new FakeClock();
    api.upsert(SERVICES, service('shop', 'web'));
    const definitions = [DEFINITIONS[0] as StoreDefinition];
    const { watchers, keys } = await start({ clock, definitions, backoff: { initialMs: 100, random: () => 0 } });
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === 1, 'the watch');

    api.failNext(3);
    api.dropWatches();
    api.upsert(SERVICES, service('shop', 'cart'));
    // One backoff for the drop, one for each 500; every retry waits for the clock.
    let advanced = 0;
    const watching = (): boolean => api.openWatches === 1;
    while (!watching()) {
      await eventually(() => clock.pending > 0 || watching(), 'a retry timer or the watch');
      if (watching()) break;
      const requests = api.requestCount;
      const delay = (clock.nextDue ?? 0) - clock.now();
      expect(delay).toBeGreaterThanOrEqual(100);
      await clock.advance(delay);
      advanced++;
      await eventually(() => api.requestCount > requests, 'the retry');
      expect(api.requestCount).toBe(requests + 1);
    }
    expect(advanced).toBe(4);
    await eventually(() => keys('services').includes('shop/cart'), 'the change made while the watch failed');
    // Every watch attempt after the drop waited for the clock; none was relisted (no 410).
    const afterDrop = api.requests.slice(2);
    expect(afterDrop.every((r) => r.watch)).toBe(true);
    expect(afterDrop.length).toBe(advanced);
    expect(api.statuses.filter((s) => s === 500)).toHaveLength(3);
  });

  it('paces watches that the server ends right after they start instead of reconnecting in a hot loop', async () => {
    const clock = new FakeClock();
    const { watchers } = await start({ clock, definitions: [DEFINITIONS[0] as StoreDefinition], backoff: { initialMs: 100, random: () => 0 } });
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === 1, 'the watch');
    api.endWatchesAtOnce = true;
    api.endWatches();

    const delays: number[] = [];
    for (let round = 0; round < 4; round++) {
      await eventually(() => clock.pending === 1, 'the pacing timer');
      const requests = api.requestCount;
      const delay = (clock.nextDue ?? 0) - clock.now();
      delays.push(delay);
      await clock.advance(delay);
      await eventually(() => api.requestCount === requests + 1, 'the next watch');
    }
    expect(delays).toEqual([100, 200, 400, 800]);
    expect(watchers.problems).toBe(0);
  });

  it('paces relists when every watch is answered with 410 Gone', async () => {
    const clock = new FakeClock();
    const { watchers } = await start({ clock, definitions: [DEFINITIONS[0] as StoreDefinition], backoff: { initialMs: 100, random: () => 0 } });
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === 1, 'the watch');
    api.failNext(3, 410, (r) => r.watch);
    api.endWatches();

    for (let round = 0; round < 3; round++) {
      await eventually(() => clock.pending === 1, 'the pacing timer');
      const requests = api.requestCount;
      await clock.advance((clock.nextDue ?? 0) - clock.now());
      // One watch, answered 410, then one relist: never more before the clock moves again.
      await eventually(() => api.requestCount === requests + 2 && clock.pending === 1, 'one watch and one relist');
    }
    await clock.advance((clock.nextDue ?? 0) - clock.now());
    await eventually(() => api.openWatches === 1, 'a watch that stays open');
    expect(api.statuses.filter((s) => s === 410)).toHaveLength(3);
  });

  it('lists and watches namespaced resources in the given namespace only, and cluster-scoped ones without it', async () => {
    api.upsert(SERVICES, service('shop', 'web'));
    api.upsert(SERVICES, service('blog', 'api'));
    api.upsert(CLASSES, ingressClass('haproxy'));
    const { watchers, keys } = await start({ namespace: 'shop' });
    await watchers.whenSynchronized();
    api.upsert(SERVICES, service('blog', 'other'));
    api.upsert(SERVICES, service('shop', 'cart'));
    await eventually(() => keys('services').includes('shop/cart'), 'the change in the namespace');

    expect(keys('services').sort()).toEqual(['shop/cart', 'shop/web']);
    expect(keys('ingressclasses')).toEqual(['/haproxy']);
    const paths = new Set(api.requests.map((r) => r.path));
    expect(paths).toEqual(new Set(['/api/v1/namespaces/shop/services', '/apis/networking.k8s.io/v1/namespaces/shop/ingresses', CLASSES]));
  });

  it('sends the label and field selectors of the store definition with every list and watch', async () => {
    api.upsert(SERVICES, service('shop', 'web', 80, { tier: 'edge' }));
    api.upsert(SERVICES, service('shop', 'db', 80, { tier: 'data' }));
    api.upsert(SERVICES, service('blog', 'web', 80, { tier: 'edge' }));
    const definitions: StoreDefinition[] = [{ ...(DEFINITIONS[0] as StoreDefinition), labelSelector: 'tier=edge', fieldSelector: 'metadata.namespace=shop' }];
    const { watchers, keys } = await start({ definitions });
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === 1, 'the watch');
    api.upsert(SERVICES, service('shop', 'cache', 80, { tier: 'data' }));
    api.upsert(SERVICES, service('shop', 'api', 80, { tier: 'edge' }));
    await eventually(() => keys('services').includes('shop/api'), 'the selected add');

    expect(keys('services').sort()).toEqual(['shop/api', 'shop/web']);
    expect(api.requests.length).toBe(2);
    for (const request of api.requests) expect(request.query).toMatchObject({ labelSelector: 'tier=edge', fieldSelector: 'metadata.namespace=shop' });
  });

  it('pages through a list larger than one page', async () => {
    for (let i = 0; i < 7; i++) api.upsert(SERVICES, service('shop', `svc-${i}`));
    const { watchers, keys } = await start({ definitions: [DEFINITIONS[0] as StoreDefinition], pageSize: 3 });
    await watchers.whenSynchronized();
    expect(keys('services')).toHaveLength(7);
    expect(api.requests.filter((r) => !r.watch).map((r) => r.query.continue ?? '')).toEqual(['', '3', '6']);
  });

  it('sends fewer than 10 requests per second while idle', async () => {
    api.upsert(SERVICES, service('shop', 'web'));
    const { watchers } = await start();
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === DEFINITIONS.length, 'every watch open');
    const before = api.requestCount;
    const began = performance.now();
    // Real time on purpose: this measures what the source does on its own, with no timer to drive.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const seconds = (performance.now() - began) / 1000;
    const rate = (api.requestCount - before) / seconds;
    console.log(`idle request rate: ${rate.toFixed(2)} requests/s over ${seconds.toFixed(1)} s (${DEFINITIONS.length} watches open)`);
    expect(rate).toBeLessThan(10);
  });

  it('closes every watch when stopped, then resolves', async () => {
    const { watchers } = await start();
    await watchers.whenSynchronized();
    await eventually(() => api.openWatches === DEFINITIONS.length, 'every watch open');
    stop.abort();
    await running;
    await eventually(() => api.openWatches === 0, 'every watch closed at the server');
    const count = api.requestCount;
    api.upsert(SERVICES, service('shop', 'after-stop'));
    expect(api.requestCount).toBe(count);
  });

  it('resolves when stopped while a failing list waits for its retry', async () => {
    const clock = new FakeClock();
    api.failNext(100);
    await start({ clock });
    await eventually(() => clock.pending === DEFINITIONS.length, 'every retry timer');
    stop.abort();
    await running;
    expect(clock.pending).toBe(0);
  });

  it('reports an object the sink refuses as a problem and delivers the others', async () => {
    api.upsert(SERVICES, service('shop', 'bad'));
    api.upsert(SERVICES, service('shop', 'good'));
    const kubeConfig = loadKubeConfig(await api.writeKubeconfig(dir));
    const taken: string[] = [];
    const problems: string[] = [];
    let synced = false;
    const sink: SourceSink = {
      upsert: (_resource: string, object: KubeObject) => {
        if (object.metadata.name === 'bad') throw new Error('refused');
        taken.push(object.metadata.name);
      },
      delete: () => undefined,
      synced: () => (synced = true),
      problem: (_resource, message) => problems.push(message),
    };
    running = kubernetesSource({ kubeConfig, clock: systemClock, logger: silentLogger() }).run([DEFINITIONS[0] as StoreDefinition], sink, stop.signal);
    await eventually(() => synced, 'the initial list');
    expect(taken).toEqual(['good']);
    expect(problems).toEqual(['Service shop/bad was not taken: refused']);
    expect(api.requests.filter((r) => !r.watch)).toHaveLength(1);
  });

  it('rejects at once for a definition no API server could serve', async () => {
    const kubeConfig = loadKubeConfig(await api.writeKubeconfig(dir));
    const source = kubernetesSource({ kubeConfig, clock: systemClock, logger: silentLogger() });
    const bad: StoreDefinition = { name: 'bad', apiVersion: 'a/b/c', kind: 'Thing', indexBy: ['metadata.name'] };
    const watchers = new WatcherSet({ definitions: [bad], stores: new StoreProvider(), bus: new EventBus<ControllerEvent>({ logger: silentLogger() }), clock: systemClock, logger: silentLogger() });
    await expect(source.run([bad], watchers, stop.signal)).rejects.toThrow(/apiVersion/);
    expect(api.requestCount).toBe(0);
  });
});

describe('resourceLocation', () => {
  it('puts the core group under /api/v1 and every other group under /apis', () => {
    expect(resourceLocation({ apiVersion: 'v1', kind: 'Service' }).collectionPath).toBe('/api/v1/services');
    expect(resourceLocation({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' }).collectionPath).toBe('/apis/discovery.k8s.io/v1/endpointslices');
    expect(resourceLocation({ apiVersion: 'v1', kind: 'Secret' }, 'shop').collectionPath).toBe('/api/v1/namespaces/shop/secrets');
  });

  it('never gives a cluster-scoped kind a namespace', () => {
    expect(resourceLocation({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass' }, 'shop')).toMatchObject({ namespaced: false, collectionPath: CLASSES });
    expect(resourceLocation({ apiVersion: 'example.com/v1', kind: 'Widget', namespaced: false }, 'shop').collectionPath).toBe('/apis/example.com/v1/widgets');
  });

  it('takes the plural from the definition, else from a table, else from the English rule', () => {
    expect(resourceLocation({ apiVersion: 'example.com/v1', kind: 'Mouse', resource: 'mice' }).resource).toBe('mice');
    expect(['Ingress', 'Endpoints', 'ConfigMap', 'Pod'].map(pluralOf)).toEqual(['ingresses', 'endpoints', 'configmaps', 'pods']);
    expect(['Policy', 'Class', 'Gateway', 'Route'].map(pluralOf)).toEqual(['policies', 'classes', 'gateways', 'routes']);
  });

  it('rejects an apiVersion or resource that cannot be a path, naming the value', () => {
    expect(() => resourceLocation({ apiVersion: 'a/b/c', kind: 'X' })).toThrow(TypeError);
    expect(() => resourceLocation({ apiVersion: 'v1', kind: 'X', resource: '../secrets' })).toThrow(/"\.\.\/secrets"/);
  });
});

describe('loadKubeConfig', () => {
  it('loads a kubeconfig file with its current context and namespace', async () => {
    const kubeConfig = loadKubeConfig(await api.writeKubeconfig(dir, 'shop'));
    expect(kubeConfig.getCurrentCluster()?.server).toBe(api.url);
    expect(contextNamespace(kubeConfig)).toBe('shop');
  });

  it('refuses a plain-http server without insecure-skip-tls-verify, which client-node would only reject per request', async () => {
    const file = join(dir, 'plain-http');
    const config = {
      clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:8001' } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    };
    await writeFile(file, JSON.stringify(config));
    expect(() => loadKubeConfig(file)).toThrow(/plain http .*insecure-skip-tls-verify: true/);
  });

  it('names the file it cannot read, and a missing in-cluster environment', () => {
    expect(() => loadKubeConfig(join(dir, 'missing'))).toThrow(/cannot read kubeconfig .*missing/);
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
    try {
      expect(() => loadKubeConfig('in-cluster')).toThrow(/KUBERNETES_SERVICE_HOST/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

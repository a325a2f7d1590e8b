// Checks by store, never by `kind`: a store stamps its kind on objects that lack one and refuses
// other kinds, and the guard checks every object by its store's kind on every path into a render
// (the embedding API, a Kubernetes-style LIST fed to the stores or to the watchers, the inline
// pipeline on the main thread and the worker replicas of the pool). Regression for issue 12:
// an EndpointSlice without `kind` whose address held newlines injected
// `frontend pwned … stats admin if TRUE` into haproxy.cfg.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import type { ControllerEvent } from '../../../src/main/events/events.js';
import { silentLogger } from '../../../src/main/core/logger.js';
import { InlinePipeline } from '../../../src/main/pipeline/inline-pipeline.js';
import type { PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { PoolPipeline } from '../../../src/main/pipeline/pool/pool-pipeline.js';
import { WatcherSet } from '../../../src/main/sources/watcher-set.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../../src/main/template-set/template-set.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service } from '../../helpers/cluster.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { flushMicrotasks } from '../../helpers/async.js';

const never = new AbortController().signal;
/**
 * The attack: the address sorts last of ten, so it fills the last server slot, and the
 * slice's port completes its last line (`bind 127.0.0.1:8080`): a well-formed admin frontend.
 */
const INJECTION = '9.9.9.9\nfrontend pwned\n  stats enable\n  stats uri /pwned\n  stats admin if TRUE\n  bind 127.0.0.1';
const GOOD = Array.from({ length: 9 }, (_, i) => `10.0.0.${i + 1}`);

let set: TemplateSetSource;
let pool: PoolPipeline;

beforeAll(async () => {
  set = await loadTemplateSet();
  pool = await PoolPipeline.create({ templateSet: set, threads: 1, logger: silentLogger() });
});

afterAll(async () => {
  await pool?.destroy();
});

/** An object as a Kubernetes LIST response carries it: no `kind`, no `apiVersion`. */
function listItem(object: KubeObject): KubeObject {
  const item: KubeObject = { ...object };
  delete item.kind;
  delete item.apiVersion;
  return item;
}

/** The healthy app `shop/web` with its Ingress, Service and EndpointSlice, as LIST items. */
function shopItems(addresses: string[]): { ingresses: KubeObject[]; services: KubeObject[]; endpointslices: KubeObject[] } {
  return {
    ingresses: [listItem(ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }))],
    services: [listItem(service('shop', 'web'))],
    endpointslices: [listItem(endpointSlice('shop', 'web', [...GOOD, ...addresses], undefined, 'web-abc'))],
  };
}

function expectNoInjection(result: PipelineResult): void {
  expect(result.haproxyConfig).not.toContain('pwned');
  expect(result.haproxyConfig).not.toContain('stats admin');
  expect(result.haproxyConfig).toContain('server srv1 10.0.0.1:8080');
  expect(result.rejections).toContainEqual(expect.objectContaining({ kind: 'EndpointSlice', namespace: 'shop', name: 'web-abc', scope: 'endpoint' }));
}

describe('a store admits objects by its definition', () => {
  it('stamps its kind and apiVersion on an object that lacks them, as LIST items do', () => {
    const stores = new StoreProvider(set.stores);
    const item = listItem(service('shop', 'web'));
    stores.store('services').upsert(item);
    expect(stores.store('services').get('shop/web')).toMatchObject({ kind: 'Service', apiVersion: 'v1', metadata: { name: 'web' } });
    // The caller's object is not mutated.
    expect(item.kind).toBeUndefined();
  });

  it('refuses an object of another kind and changes nothing', () => {
    const stores = new StoreProvider(set.stores);
    const version = stores.version;
    expect(() => stores.store('endpointslices').upsert(service('shop', 'web'))).toThrow(/store endpointslices refused an object: kind "Service" of web is not the store's kind "EndpointSlice"/);
    expect(() => stores.store('services').upsert({ ...service('shop', 'web'), apiVersion: 'v2' })).toThrow(/apiVersion "v2"/);
    expect(stores.version).toBe(version);
    expect(stores.store('endpointslices').size).toBe(0);
  });

  it('refuses an object without a name instead of storing it under a broken key', () => {
    const stores = new StoreProvider(set.stores);
    expect(() => stores.store('services').upsert({ metadata: null } as unknown as KubeObject)).toThrow(/refused an object: metadata is missing/);
    expect(() => stores.store('services').upsert({ metadata: { name: 7 } } as unknown as KubeObject)).toThrow(/refused an object: metadata.name 7 is not a name/);
    expect(stores.version).toBe(0);
  });

  it('is defined from a whole StoreDefinition, and refuses to redefine a store for another kind', () => {
    const stores = new StoreProvider();
    const store = stores.define({ name: 'slices', apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', indexBy: ['metadata.namespace'] });
    expect(store.definition).toEqual({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' });
    expect(stores.define({ name: 'slices', apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', indexBy: ['metadata.namespace'] })).toBe(store);
    expect(() => stores.define({ name: 'slices', apiVersion: 'v1', kind: 'Service', indexBy: ['metadata.namespace'] })).toThrow(/already defined for discovery.k8s.io\/v1 EndpointSlice/);
    expect(stores.definitions()).toEqual([{ name: 'slices', indexBy: ['metadata.namespace'], kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' }]);
  });

  it('ships each store\'s kind and apiVersion in a full snapshot, so worker replicas check by it too', () => {
    const stores = new StoreProvider(set.stores);
    expect(stores.snapshot().stores.endpointslices).toMatchObject({ kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' });
  });
});

describe('an EndpointSlice without kind cannot inject configuration (issue 12)', () => {
  it('through the embedding API: Store.upsert, rendered inline and in a worker', async () => {
    const stores = new StoreProvider(set.stores);
    for (const [name, items] of Object.entries(shopItems([INJECTION]))) for (const item of items) stores.store(name).upsert(item);
    expectNoInjection(await new InlinePipeline({ templateSet: set }).execute(never, stores, 'reconcile'));
    expectNoInjection(await pool.execute(never, stores, 'reconcile'));
  });

  it('through a Kubernetes-style LIST whose items carry no kind, fed to the stores and to the watchers', async () => {
    const list = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', metadata: { resourceVersion: '42' }, items: shopItems([INJECTION]).endpointslices };
    const direct = new StoreProvider(set.stores);
    const watched = new StoreProvider(set.stores);
    const watchers = new WatcherSet({
      definitions: set.stores.map((def) => ({ ...def, debounceMs: 0 })),
      stores: watched,
      bus: new EventBus<ControllerEvent>({ logger: silentLogger() }),
      clock: new FakeClock(),
      logger: silentLogger(),
    });
    const { ingresses, services } = shopItems([]);
    for (const stores of [direct, watched]) {
      for (const item of ingresses) stores.store('ingresses').upsert(item);
      for (const item of services) stores.store('services').upsert(item);
    }
    for (const item of list.items) direct.store('endpointslices').upsert(item);
    for (const item of list.items) watchers.upsert('endpointslices', item);
    await flushMicrotasks();
    for (const stores of [direct, watched]) expectNoInjection(await new InlinePipeline({ templateSet: set }).execute(never, stores, 'reconcile'));
  });

  it('nor can an Ingress without kind add host map entries with a newline in its host', async () => {
    const stores = new StoreProvider(set.stores);
    const { services, endpointslices } = shopItems([]);
    for (const item of services) stores.store('services').upsert(item);
    for (const item of endpointslices) stores.store('endpointslices').upsert(item);
    stores.store('ingresses').upsert(listItem(ingress('evil', 'web', { rules: [rule('evil.example.com\nshop.example.com/', { path: '/', service: 'web' })] })));
    stores.store('ingresses').upsert(listItem(ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] })));
    const result = await pool.execute(never, stores, 'reconcile');
    const maps = Object.values(result.auxiliaryFiles.maps).join('');
    expect(maps).not.toContain('evil');
    expect(result.auxiliaryFiles.maps['host-prefix.map']).toBe('shop.example.com/ ing_shop_web_web_80\n');
    expect(result.rejections).toContainEqual(expect.objectContaining({ kind: 'Ingress', namespace: 'evil', name: 'web', scope: 'path' }));
  });
});

describe('a refused object never reaches a source as an exception', () => {
  it('is logged and counted by its watcher, which keeps serving', async () => {
    const stores = new StoreProvider(set.stores);
    const watchers = new WatcherSet({
      definitions: set.stores,
      stores,
      bus: new EventBus<ControllerEvent>({ logger: silentLogger() }),
      clock: new FakeClock(),
      logger: silentLogger(),
    });
    expect(() => watchers.upsert('services', endpointSlice('shop', 'web', ['10.0.0.1']))).not.toThrow();
    expect(() => watchers.upsert('services', { metadata: undefined } as unknown as KubeObject)).not.toThrow();
    watchers.upsert('services', listItem(service('shop', 'web')));
    expect(stores.store('services').size).toBe(1);
  });
});

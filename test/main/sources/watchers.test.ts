import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import type { ControllerEvent, EventOf } from '../../../src/main/events/events.js';
import { LAST_APPLIED_ANNOTATION, prepare } from '../../../src/main/sources/watcher.js';
import { WatcherSet } from '../../../src/main/sources/watcher-set.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { KubeObject, StoreDefinition } from '../../../src/worker/protocol.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { silentLogger, spyLogger } from '../../helpers/loggers.js';

const INGRESSES: StoreDefinition = { name: 'ingresses', apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', indexBy: ['metadata.namespace', 'metadata.name'] };
const SLICES: StoreDefinition = {
  name: 'endpointslices',
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  indexBy: ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name'],
  debounceMs: 0,
};

function object(name: string, resourceVersion?: string, extra: Record<string, unknown> = {}): KubeObject {
  return { metadata: { name, namespace: 'shop', ...(resourceVersion === undefined ? {} : { resourceVersion }) }, ...extra };
}

function rig(definitions: readonly StoreDefinition[] = [INGRESSES, SLICES]) {
  const clock = new FakeClock();
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const stores = new StoreProvider();
  const watchers = new WatcherSet({ definitions, stores, bus, clock, logger: silentLogger() });
  const seen: ControllerEvent[] = [];
  const subscription = bus.subscribe('test', { types: ['resource.index.updated', 'index.synchronized'], bufferSize: 10_000 });
  bus.start();
  /** Everything published so far, in order. */
  const drain = async (): Promise<ControllerEvent[]> => {
    await flushMicrotasks();
    while (subscription.depth > 0) {
      const event = await subscription.next();
      if (event !== undefined) seen.push(event);
    }
    return seen;
  };
  const updates = async (): Promise<EventOf<'resource.index.updated'>[]> =>
    (await drain()).filter((e): e is EventOf<'resource.index.updated'> => e.type === 'resource.index.updated');
  const synchronized = async (): Promise<EventOf<'index.synchronized'>[]> =>
    (await drain()).filter((e): e is EventOf<'index.synchronized'> => e.type === 'index.synchronized');
  return { clock, bus, stores, watchers, updates, synchronized };
}

describe('ResourceWatcher debounce', () => {
  it('publishes the first change at once and batches the changes inside the window into one event at its end', async () => {
    const { clock, watchers, updates } = rig();
    watchers.synced('ingresses');
    watchers.synced('endpointslices');
    watchers.upsert('ingresses', object('a', '1'));
    expect((await updates()).map((e) => e.changeStats)).toEqual([{ created: 1, modified: 0, deleted: 0, isInitialSync: false }]);

    await clock.advance(30);
    watchers.upsert('ingresses', object('b', '2'));
    watchers.upsert('ingresses', object('a', '3'));
    watchers.delete('ingresses', 'shop/b');
    expect(await updates()).toHaveLength(1);

    await clock.advance(69);
    expect(await updates()).toHaveLength(1);
    await clock.advance(1);
    const all = await updates();
    expect(all).toHaveLength(2);
    expect(all[1]?.changeStats).toEqual({ created: 1, modified: 1, deleted: 1, isInitialSync: false });
  });

  it('publishes a change after a quiet window at once again', async () => {
    const { clock, watchers, updates } = rig();
    watchers.synced('ingresses');
    watchers.synced('endpointslices');
    watchers.upsert('ingresses', object('a', '1'));
    await clock.advance(100);
    expect(clock.pending).toBe(0);
    watchers.upsert('ingresses', object('b', '2'));
    expect(await updates()).toHaveLength(2);
  });

  it('keeps one event per window under a steady stream of changes', async () => {
    const { clock, watchers, updates } = rig();
    watchers.synced('ingresses');
    watchers.synced('endpointslices');
    for (let t = 0; t < 1000; t += 10) {
      watchers.upsert('ingresses', object(`o${t}`, String(t + 1)));
      await clock.advance(10);
    }
    const events = await updates();
    // 1 leading event, then one per 100 ms window over 1 s.
    expect(events.length).toBeGreaterThanOrEqual(10);
    expect(events.length).toBeLessThanOrEqual(11);
    expect(events.reduce((sum, e) => sum + e.changeStats.created, 0)).toBe(100);
  });

  it('honours a template set debounceMs of 0 with one event per synchronous burst and no timer', async () => {
    const { clock, watchers, updates } = rig();
    watchers.synced('ingresses');
    watchers.synced('endpointslices');
    for (let i = 0; i < 500; i++) watchers.upsert('endpointslices', object(`s${i}`, String(i + 1), { metadata: { name: `s${i}`, namespace: 'shop', resourceVersion: String(i + 1), labels: { 'kubernetes.io/service-name': `svc${i}` } } }));
    expect(clock.pending).toBe(0);
    const events = await updates();
    expect(events).toHaveLength(1);
    expect(events[0]?.changeStats.created).toBe(500);
    watchers.upsert('endpointslices', object('s1', '999', { metadata: { name: 's1', namespace: 'shop', resourceVersion: '999', labels: { 'kubernetes.io/service-name': 'svc1' } } }));
    expect(await updates()).toHaveLength(2);
  });

  it('takes a custom window from debounceMs', async () => {
    const { clock, watchers, updates } = rig([{ ...INGRESSES, debounceMs: 1000 }]);
    watchers.synced('ingresses');
    watchers.upsert('ingresses', object('a', '1'));
    watchers.upsert('ingresses', object('b', '2'));
    await clock.advance(999);
    expect(await updates()).toHaveLength(1);
    await clock.advance(1);
    expect(await updates()).toHaveLength(2);
  });
});

describe('initial sync', () => {
  it('marks events as initial sync until the source says the list is complete, then publishes index.synchronized once with the counts', async () => {
    const { watchers, updates, synchronized } = rig();
    watchers.upsert('ingresses', object('a', '1'));
    watchers.upsert('endpointslices', object('s', '1'));
    watchers.synced('ingresses');
    expect(await synchronized()).toHaveLength(0);
    expect(watchers.pending()).toEqual(['endpointslices']);
    watchers.synced('endpointslices');
    watchers.synced('endpointslices');
    const sync = await synchronized();
    expect(sync).toHaveLength(1);
    expect(sync[0]?.resourceCounts).toEqual({ ingresses: 1, endpointslices: 1 });
    expect((await updates()).every((e) => e.changeStats.isInitialSync)).toBe(true);
    expect(watchers.synchronized).toBe(true);
    await expect(watchers.whenSynchronized()).resolves.toBeUndefined();
  });

  it('publishes the changes after the initial list without the initial-sync flag', async () => {
    const { clock, watchers, updates } = rig();
    watchers.synced('ingresses');
    watchers.synced('endpointslices');
    await clock.advance(1000);
    watchers.upsert('ingresses', object('late', '5'));
    const events = await updates();
    expect(events.at(-1)?.changeStats.isInitialSync).toBe(false);
  });

  it('flushes what the initial list held in the window when the list completes, still as initial sync', async () => {
    const { watchers, updates } = rig();
    watchers.upsert('ingresses', object('a', '1'));
    watchers.upsert('ingresses', object('b', '2'));
    watchers.synced('ingresses');
    const events = await updates();
    expect(events.map((e) => e.changeStats)).toEqual([
      { created: 1, modified: 0, deleted: 0, isInitialSync: true },
      { created: 1, modified: 0, deleted: 0, isInitialSync: true },
    ]);
  });
});

describe('stripping', () => {
  it('drops an update whose resourceVersion did not change', async () => {
    const { watchers, stores, updates } = rig();
    watchers.synced('ingresses');
    watchers.synced('endpointslices');
    const first = object('a', '7', { spec: { x: 1 } });
    watchers.upsert('ingresses', first);
    watchers.upsert('ingresses', object('a', '7', { spec: { x: 2 } }));
    expect(stores.store('ingresses').get('shop/a')?.spec).toEqual({ x: 1 });
    expect((await updates()).reduce((n, e) => n + e.changeStats.modified, 0)).toBe(0);
  });

  it('applies updates without a resourceVersion (manifests have none)', () => {
    const { watchers, stores } = rig();
    watchers.upsert('ingresses', object('a', undefined, { spec: { x: 1 } }));
    watchers.upsert('ingresses', object('a', undefined, { spec: { x: 2 } }));
    expect(stores.store('ingresses').get('shop/a')?.spec).toEqual({ x: 2 });
  });

  it('stamps kind and apiVersion from the store definition on LIST items that lack them', () => {
    const { watchers, stores } = rig();
    watchers.upsert('ingresses', object('a', '1'));
    expect(stores.store('ingresses').get('shop/a')).toMatchObject({ kind: 'Ingress', apiVersion: 'networking.k8s.io/v1' });
  });

  it('removes managedFields and the last-applied annotation without touching the source object', () => {
    const raw: KubeObject = {
      kind: 'Ingress',
      apiVersion: 'networking.k8s.io/v1',
      metadata: { name: 'a', namespace: 'shop', managedFields: [{ manager: 'kubectl' }], annotations: { [LAST_APPLIED_ANNOTATION]: '{"huge":true}', keep: 'me' } },
    };
    const stored = prepare(raw, INGRESSES);
    expect(stored.metadata).toEqual({ name: 'a', namespace: 'shop', annotations: { keep: 'me' } });
    expect(raw.metadata.managedFields).toBeDefined();
    expect(raw.metadata.annotations?.[LAST_APPLIED_ANNOTATION]).toBeDefined();
  });

  it('returns the same object when there is nothing to strip or stamp', () => {
    const raw: KubeObject = { kind: 'Ingress', apiVersion: 'networking.k8s.io/v1', metadata: { name: 'a' } };
    expect(prepare(raw, INGRESSES)).toBe(raw);
  });
});

describe('WatcherSet', () => {
  it('ignores and logs once a resource no store watches', () => {
    const spy = spyLogger();
    const clock = new FakeClock();
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const watchers = new WatcherSet({ definitions: [INGRESSES], stores: new StoreProvider(), bus, clock, logger: spy.logger });
    watchers.upsert('pods', object('p', '1'));
    watchers.upsert('pods', object('q', '1'));
    expect(spy.warn).toHaveBeenCalledTimes(1);
  });

  it('counts and logs problems sources report', () => {
    const spy = spyLogger();
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const watchers = new WatcherSet({ definitions: [INGRESSES], stores: new StoreProvider(), bus, clock: new FakeClock(), logger: spy.logger });
    watchers.problem('ingresses', 'watch dropped; restarting in 100 ms');
    expect(watchers.problems).toBe(1);
    expect(spy.warn).toHaveBeenCalledWith({ resource: 'ingresses' }, 'watch dropped; restarting in 100 ms');
  });

  it('close publishes what a window still holds', async () => {
    const { clock, watchers, updates } = rig();
    watchers.synced('ingresses');
    watchers.synced('endpointslices');
    watchers.upsert('ingresses', object('a', '1'));
    watchers.upsert('ingresses', object('b', '2'));
    watchers.close();
    expect(clock.pending).toBe(0);
    expect(await updates()).toHaveLength(2);
  });
});

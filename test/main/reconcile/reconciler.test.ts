import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventBus, type Subscription } from '../../../src/main/bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../../src/main/events/events.js';
import { HAPROXY_PODS_STORE, Reconciler, reconcilerMerge, triggerFor } from '../../../src/main/reconcile/reconciler.js';
import { flushMicrotasks, track, waitUntil } from '../../helpers/async.js';
import { resourceUpdated } from '../../helpers/events.js';
import { silentLogger, spyLogger } from '../../helpers/loggers.js';

type Trigger = EventOf<'reconciliation.triggered'>;

interface Harness {
  readonly bus: EventBus<ControllerEvent>;
  readonly reconciler: Reconciler;
  readonly triggers: Subscription<Trigger>;
  readonly controller: AbortController;
  readonly running: Promise<void>;
  /** Every trigger published so far (drained from the recorder). */
  collect(): Promise<Trigger[]>;
}

/** A started bus with a running Reconciler and a recorder of reconciliation.triggered. */
function startReconciler(): Harness {
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const triggers = bus.subscribe('recorder', { types: ['reconciliation.triggered'], bufferSize: 10_000 });
  const reconciler = new Reconciler(bus, silentLogger());
  bus.start();
  const controller = new AbortController();
  const running = reconciler.start(controller.signal);
  const all: Trigger[] = [];
  return {
    bus,
    reconciler,
    triggers,
    controller,
    running,
    async collect() {
      while (triggers.depth > 0) all.push((await triggers.next()) as Trigger);
      return [...all];
    },
  };
}

let harness: Harness | undefined;

afterEach(async () => {
  vi.useRealTimers();
  harness?.controller.abort();
  await harness?.running;
  harness = undefined;
});

describe('triggerFor (the Reconciler table)', () => {
  const rows: [string, ControllerEvent, string, boolean][] = [
    ['resource.index.updated', resourceUpdated('ingresses'), 'resource_change', true],
    ['http.resource.updated', newEvent('http.resource.updated', { url: 'http://x/a', checksum: 'c1', contentSize: 3 }), 'http_resource_change', true],
    ['index.synchronized', newEvent('index.synchronized', { resourceCounts: { ingresses: 1 } }), 'index_synchronized', false],
    ['http.resource.accepted', newEvent('http.resource.accepted', { url: 'http://x/a', checksum: 'c1', contentSize: 3 }), 'http_resource_accepted', false],
    ['drift.prevention.triggered', newEvent('drift.prevention.triggered', { timeSinceLastDeploymentMs: 60_000 }), 'drift_prevention', false],
    ['leader.became', newEvent('leader.became', { identity: 'pod-a' }), 'became_leader', false],
  ];

  it.each(rows)('maps %s to its reason and coalescibility', (_type, input, reason, coalescible) => {
    expect(triggerFor(input as Parameters<typeof triggerFor>[0])).toEqual({ reason, coalescible });
  });

  it('ignores a resource.index.updated that is part of the initial sync', () => {
    expect(triggerFor(resourceUpdated('ingresses', { created: 1, modified: 0, isInitialSync: true }))).toBeNull();
  });

  it('ignores a resource.index.updated of the haproxy-pods store', () => {
    expect(HAPROXY_PODS_STORE).toBe('haproxy-pods');
    expect(triggerFor(resourceUpdated('haproxy-pods'))).toBeNull();
  });

  it('does not ignore a store whose name merely contains haproxy-pods', () => {
    expect(triggerFor(resourceUpdated('haproxy-pods-extra'))).toEqual({ reason: 'resource_change', coalescible: true });
  });
});

describe('Reconciler', () => {
  const accepted: [string, () => ControllerEvent, string, boolean][] = [
    ['resource.index.updated', () => resourceUpdated('services', { created: 2 }), 'resource_change', true],
    ['http.resource.updated', () => newEvent('http.resource.updated', { url: 'http://x/a', checksum: 'c1', contentSize: 3 }), 'http_resource_change', true],
    ['index.synchronized', () => newEvent('index.synchronized', { resourceCounts: { services: 4 } }), 'index_synchronized', false],
    ['http.resource.accepted', () => newEvent('http.resource.accepted', { url: 'http://x/a', checksum: 'c1', contentSize: 3 }), 'http_resource_accepted', false],
    ['drift.prevention.triggered', () => newEvent('drift.prevention.triggered', { timeSinceLastDeploymentMs: 60_000 }), 'drift_prevention', false],
    ['leader.became', () => newEvent('leader.became', { identity: 'pod-a' }), 'became_leader', false],
  ];

  it.each(accepted)('publishes one trigger for %s with reason %s (coalescible: %s) in a new correlation', async (_type, make, reason, coalescible) => {
    harness = startReconciler();
    const input = make();

    harness.bus.publish(input);
    await waitUntil(() => harness!.triggers.depth >= 1, 'a trigger');
    await flushMicrotasks();
    const triggers = await harness.collect();

    expect(triggers).toHaveLength(1);
    const [t] = triggers as [Trigger];
    expect(t.type).toBe('reconciliation.triggered');
    expect(t.reason).toBe(reason);
    expect(t.coalescible).toBe(coalescible);
    expect(t.correlationId).toBe(t.eventId);
    expect(t.correlationId).not.toBe(input.correlationId);
    expect(t.causationId).toBeUndefined();
  });

  it('publishes nothing for an initial-sync resource update or a haproxy-pods update', async () => {
    harness = startReconciler();

    harness.bus.publish(resourceUpdated('ingresses', { isInitialSync: true, created: 1, modified: 0 }));
    harness.bus.publish(resourceUpdated('haproxy-pods'));
    harness.bus.publish(newEvent('index.synchronized', { resourceCounts: { ingresses: 1 } }));
    await waitUntil(() => harness!.triggers.depth >= 1, 'the index_synchronized trigger');
    await flushMicrotasks();

    const triggers = await harness.collect();
    expect(triggers.map((t) => t.reason)).toEqual(['index_synchronized']);
  });

  it('ignores events it does not subscribe to, including its own triggers', async () => {
    harness = startReconciler();

    harness.bus.publish(newEvent('leader.lost', { identity: 'pod-a', reason: 'lease lost' }));
    harness.bus.publish(newEvent('reconciliation.triggered', { reason: 'manual', coalescible: false }));
    harness.bus.publish(newEvent('template.rendered', {
      renderId: 'r', haproxyConfig: '', auxiliaryFiles: { maps: {}, files: {}, certificates: {} }, checksum: 'c',
      configBytes: 0, auxiliaryFileCount: 0, durationMs: 1, triggerReason: 'x', coalescible: true, storeVersion: 1,
    }));
    harness.bus.publish(newEvent('leader.became', { identity: 'pod-a' }));
    await waitUntil(() => harness!.triggers.depth >= 2, 'two triggers');
    await flushMicrotasks();

    const triggers = await harness.collect();
    expect(triggers.map((t) => t.reason)).toEqual(['manual', 'became_leader']);
  });

  it('a burst of 5 resource changes gives exactly 5 triggers, each in its own correlation', async () => {
    harness = startReconciler();

    for (let i = 0; i < 5; i++) harness.bus.publish(resourceUpdated('endpointslices', { modified: i + 1 }));
    await waitUntil(() => harness!.triggers.depth >= 5, 'five triggers');
    await flushMicrotasks(200);

    const triggers = await harness.collect();
    expect(triggers).toHaveLength(5);
    expect(triggers.every((t) => t.reason === 'resource_change' && t.coalescible)).toBe(true);
    expect(new Set(triggers.map((t) => t.correlationId)).size).toBe(5);
  });

  it('a synchronous flood of 100,000 index updates causes no drop, and a trigger follows the last one', async () => {
    harness = startReconciler();

    for (let i = 0; i < 100_000; i++) harness.bus.publish(resourceUpdated(i % 2 === 0 ? 'endpointslices' : 'ingresses'));
    const last = resourceUpdated('ingresses');
    harness.bus.publish(last);
    await flushMicrotasks(200);

    expect(harness.bus.droppedCritical).toBe(0);
    const triggers = await harness.collect();
    // Past 1,000 queued, updates that cause the same coalescible trigger merge, as in the Coordinator's mailbox.
    expect(triggers.length).toBeGreaterThanOrEqual(1000);
    expect(triggers.length).toBeLessThanOrEqual(1010);
    expect(triggers.every((t) => t.reason === 'resource_change' && t.coalescible)).toBe(true);
    expect(Math.max(...triggers.map((t) => t.timestamp))).toBeGreaterThanOrEqual(last.timestamp);
  });

  it('merges past 1,000 queued only updates that cause the same trigger: an index.synchronized among them keeps its own', async () => {
    harness = startReconciler();

    for (let i = 0; i < 2000; i++) harness.bus.publish(resourceUpdated('ingresses'));
    harness.bus.publish(newEvent('index.synchronized', { resourceCounts: {} }));
    for (let i = 0; i < 2000; i++) harness.bus.publish(resourceUpdated('services'));
    await flushMicrotasks(200);

    const reasons = (await harness.collect()).map((t) => t.reason);
    expect(reasons.filter((r) => r === 'index_synchronized')).toHaveLength(1);
    expect(reasons.at(-1)).toBe('resource_change');
    expect(reasons.indexOf('index_synchronized')).toBeGreaterThanOrEqual(1000);
    expect(harness.bus.droppedCritical).toBe(0);
  });

  it('keeps an accepted update queued behind an ignored initial-sync one', () => {
    const initial = resourceUpdated('ingresses', { isInitialSync: true });
    const live = resourceUpdated('ingresses');
    expect(reconcilerMerge(initial, live)).toBe('append');
    expect(reconcilerMerge(live, initial)).toBe('append');
    expect(reconcilerMerge(initial, resourceUpdated('services', { isInitialSync: true }))).toBe('discard');
    expect(reconcilerMerge(live, resourceUpdated('services'))).toBe('discard');
  });

  it('fires immediately and creates no timer: no debounce', async () => {
    vi.useFakeTimers();
    harness = startReconciler();

    harness.bus.publish(resourceUpdated('ingresses'));
    harness.bus.publish(newEvent('http.resource.updated', { url: 'http://x', checksum: 'c', contentSize: 1 }));
    await waitUntil(() => harness!.triggers.depth >= 2, 'two triggers without advancing time');

    expect(vi.getTimerCount()).toBe(0);
    expect((await harness.collect()).map((t) => t.reason)).toEqual(['resource_change', 'http_resource_change']);
  });

  it('subscribes in its constructor, so inputs published before the bus starts become triggers', async () => {
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const before = bus.subscriberCount;
    const reconciler = new Reconciler(bus, silentLogger());
    expect(bus.subscriberCount).toBe(before + 1);

    bus.publish(newEvent('index.synchronized', { resourceCounts: { ingresses: 2 } }));
    const triggers = bus.subscribe('recorder', { types: ['reconciliation.triggered'] });
    bus.start();
    const controller = new AbortController();
    const running = reconciler.start(controller.signal);

    const first = await triggers.next();
    expect(first?.reason).toBe('index_synchronized');
    controller.abort();
    await running;
  });

  it('start() resolves when the signal aborts and then unsubscribes', async () => {
    harness = startReconciler();
    const running = track(harness.running);
    await flushMicrotasks();
    expect(running.done).toBe(false);
    expect(harness.bus.subscriberCount).toBe(2);

    harness.controller.abort();
    await harness.running;

    expect(running.done).toBe(true);
    expect(harness.bus.subscriberCount).toBe(1);
    harness.bus.publish(resourceUpdated('ingresses'));
    await flushMicrotasks();
    expect(await harness.collect()).toHaveLength(0);
  });

  it('started with an already aborted signal, resolves without turning queued inputs into triggers', async () => {
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const reconciler = new Reconciler(bus, silentLogger());
    const triggers = bus.subscribe('recorder', { types: ['reconciliation.triggered'] });
    bus.publish(resourceUpdated('ingresses'));
    bus.publish(resourceUpdated('services'));
    bus.start();

    await reconciler.start(AbortSignal.abort());
    await flushMicrotasks();

    expect(triggers.depth).toBe(0);
    expect(bus.subscriberCount).toBe(1);
  });

  it('subscribing on a started bus logs the bus warning: the Reconciler is meant to exist before start', () => {
    const logs = spyLogger();
    const bus = new EventBus<ControllerEvent>({ logger: logs.logger });
    new Reconciler(bus, silentLogger());
    expect(logs.warn).not.toHaveBeenCalled();

    bus.start();
    new Reconciler(bus, silentLogger());
    expect(logs.warn).toHaveBeenCalledTimes(1);
  });
});

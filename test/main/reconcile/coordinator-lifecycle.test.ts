// The Coordinator's subscription over leadership terms: it subscribes in start(), not before,
// and unsubscribes when the term's signal aborts.
import { afterEach, describe, expect, it } from 'vitest';
import { Coordinator } from '../../../src/main/reconcile/coordinator.js';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import type { ControllerEvent } from '../../../src/main/events/events.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { flushMicrotasks, track } from '../../helpers/async.js';
import { endHarness, harness } from '../../helpers/coordinator-harness.js';
import { trigger } from '../../helpers/events.js';
import { FakePipeline } from '../../helpers/fake-pipeline.js';
import { silentLogger, spyLogger } from '../../helpers/loggers.js';

afterEach(endHarness);

describe('Coordinator subscription lifecycle', () => {
  it('does not subscribe in its constructor', () => {
    const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
    const before = bus.subscriberCount;

    new Coordinator({ eventBus: bus, pipeline: new FakePipeline(), storeProvider: new StoreProvider(), logger: silentLogger() });

    expect(bus.subscriberCount).toBe(before);
  });

  it('whenReady() stays pending until start() has subscribed, then resolves', async () => {
    const h = harness();
    h.bus.start();
    const ready = track(h.coordinator.whenReady());
    await flushMicrotasks();
    expect(ready.done).toBe(false);
    expect(h.bus.subscriberCount).toBe(0);

    h.running = h.coordinator.start(h.controller.signal);
    await ready.promise;

    expect(h.bus.subscriberCount).toBe(1);
  });

  it('subscribes leader-only: starting on a running bus logs no late-subscription warning', async () => {
    const logs = spyLogger();
    const h = harness();
    const bus = new EventBus<ControllerEvent>({ logger: logs.logger });
    bus.start();
    const coordinator = new Coordinator({ eventBus: bus, pipeline: h.pipeline, storeProvider: h.storeProvider, logger: silentLogger() });
    const controller = new AbortController();
    const running = coordinator.start(controller.signal);
    await coordinator.whenReady();

    expect(bus.subscriberCount).toBe(1);
    expect(logs.warn).not.toHaveBeenCalled();
    controller.abort();
    await running;
  });

  it('start() resolves when the signal aborts and unsubscribes; whenReady() waits for the next term', async () => {
    const h = harness();
    await h.startTerm();
    expect(h.bus.subscriberCount).toBe(1);

    await h.endTerm();

    expect(h.bus.subscriberCount).toBe(0);
    const ready = track(h.coordinator.whenReady());
    await flushMicrotasks();
    expect(ready.done).toBe(false);
    await h.startTerm();
    expect(ready.done).toBe(true);
  });

  it('never executes a trigger published before it started', async () => {
    const h = harness();
    h.bus.start();
    h.publish(trigger('resource_change'));

    await h.startTerm();
    await flushMicrotasks();
    expect(h.pipeline.callCount).toBe(0);

    const later = trigger('drift_prevention', false);
    h.publish(later);
    await h.pipeline.waitForCalls(1);
    await flushMicrotasks();
    expect(h.pipeline.callCount).toBe(1);
    expect(h.ofType('reconciliation.started')[0]?.correlationId).toBe(later.correlationId);
  });

  it('calls the pipeline directly with its signal, its store provider and reconcile mode', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);

    const call = h.pipeline.call(0);
    expect(call.stores).toBe(h.storeProvider);
    expect(call.mode).toBe('reconcile');
    expect(call.signal.aborted).toBe(false);
    h.controller.abort();
    expect(call.signal.aborted).toBe(true);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { Coordinator } from '../../../src/main/reconcile/coordinator.js';
import type { Logger } from 'pino';
import { EventBus, type DropInfo } from '../../../src/main/bus/event-bus.js';
import type { ControllerEvent, EventOf, EventType } from '../../../src/main/events/events.js';
import { mailboxDecision } from '../../../src/main/reconcile/mailbox.js';
import { PipelineError, type PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { EMPTY_AUXILIARY_FILES } from '../../../src/main/pipeline/pipeline.js';
import { flushMicrotasks, track, waitUntil } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { trigger, verdict } from '../../helpers/events.js';
import { FakePipeline, pipelineResult } from '../../helpers/fake-pipeline.js';
import { silentLogger, spyLogger } from '../../helpers/loggers.js';

const OUTPUT_TYPES: readonly EventType[] = ['reconciliation.started', 'template.rendered', 'reconciliation.failed', 'reconciliation.completed'];
const EMPTY_BASELINE = { auxiliaryFiles: { maps: {}, files: {}, certificates: {} } };

interface HarnessOptions {
  readonly logger?: Logger;
  readonly pipeline?: FakePipeline;
  readonly mailboxSize?: number;
  readonly onDrop?: (info: DropInfo) => void;
}

class Harness {
  readonly bus: EventBus<ControllerEvent>;
  readonly pipeline: FakePipeline;
  readonly storeProvider = new StoreProvider();
  readonly publishSpy;
  readonly clock = new FakeClock();
  readonly coordinator: Coordinator;
  controller = new AbortController();
  running: Promise<void> | undefined;

  constructor(options: HarnessOptions = {}) {
    this.bus = new EventBus<ControllerEvent>({ logger: silentLogger(), ...(options.onDrop === undefined ? {} : { onDrop: options.onDrop }) });
    this.publishSpy = vi.spyOn(this.bus, 'publish');
    this.pipeline = options.pipeline ?? new FakePipeline();
    this.coordinator = new Coordinator({
      eventBus: this.bus,
      pipeline: this.pipeline,
      storeProvider: this.storeProvider,
      logger: options.logger ?? silentLogger(),
      clock: this.clock,
      ...(options.mailboxSize === undefined ? {} : { mailboxSize: options.mailboxSize }),
    });
  }

  /** Everything published on the bus, by anyone. */
  get published(): ControllerEvent[] {
    return this.publishSpy.mock.calls.map(([event]) => event);
  }

  /** What the Coordinator published. */
  get outputs(): ControllerEvent[] {
    return this.published.filter((e) => OUTPUT_TYPES.includes(e.type));
  }

  ofType<T extends EventType>(type: T): EventOf<T>[] {
    return this.published.filter((e): e is EventOf<T> => e.type === type);
  }

  /** Starts the bus and a leadership term, and waits until the Coordinator has subscribed. */
  async startTerm(): Promise<void> {
    this.bus.start();
    this.controller = new AbortController();
    this.running = this.coordinator.start(this.controller.signal);
    await this.coordinator.whenReady();
  }

  async endTerm(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  publish(event: ControllerEvent): number {
    return this.bus.publish(event);
  }

  waitForCompleted(n: number): Promise<void> {
    return waitUntil(() => this.ofType('reconciliation.completed').length >= n, `${n} reconciliation.completed`);
  }

  /** Publishes a trigger, lets the pipeline succeed with `result`, and waits for completion. */
  async render(result: PipelineResult = pipelineResult(), t = trigger()): Promise<PipelineResult> {
    const calls = this.pipeline.callCount;
    const completed = this.ofType('reconciliation.completed').length;
    this.publish(t);
    await this.pipeline.waitForCalls(calls + 1);
    this.pipeline.call(calls).result.resolve(result);
    await this.waitForCompleted(completed + 1);
    return result;
  }

  /** Publishes a trigger and returns the baseline the pipeline was called with (left pending). */
  async nextBaseline(): Promise<unknown> {
    const calls = this.pipeline.callCount;
    this.publish(trigger());
    await this.pipeline.waitForCalls(calls + 1);
    return this.pipeline.call(calls).options?.baseline;
  }
}

let current: Harness | undefined;

function harness(options: HarnessOptions = {}): Harness {
  current = new Harness(options);
  return current;
}

afterEach(async () => {
  current?.controller.abort();
  await current?.running;
  current = undefined;
});

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

describe('Coordinator reconciliation events', () => {
  it('on success publishes started, template.rendered, completed in the trigger correlation', async () => {
    const h = harness();
    await h.startTerm();
    const t = trigger('http_resource_change', true);
    const result = pipelineResult({
      haproxyConfig: 'global\n  maxconn 100 # ü\n',
      storeVersion: 42,
      auxiliaryFiles: { maps: { 'a.map': 'x', 'b.map': 'y' }, files: { 'f.http': 'z' }, certificates: {} },
    });

    h.publish(t);
    await h.pipeline.waitForCalls(1);
    expect(h.outputs.map((e) => e.type)).toEqual(['reconciliation.started']);
    await h.clock.advance(250);
    h.pipeline.call(0).result.resolve(result);
    await h.waitForCompleted(1);

    const outputs = h.outputs;
    expect(outputs.map((e) => e.type)).toEqual(['reconciliation.started', 'template.rendered', 'reconciliation.completed']);
    for (const event of outputs) {
      expect(event.correlationId).toBe(t.correlationId);
      expect(event.causationId).toBe(t.eventId);
    }
    const [started, rendered, completed] = outputs as [
      EventOf<'reconciliation.started'>,
      EventOf<'template.rendered'>,
      EventOf<'reconciliation.completed'>,
    ];
    expect(started.trigger).toBe('http_resource_change');
    expect(rendered).toMatchObject({
      renderId: result.renderId,
      haproxyConfig: result.haproxyConfig,
      auxiliaryFiles: result.auxiliaryFiles,
      checksum: result.checksum,
      configBytes: Buffer.byteLength(result.haproxyConfig),
      auxiliaryFileCount: 3,
      durationMs: 250,
      triggerReason: 'http_resource_change',
      coalescible: true,
      storeVersion: 42,
    });
    expect(completed).toMatchObject({ outcome: 'success', durationMs: 250, triggerReason: 'http_resource_change' });
    expect(h.coordinator.stats).toEqual({ renders: 1, failures: 0, coalesced: 0, maxQueued: 0 });
  });

  it('counts the config bytes of a patch from its edits, and a patch without config edits as the previous config', async () => {
    const h = harness();
    await h.startTerm();
    const first = pipelineResult({ haproxyConfig: 'global\n  maxconn 100 # ü\n', auxiliaryFiles: { maps: { 'a.map': 'x 1\n' }, files: {}, certificates: {} } });
    h.publish(trigger('a', true));
    await h.pipeline.waitForCalls(1);
    h.pipeline.call(0).result.resolve(first);
    await h.waitForCompleted(1);
    // The maps changed, the config did not: the same string, so no config edits.
    const mapsOnly = pipelineResult({
      haproxyConfig: first.haproxyConfig,
      auxiliaryFiles: { maps: { 'a.map': 'x 2\n' }, files: {}, certificates: {} },
      patch: { from: first.renderId, edits: { 'maps/a.map': [{ at: 2, remove: 1, text: '2' }] } },
    });
    h.publish(trigger('b', true));
    await h.pipeline.waitForCalls(2);
    h.pipeline.call(1).result.resolve(mapsOnly);
    await h.waitForCompleted(2);
    const edited = pipelineResult({
      haproxyConfig: 'global\n  maxconn 2000 # ü\n',
      auxiliaryFiles: mapsOnly.auxiliaryFiles,
      patch: { from: mapsOnly.renderId, edits: { config: [{ at: 17, remove: 3, text: '2000' }] } },
    });
    h.publish(trigger('c', true));
    await h.pipeline.waitForCalls(3);
    h.pipeline.call(2).result.resolve(edited);
    await h.waitForCompleted(3);
    const bytes = h.outputs.filter((e): e is EventOf<'template.rendered'> => e.type === 'template.rendered').map((e) => e.configBytes);
    expect(bytes).toEqual([Buffer.byteLength(first.haproxyConfig), Buffer.byteLength(first.haproxyConfig), Buffer.byteLength(edited.haproxyConfig)]);
  });

  it('on failure publishes started, reconciliation.failed, completed in the trigger correlation', async () => {
    const h = harness();
    await h.startTerm();
    const t = trigger('index_synchronized', false);

    h.publish(t);
    await h.pipeline.waitForCalls(1);
    await h.clock.advance(7);
    h.pipeline.call(0).result.reject(new PipelineError('validation', 'backend be_x has no servers', 'backend'));
    await h.waitForCompleted(1);

    const outputs = h.outputs;
    expect(outputs.map((e) => e.type)).toEqual(['reconciliation.started', 'reconciliation.failed', 'reconciliation.completed']);
    expect(outputs.every((e) => e.correlationId === t.correlationId && e.causationId === t.eventId)).toBe(true);
    expect(outputs[1]).toMatchObject({
      error: 'validation failed in backend phase: backend be_x has no servers',
      phase: 'validation',
      subPhase: 'backend',
      triggerReason: 'index_synchronized',
    });
    expect(outputs[2]).toMatchObject({ outcome: 'failure', durationMs: 7, triggerReason: 'index_synchronized' });
    expect(h.ofType('template.rendered')).toHaveLength(0);
    expect(h.coordinator.stats).toEqual({ renders: 0, failures: 1, coalesced: 0, maxQueued: 0 });
  });

  it.each([
    ['auxiliary', new PipelineError('auxiliary', 'map hosts.map missing'), 'validation failed in auxiliary phase: map hosts.map missing'],
    ['render', new PipelineError('render', 'unknown helper "x"'), 'render failed: unknown helper "x"'],
    ['validation', new PipelineError('validation', 'no frontend'), 'validation failed: no frontend'],
  ] as const)('carries the %s phase of a PipelineError and omits an absent subPhase', async (phase, error, message) => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);
    h.pipeline.call(0).result.reject(error);
    await h.waitForCompleted(1);

    const [failed] = h.ofType('reconciliation.failed');
    expect(failed).toMatchObject({ phase, error: message });
    expect(failed && 'subPhase' in failed).toBe(false);
  });

  it.each([
    ['an Error', new TypeError('boom'), 'render failed: boom'],
    ['a string', 'kaput', 'render failed: kaput'],
  ])('reports a rejection with %s that is not a PipelineError as a render failure', async (_kind, rejection, message) => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);
    h.pipeline.call(0).result.reject(rejection);
    await h.waitForCompleted(1);

    expect(h.ofType('reconciliation.failed')).toMatchObject([{ phase: 'render', error: message }]);
    expect(h.ofType('reconciliation.completed')).toMatchObject([{ outcome: 'failure' }]);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
  ])('counts an execute that resolves %s as a render failure and keeps running', async (_kind, value) => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);
    h.pipeline.call(0).result.resolve(value as unknown as PipelineResult);
    await h.waitForCompleted(1);

    expect(h.outputs.map((e) => e.type)).toEqual(['reconciliation.started', 'reconciliation.failed', 'reconciliation.completed']);
    expect(h.ofType('reconciliation.failed')[0]).toMatchObject({ phase: 'render' });
    expect(h.ofType('reconciliation.failed')[0]?.error).toMatch(/^render failed: /);
    expect(h.coordinator.stats.failures).toBe(1);

    await h.render();
    expect(h.ofType('template.rendered')).toHaveLength(1);
  });

  it('logs the warnings of a successful render', async () => {
    const logs = spyLogger();
    const h = harness({ logger: logs.logger });
    await h.startTerm();
    await h.render(pipelineResult({ warnings: ['ingress default/web: host is empty'] }));

    expect(logs.warn).toHaveBeenCalledWith(expect.anything(), 'ingress default/web: host is empty');
  });

  it('publishes nothing further for a trigger whose render outlives the leadership term', async () => {
    const h = harness({ pipeline: new FakePipeline({ honourAbort: false }) });
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);
    expect(h.outputs.map((e) => e.type)).toEqual(['reconciliation.started']);

    h.controller.abort();
    h.pipeline.call(0).result.resolve(pipelineResult());
    await h.running;
    await flushMicrotasks();

    expect(h.outputs.map((e) => e.type)).toEqual(['reconciliation.started']);
    expect(h.coordinator.stats).toEqual({ renders: 0, failures: 0, coalesced: 0, maxQueued: 0 });
    expect(h.bus.subscriberCount).toBe(0);
  });

  it('publishes no failure when the render rejects because leadership was lost', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    h.publish(trigger('drift_prevention', false));
    await h.pipeline.waitForCalls(1);

    h.controller.abort();
    expect(h.pipeline.call(0).result.settled).toBe(true);
    await h.running;
    await flushMicrotasks();

    expect(h.outputs.map((e) => e.type)).toEqual(['reconciliation.started']);
    expect(h.pipeline.callCount).toBe(1);
  });
});

describe('Coordinator mailbox', () => {
  it('a flood of 4096 coalescible triggers during a render causes exactly one further execute and no critical drop', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);

    const flood = Array.from({ length: 4096 }, () => trigger('resource_change', true));
    const receivers = flood.map((t) => h.publish(t));

    expect(receivers.every((n) => n === 1)).toBe(true);
    expect(h.bus.droppedCritical).toBe(0);
    h.pipeline.call(0).result.resolve(pipelineResult());
    await h.pipeline.waitForCalls(2);
    h.pipeline.call(1).result.resolve(pipelineResult());
    await h.waitForCompleted(2);
    await flushMicrotasks(200);

    expect(h.pipeline.callCount).toBe(2);
    expect(h.bus.droppedCritical).toBe(0);
    expect(h.coordinator.stats.coalesced).toBe(4095);
    // 4,096 triggers arrived during one render and left one queued behind it.
    expect(h.coordinator.stats.maxQueued).toBe(1);
    // the newest trigger replaced the queued ones: the second render runs in its correlation
    expect(h.ofType('reconciliation.started')[1]?.correlationId).toBe(flood.at(-1)?.correlationId);
  });

  it('a queued non-coalescible trigger survives later coalescible ones, which it absorbs', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);

    const synced = trigger('index_synchronized', false);
    h.publish(synced);
    for (let i = 0; i < 10; i++) h.publish(trigger('resource_change', true));
    h.pipeline.call(0).result.resolve(pipelineResult());
    await h.pipeline.waitForCalls(2);
    h.pipeline.call(1).result.resolve(pipelineResult());
    await h.waitForCompleted(2);
    await flushMicrotasks();

    const started = h.ofType('reconciliation.started');
    expect(started[1]?.trigger).toBe('index_synchronized');
    expect(started[1]?.correlationId).toBe(synced.correlationId);
    expect(h.pipeline.callCount).toBe(2);
    expect(h.coordinator.stats.coalesced).toBe(10);
  });

  it('a non-coalescible trigger replaces a queued coalescible one', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);

    h.publish(trigger('resource_change', true));
    h.publish(trigger('drift_prevention', false));
    h.publish(trigger('http_resource_change', true));
    h.pipeline.call(0).result.resolve(pipelineResult());
    await h.pipeline.waitForCalls(2);
    h.pipeline.call(1).result.resolve(pipelineResult());
    await h.waitForCompleted(2);
    await flushMicrotasks();

    expect(h.ofType('reconciliation.started').map((e) => e.trigger)).toEqual(['resource_change', 'drift_prevention']);
    expect(h.pipeline.callCount).toBe(2);
  });

  it('never merges a gate verdict: a verdict between two triggers keeps them separate renders', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);

    const first = trigger('resource_change', true);
    const second = trigger('resource_change', true);
    h.publish(first);
    h.publish(verdict('some-older-render', { newest: false }));
    h.publish(second);
    h.pipeline.call(0).result.resolve(pipelineResult());
    await h.pipeline.waitForCalls(2);
    h.pipeline.call(1).result.resolve(pipelineResult());
    await h.pipeline.waitForCalls(3);
    h.pipeline.call(2).result.resolve(pipelineResult());
    await h.waitForCompleted(3);

    expect(h.ofType('reconciliation.started').slice(1).map((e) => e.correlationId)).toEqual([first.correlationId, second.correlationId]);
    expect(h.coordinator.stats.coalesced).toBe(0);
  });

  it('a mailbox overflowing with verdicts, which never merge, reports critical drops instead of losing them silently', async () => {
    const onDrop = vi.fn<(info: DropInfo) => void>();
    const h = harness({ mailboxSize: 3, onDrop });
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);

    for (let i = 0; i < 5; i++) h.publish(verdict(`old-${i}`, { newest: false }));

    expect(h.bus.droppedCritical).toBe(2);
    expect(onDrop).toHaveBeenCalledWith({ eventType: 'rendergate.completed', subscriberName: 'coordinator', bufferSize: 3 });
  });

  it('mailboxDecision replaces a queued coalescible trigger, discards after a non-coalescible one, and appends around verdicts', () => {
    const v = verdict('r1');
    expect(mailboxDecision(trigger('a', true), trigger('b', false))).toBe('replace');
    expect(mailboxDecision(trigger('a', true), trigger('b', true))).toBe('replace');
    expect(mailboxDecision(trigger('a', false), trigger('b', true))).toBe('discard');
    expect(mailboxDecision(trigger('a', false), trigger('b', false))).toBe('discard');
    expect(mailboxDecision(v, trigger('b', true))).toBe('append');
    expect(mailboxDecision(trigger('a', true), v)).toBe('append');
    expect(mailboxDecision(v, verdict('r2'))).toBe('append');
  });
});

describe('Coordinator auxiliary baseline', () => {
  it('the first render of a term receives an empty baseline', async () => {
    const h = harness();
    await h.startTerm();

    const baseline = await h.nextBaseline();

    expect(baseline).toEqual(EMPTY_BASELINE);
    expect(h.coordinator.baseline.auxiliaryFiles).toBe(EMPTY_AUXILIARY_FILES);
    expect(h.coordinator.confirmedRenderId).toBeUndefined();
  });

  it("a successful render's output is passed as the baseline of the next execute", async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r1.haproxyConfig, auxiliaryFiles: r1.auxiliaryFiles });
  });

  it('a failed render leaves the baseline as it was', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(trigger());
    await h.pipeline.waitForCalls(2);
    h.pipeline.call(1).result.reject(new PipelineError('validation', 'bad'));
    await h.waitForCompleted(2);

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r1.haproxyConfig, auxiliaryFiles: r1.auxiliaryFiles });
  });

  it('an ok verdict on the newest render confirms it', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();

    h.publish(verdict(r1.renderId, { ok: true, refused: false, newest: true }));
    await waitUntil(() => h.coordinator.confirmedRenderId !== undefined, 'the baseline to be confirmed');

    expect(h.coordinator.confirmedRenderId).toBe(r1.renderId);
    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r1.haproxyConfig, auxiliaryFiles: r1.auxiliaryFiles });
  });

  it('a refused verdict rolls back to the last confirmed baseline', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(verdict(r1.renderId));
    const r2 = await h.render();
    expect(h.coordinator.baseline.haproxyConfig).toBe(r2.haproxyConfig);

    h.publish(verdict(r2.renderId, { ok: false, refused: true, newest: true, message: '[ALERT] parsing error' }));

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r1.haproxyConfig, auxiliaryFiles: r1.auxiliaryFiles });
    expect(h.coordinator.confirmedRenderId).toBe(r1.renderId);
  });

  it('a refused verdict with nothing confirmed yet rolls back to the empty baseline', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();

    h.publish(verdict(r1.renderId, { ok: false, refused: true }));

    expect(await h.nextBaseline()).toEqual(EMPTY_BASELINE);
  });

  it.each([
    ['refused', { ok: false, refused: true }],
    ['ok', { ok: true, refused: false }],
  ])('ignores a %s verdict with newest: false', async (_kind, outcome) => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(verdict(r1.renderId));
    const r2 = await h.render();

    h.publish(verdict(r2.renderId, { ...outcome, newest: false }));

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r2.haproxyConfig, auxiliaryFiles: r2.auxiliaryFiles });
    expect(h.coordinator.confirmedRenderId).toBe(r1.renderId);
  });

  it('a verdict that neither passed nor refused (the gate could not run) changes nothing', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(verdict(r1.renderId));
    const r2 = await h.render();

    h.publish(verdict(r2.renderId, { ok: false, refused: false, newest: true, message: 'haproxy not installed' }));

    expect(await h.nextBaseline()).toEqual({ haproxyConfig: r2.haproxyConfig, auxiliaryFiles: r2.auxiliaryFiles });
    expect(h.coordinator.confirmedRenderId).toBe(r1.renderId);
  });

  it('a fresh start() begins a new term with an empty baseline', async () => {
    const h = harness();
    await h.startTerm();
    const r1 = await h.render();
    h.publish(verdict(r1.renderId));
    await waitUntil(() => h.coordinator.confirmedRenderId === r1.renderId, 'confirmation');
    await h.render();
    await h.endTerm();

    await h.startTerm();

    expect(h.coordinator.confirmedRenderId).toBeUndefined();
    expect(await h.nextBaseline()).toEqual(EMPTY_BASELINE);
  });
});

describe('PipelineError', () => {
  it('formats a render failure as "render failed: <cause>"', () => {
    const error = new PipelineError('render', 'missing partial "backends"');
    expect(error.message).toBe('render failed: missing partial "backends"');
    expect(error.phase).toBe('render');
    expect(error.subPhase).toBeUndefined();
  });

  it('formats a validation failure as "validation failed: <cause>"', () => {
    expect(new PipelineError('validation', 'unknown keyword "bogus"').message).toBe('validation failed: unknown keyword "bogus"');
  });

  it('formats a validation failure with a sub-phase as "validation failed in <subPhase> phase: <cause>"', () => {
    const error = new PipelineError('validation', 'server line malformed', 'backend');
    expect(error.message).toBe('validation failed in backend phase: server line malformed');
    expect(error.phase).toBe('validation');
    expect(error.subPhase).toBe('backend');
  });

  it('formats an auxiliary failure as a validation failure in the auxiliary phase', () => {
    expect(new PipelineError('auxiliary', 'map hosts.map is missing').message).toBe('validation failed in auxiliary phase: map hosts.map is missing');
  });

  it('keeps an Error cause as the cause and uses its message', () => {
    const cause = new SyntaxError('Parse error on line 3');
    const error = new PipelineError('render', cause);
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('render failed: Parse error on line 3');
  });

  it('keeps a string cause as the cause', () => {
    expect(new PipelineError('validation', 'bad').cause).toBe('bad');
  });

  it('is an Error named PipelineError, recognisable with instanceof', () => {
    const error: unknown = new PipelineError('render', 'x');
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(PipelineError);
    expect((error as Error).name).toBe('PipelineError');
  });

  it('is rebuilt from the plain failure data that crosses the thread boundary', () => {
    const error = PipelineError.fromFailure({ phase: 'validation', subPhase: 'frontend', message: 'bind missing' });
    expect(error).toBeInstanceOf(PipelineError);
    expect(error.message).toBe('validation failed in frontend phase: bind missing');
    expect(error.subPhase).toBe('frontend');
  });
});

describe('Coordinator retry after a worker fault', () => {
  const workerFault = (): PipelineError => new PipelineError('render', 'the worker thread exited', undefined, 'WORKER_FAILED');

  it('renders again after the backoff when a render failed through a worker fault and nothing else changed', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);
    h.pipeline.call(0).result.reject(workerFault());
    await h.waitForCompleted(1);

    await h.clock.advance(999);
    expect(h.pipeline.callCount).toBe(1);
    await h.clock.advance(1);
    await h.pipeline.waitForCalls(2);
    const retry = h.ofType('reconciliation.triggered').at(-1);
    expect(retry).toMatchObject({ reason: 'render_retry', coalescible: true });
    h.pipeline.call(1).result.resolve(pipelineResult());
    await h.waitForCompleted(2);
    expect(h.ofType('template.rendered')).toHaveLength(1);
  });

  it('doubles the delay after each failed retry up to the cap, and starts again from the base after a success', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    const delays: number[] = [];
    for (let i = 0; i < 7; i++) {
      await h.pipeline.waitForCalls(i + 1);
      h.pipeline.call(i).result.reject(workerFault());
      await h.waitForCompleted(i + 1);
      let waited = 0;
      while (h.pipeline.callCount === i + 1) {
        await h.clock.advance(250);
        waited += 250;
      }
      delays.push(waited);
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);

    await h.pipeline.waitForCalls(8);
    h.pipeline.call(7).result.resolve(pipelineResult());
    await h.waitForCompleted(8);
    h.publish(trigger());
    await h.pipeline.waitForCalls(9);
    h.pipeline.call(8).result.reject(workerFault());
    await h.waitForCompleted(9);
    await h.clock.advance(1000);
    await h.pipeline.waitForCalls(10);
  });

  it('does not retry a render that failed on its inputs (a template or validation error)', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);
    h.pipeline.call(0).result.reject(new PipelineError('validation', 'backend be_x has no servers', 'backend'));
    await h.waitForCompleted(1);
    await h.clock.advance(120_000);
    await flushMicrotasks();
    expect(h.pipeline.callCount).toBe(1);
  });

  it('drops a scheduled retry when a newer trigger renders first, and when the term ends', async () => {
    const h = harness();
    await h.startTerm();
    h.publish(trigger());
    await h.pipeline.waitForCalls(1);
    h.pipeline.call(0).result.reject(workerFault());
    await h.waitForCompleted(1);
    h.publish(trigger());
    await h.pipeline.waitForCalls(2);
    h.pipeline.call(1).result.resolve(pipelineResult());
    await h.waitForCompleted(2);
    await h.clock.advance(60_000);
    await flushMicrotasks();
    expect(h.pipeline.callCount).toBe(2);

    h.publish(trigger());
    await h.pipeline.waitForCalls(3);
    h.pipeline.call(2).result.reject(workerFault());
    await h.waitForCompleted(3);
    await h.endTerm();
    await h.clock.advance(60_000);
    expect(h.ofType('reconciliation.triggered').filter((t) => t.reason === 'render_retry')).toHaveLength(0);
  });
});

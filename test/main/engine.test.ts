// Engine with the inline pipeline and the default template set: `start` publishes
// index.synchronized with the store counts, which makes the first reconciliation render the
// stores; store changes published as resource.index.updated lead to new renders; aborting the
// signal stops everything.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Engine, type EngineOptions } from '../../src/main/engine.js';
import type { ControllerEvent, EventOf, EventType } from '../../src/main/events/events.js';
import { ChangeBatcher } from '../../src/main/sources/change-batcher.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { deferred, flushMicrotasks, track, waitUntil } from '../helpers/async.js';
import { defaultTemplateSet, endpointSlice, ingress, rule, service, storeNameFor } from '../helpers/cluster.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { FakePipeline, pipelineResult } from '../helpers/fake-pipeline.js';
import { silentLogger } from '../helpers/loggers.js';

/** An Ingress routing shop.example.com/<name> to a Service with one endpoint: 3 objects. */
function app(name: string): KubeObject[] {
  return [
    ingress('shop', name, { ingressClassName: 'haproxy', rules: [rule('shop.example.com', { path: `/${name}`, service: name })] }),
    service('shop', name),
    endpointSlice('shop', name, ['10.0.0.1']),
  ];
}

/** The backend the default template set renders for app(name). */
const backend = (name: string): string => `backend ing_shop_${name}_${name}_80`;

interface Harness {
  readonly engine: Engine;
  readonly clock: FakeClock;
  /** Everything published on the engine's bus, by anyone, in order. */
  published(): ControllerEvent[];
  ofType<T extends EventType>(type: T): EventOf<T>[];
  /** Upserts objects into the engine's stores and reports them through a ChangeBatcher. */
  change(objects: readonly KubeObject[]): void;
  /** Starts the engine under a new signal, aborted after the test. */
  start(): { readonly controller: AbortController; readonly running: Promise<void> };
}

const aborts: AbortController[] = [];
const runs: Promise<unknown>[] = [];

afterEach(async () => {
  for (const controller of aborts.splice(0)) controller.abort();
  await Promise.allSettled(runs.splice(0));
});

async function harness(options: Partial<EngineOptions> = {}, objects: readonly KubeObject[] = app('web')): Promise<Harness> {
  const set = await defaultTemplateSet();
  const clock = new FakeClock();
  const engine = await Engine.create({ templateSet: set, pipeline: 'inline', logger: silentLogger(), clock, ...options });
  for (const object of objects) engine.stores.store(storeNameFor(object, set.stores)).upsert(object);
  const publish = vi.spyOn(engine.bus, 'publish');
  const published = (): ControllerEvent[] => publish.mock.calls.map(([event]) => event);
  const batcher = new ChangeBatcher(engine.bus, clock);
  return {
    engine,
    clock,
    published,
    ofType: <T extends EventType>(type: T) => published().filter((e): e is EventOf<T> => e.type === type),
    change(changed) {
      for (const object of changed) {
        const store = storeNameFor(object, set.stores);
        const created = engine.stores.store(store).upsert(object);
        batcher.record(store, created ? 'created' : 'modified');
      }
      batcher.flush();
    },
    start() {
      const controller = new AbortController();
      const running = engine.start(controller.signal);
      aborts.push(controller);
      runs.push(running);
      return { controller, running };
    },
  };
}

/** Waits until `count` reconciliations have completed. */
function completions(h: Harness, count: number): Promise<void> {
  return waitUntil(() => h.ofType('reconciliation.completed').length >= count, `${count} reconciliation.completed`);
}

/**
 * Waits until the engine has nothing left to do: every reconciliation started has completed and
 * nothing more is published. The inline pipeline renders within microtasks, so no time passes.
 */
async function idle(h: Harness): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const seen = h.published().length;
    await flushMicrotasks(200);
    const inFlight = h.ofType('reconciliation.started').length - h.ofType('reconciliation.completed').length;
    if (h.published().length === seen && inFlight === 0) return;
  }
  throw new Error('the engine kept publishing');
}

const types = (events: readonly ControllerEvent[]): EventType[] => events.map((e) => e.type);

describe('Engine', () => {
  it('publishes index.synchronized with the store counts first, and its reconciliation renders the stores', async () => {
    const h = await harness();
    h.start();
    await h.engine.whenStarted();
    await idle(h);

    const synchronized = h.ofType('index.synchronized');
    expect(synchronized).toHaveLength(1);
    expect(synchronized[0]?.resourceCounts).toEqual({ ingresses: 1, services: 1, endpointslices: 1, secrets: 0, ingressclasses: 0, gatewayclasses: 0, gateways: 0, httproutes: 0, referencegrants: 0, namespaces: 0 });
    expect(synchronized[0]?.timestamp).toBe(h.clock.now());
    // It comes first: no reconciliation before the stores are announced.
    expect(types(h.published())[0]).toBe('index.synchronized');
    const rendered = h.ofType('template.rendered').filter((e) => e.triggerReason === 'index_synchronized');
    expect(rendered).toHaveLength(1);
    expect(rendered[0]?.storeVersion).toBe(3);
    expect(rendered[0]?.haproxyConfig).toContain(backend('web'));
    expect(h.ofType('reconciliation.failed')).toEqual([]);
  });

  it('renders the new store version after a store change is published as resource.index.updated', async () => {
    const h = await harness();
    h.start();
    await idle(h);
    const before = h.ofType('template.rendered').length;

    h.change(app('api'));
    await idle(h);

    // One event per changed store: the first starts a render, the Coordinator's mailbox
    // coalesces the others into one more at most.
    const rendered = h.ofType('template.rendered').slice(before);
    expect(rendered.length).toBeGreaterThanOrEqual(1);
    expect(rendered.length).toBeLessThanOrEqual(2);
    expect(h.engine.stores.version).toBe(6);
    for (const event of rendered) {
      expect(event.triggerReason).toBe('resource_change');
      expect(event.storeVersion).toBe(6);
      expect(event.haproxyConfig).toContain(backend('api'));
    }
    expect(h.ofType('template.rendered')[0]?.haproxyConfig).not.toContain(backend('api'));
  });

  it('resolves start() when the signal aborts, and then reacts to nothing', async () => {
    const h = await harness();
    const { controller, running } = h.start();
    await idle(h);

    controller.abort();
    await running;
    const before = h.published().length;
    h.change(app('api'));
    await flushMicrotasks(500);

    // Only the batcher's own events, one per changed store: no trigger, no render.
    expect(types(h.published().slice(before))).toEqual(['resource.index.updated', 'resource.index.updated', 'resource.index.updated']);
  });

  it('resolves start() only once its leader components have stopped, so nothing (a write in progress) outlives it', async () => {
    const h = await harness();
    const finishing = deferred<void>();
    let stopping = false;
    h.engine.addLeaderComponent({
      whenReady: () => Promise.resolve(),
      async start(term: AbortSignal) {
        await new Promise<void>((resolve) => term.addEventListener('abort', () => resolve(), { once: true }));
        stopping = true;
        await finishing.promise;
      },
    });
    const { controller, running } = h.start();
    await idle(h);
    controller.abort();
    const run = track(running);
    await waitUntil(() => stopping, 'the component told to stop');
    await flushMicrotasks(200);
    expect(run.done).toBe(false);
    finishing.resolve();
    await running;
  });

  it('resolves, without reconciling or resolving whenStarted, when the signal aborted before start', async () => {
    const h = await harness();
    const started = track(h.engine.whenStarted());
    const controller = new AbortController();
    controller.abort();
    await h.engine.start(controller.signal);
    await flushMicrotasks();

    const published = types(h.published());
    expect(published).not.toContain('reconciliation.triggered');
    expect(published).not.toContain('template.rendered');
    expect(started.done).toBe(false);
  });

  it('refuses a second start while one is running, leaving the first run alone', async () => {
    const h = await harness();
    h.start();

    await expect(h.engine.start(new AbortController().signal)).rejects.toThrow('the engine is already running');
    await idle(h);
    expect(h.ofType('index.synchronized')).toHaveLength(1);
    expect(h.ofType('template.rendered').length).toBeGreaterThan(0);
  });

  it('resolves whenStarted only once index.synchronized has been published', async () => {
    const h = await harness();
    const started = track(h.engine.whenStarted().then(() => types(h.published())));
    await flushMicrotasks();
    expect(started.done).toBe(false);

    h.start();
    await expect(started.promise).resolves.toContain('index.synchronized');
  });

  it('has nothing to close with an inline pipeline, before or after a run', async () => {
    const h = await harness();
    expect(h.engine.pool).toBeUndefined();
    await expect(h.engine.close()).resolves.toBeUndefined();

    const { controller, running } = h.start();
    await completions(h, 1);
    controller.abort();
    await running;
    await expect(h.engine.close()).resolves.toBeUndefined();
    expect(h.ofType('template.rendered').length).toBeGreaterThan(0);
  });

  it('creates empty stores for the template set’s watched resources by default', async () => {
    const h = await harness({}, []);
    const set = await defaultTemplateSet();
    expect(h.engine.stores.names()).toEqual(set.stores.map((s) => s.name));
    expect(Object.values(h.engine.stores.counts()).every((n) => n === 0)).toBe(true);
  });

  it('reconciles the StoreProvider the caller supplies', async () => {
    const set = await defaultTemplateSet();
    const stores = new StoreProvider(set.stores);
    const h = await harness({ stores }, [...app('web'), ...app('api')]);
    expect(h.engine.stores).toBe(stores);

    h.start();
    await idle(h);
    expect(h.ofType('index.synchronized')[0]?.resourceCounts).toEqual({ ingresses: 2, services: 2, endpointslices: 2, secrets: 0, ingressclasses: 0, gatewayclasses: 0, gateways: 0, httproutes: 0, referencegrants: 0, namespaces: 0 });
    expect(h.ofType('template.rendered')[0]?.haproxyConfig).toContain(backend('api'));
  });

  it('renders through the PipelineExecutor the caller supplies', async () => {
    const pipeline = new FakePipeline();
    const h = await harness({ pipeline });
    expect(h.engine.pipeline).toBe(pipeline);
    expect(h.engine.pool).toBeUndefined();

    h.start();
    await pipeline.waitForCalls(1);
    const call = pipeline.call(0);
    expect(call.stores).toBe(h.engine.stores);
    expect(call.mode).toBe('reconcile');
    const result = pipelineResult({ storeVersion: h.engine.stores.version });
    call.result.resolve(result);
    await completions(h, 1);

    const [rendered] = h.ofType('template.rendered');
    expect(rendered?.renderId).toBe(result.renderId);
    expect(rendered?.haproxyConfig).toBe(result.haproxyConfig);
  });

  it('runs once: a second start after the first ended is refused with a clear error', async () => {
    const engine = await Engine.create({ templateSet: await defaultTemplateSet(), pipeline: 'inline', logger: silentLogger() });
    const controller = new AbortController();
    controller.abort();
    await engine.start(controller.signal);
    await expect(engine.start(new AbortController().signal)).rejects.toThrow(/runs once/);
  });
});

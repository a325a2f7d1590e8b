// ControllerMetrics and its bus adapter: every metric is exposed, counters move on the events that
// feed them, queue times run from a trigger to its start (on event timestamps, no sleeping), the
// pending-trigger map stays bounded, and no label ever carries a value from cluster data.
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventFields } from '../../../src/main/events/events.js';
import { MetricsAdapter } from '../../../src/main/metrics/metrics-adapter.js';
import { ControllerMetrics, type ControllerMetricsOptions } from '../../../src/main/metrics/metrics.js';
import { Coordinator } from '../../../src/main/reconcile/coordinator.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { flushMicrotasks, waitUntil } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakePipeline, pipelineResult } from '../../helpers/fake-pipeline.js';
import { silentLogger } from '../../helpers/loggers.js';

const METRIC_NAMES = [
  'haptic_reconciliations_total',
  'haptic_reconciliation_duration_seconds',
  'haptic_reconciliation_queue_seconds',
  'haptic_triggers_total',
  'haptic_triggers_coalesced_total',
  'haptic_bus_dropped_events_total',
  'haptic_leader',
  'haptic_resource_objects',
  'haptic_pool_queue_size',
  'haptic_pool_utilization',
  'haptic_deployments_total',
  'haptic_deployment_duration_seconds',
  'haptic_rendergate_verdicts_total',
  'haptic_haproxy_restarts_total',
  'haptic_haproxy_old_workers_stopped_total',
  'haptic_endpoint_change_to_applied_seconds',
  'haptic_http_resource_rejections_total',
  'haptic_source_problems_total',
  'haptic_rejections',
];

/** The value of one series in exposition text, e.g. `haptic_leader` or `x_total{kind="lossy"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

class Harness {
  readonly bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  readonly clock = new FakeClock();
  readonly metrics: ControllerMetrics;
  readonly adapter: MetricsAdapter;
  readonly controller = new AbortController();
  readonly running: Promise<void>;

  constructor(options: ControllerMetricsOptions = {}, maxPendingTriggers?: number) {
    this.metrics = new ControllerMetrics({ defaultMetrics: false, ...options });
    this.adapter = new MetricsAdapter(this.bus, this.metrics, maxPendingTriggers === undefined ? {} : { maxPendingTriggers });
    this.running = this.adapter.start(this.controller.signal);
    this.bus.start();
  }

  /** Publishes an event stamped with the fake clock's time. */
  publish<T extends keyof EventFields>(type: T, fields: EventFields[T], cause?: ControllerEvent): ControllerEvent {
    const event = newEvent(type, fields, cause, this.clock);
    this.bus.publish(event);
    return event;
  }

  /** Waits until the adapter has recorded everything published so far. */
  async settled(): Promise<void> {
    await waitUntil(() => this.adapter.depth === 0, 'the metrics adapter to drain');
    await flushMicrotasks();
  }

  async text(): Promise<string> {
    await this.settled();
    return this.metrics.metrics();
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
  }
}

let current: Harness | undefined;

function harness(options?: ControllerMetricsOptions, maxPendingTriggers?: number): Harness {
  current = new Harness(options, maxPendingTriggers);
  return current;
}

afterEach(async () => {
  await current?.stop();
  current = undefined;
});

describe('ControllerMetrics exposition', () => {
  it('exposes every controller metric and the default Node metrics, event-loop lag included', async () => {
    const metrics = new ControllerMetrics();
    const text = await metrics.metrics();

    for (const name of METRIC_NAMES) expect(text, name).toContain(`# TYPE ${name} `);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(metrics.contentType).toMatch(/^text\/plain/);
  });

  it('keeps each instance in its own registry, so two controllers in one process never clash', async () => {
    const first = new ControllerMetrics();
    const second = new ControllerMetrics();
    first.countHaproxyRestart();

    expect(sample(await first.metrics(), 'haptic_haproxy_restarts_total')).toBe(1);
    expect(sample(await second.metrics(), 'haptic_haproxy_restarts_total')).toBe(0);
  });

  it('starts every series of a fixed label set at zero', async () => {
    const text = await new ControllerMetrics({ defaultMetrics: false }).metrics();

    expect(sample(text, 'haptic_reconciliations_total{outcome="failure"}')).toBe(0);
    expect(sample(text, 'haptic_triggers_total{reason="drift_prevention"}')).toBe(0);
    expect(sample(text, 'haptic_deployments_total{kind="skipped",outcome="success"}')).toBe(0);
    expect(sample(text, 'haptic_rendergate_verdicts_total{verdict="unknown"}')).toBe(0);
    expect(sample(text, 'haptic_leader')).toBe(0);
  });

  it('reads bus drops, coalesced triggers, object counts, pool load, leadership and source problems at scrape time', async () => {
    const bus = { droppedCritical: 2, droppedLossy: 7 };
    const coordinator = { stats: { coalesced: 41 } };
    const stores = { counts: () => ({ ingresses: 3, services: 5 }) };
    const pool = { queueSize: 4, utilization: 0.75 };
    const watchers = { problems: 6 };
    let leader = true;
    const metrics = new ControllerMetrics({ defaultMetrics: false, bus, coordinator, stores, pool, isLeader: () => leader, sourceProblems: watchers });

    let text = await metrics.metrics();
    expect(sample(text, 'haptic_bus_dropped_events_total{kind="critical"}')).toBe(2);
    expect(sample(text, 'haptic_bus_dropped_events_total{kind="lossy"}')).toBe(7);
    expect(sample(text, 'haptic_triggers_coalesced_total')).toBe(41);
    expect(sample(text, 'haptic_resource_objects{resource="ingresses"}')).toBe(3);
    expect(sample(text, 'haptic_resource_objects{resource="services"}')).toBe(5);
    expect(sample(text, 'haptic_pool_queue_size')).toBe(4);
    expect(sample(text, 'haptic_pool_utilization')).toBe(0.75);
    expect(sample(text, 'haptic_source_problems_total')).toBe(6);
    expect(sample(text, 'haptic_leader')).toBe(1);

    bus.droppedLossy = 9;
    coordinator.stats.coalesced = 50;
    leader = false;
    text = await metrics.metrics();
    expect(sample(text, 'haptic_bus_dropped_events_total{kind="lossy"}')).toBe(9);
    expect(sample(text, 'haptic_triggers_coalesced_total')).toBe(50);
    expect(sample(text, 'haptic_leader')).toBe(0);
  });

  it('reports an absent pool as an empty queue and zero utilization', async () => {
    const text = await new ControllerMetrics({ defaultMetrics: false }).metrics();

    expect(sample(text, 'haptic_pool_queue_size')).toBe(0);
    expect(sample(text, 'haptic_pool_utilization')).toBe(0);
  });

  it('counts HAProxy restarts, HTTP resource rejections and endpoint-change latencies through its methods', async () => {
    const metrics = new ControllerMetrics({ defaultMetrics: false });
    metrics.countHaproxyRestart();
    metrics.countHaproxyRestart();
    metrics.countHttpResourceRejection();
    metrics.observeEndpointChangeToApplied(0.003);

    const text = await metrics.metrics();
    expect(sample(text, 'haptic_haproxy_restarts_total')).toBe(2);
    expect(sample(text, 'haptic_http_resource_rejections_total')).toBe(1);
    expect(sample(text, 'haptic_endpoint_change_to_applied_seconds_count')).toBe(1);
    expect(sample(text, 'haptic_endpoint_change_to_applied_seconds_bucket{le="0.001"}')).toBe(0);
    expect(sample(text, 'haptic_endpoint_change_to_applied_seconds_bucket{le="0.005"}')).toBe(1);
    expect(text).toContain('haptic_endpoint_change_to_applied_seconds_bucket{le="10"}');
  });

  it('counts the draining HAProxy workers the supervisor stopped, without labels', async () => {
    const metrics = new ControllerMetrics({ defaultMetrics: false });
    expect(sample(await metrics.metrics(), 'haptic_haproxy_old_workers_stopped_total')).toBe(0);
    metrics.countOldWorkersStopped(2);
    metrics.countOldWorkersStopped(0);
    metrics.countOldWorkersStopped(1);
    expect(sample(await metrics.metrics(), 'haptic_haproxy_old_workers_stopped_total')).toBe(3);
  });
});

describe('MetricsAdapter', () => {
  it('counts reconciliations by outcome and observes their duration from reconciliation.completed', async () => {
    const h = harness();
    h.publish('reconciliation.completed', { outcome: 'success', durationMs: 20, triggerReason: 'resource_change' });
    h.publish('reconciliation.completed', { outcome: 'failure', durationMs: 300, triggerReason: 'resource_change' });

    const text = await h.text();
    expect(sample(text, 'haptic_reconciliations_total{outcome="success"}')).toBe(1);
    expect(sample(text, 'haptic_reconciliations_total{outcome="failure"}')).toBe(1);
    expect(sample(text, 'haptic_reconciliation_duration_seconds_count')).toBe(2);
    expect(sample(text, 'haptic_reconciliation_duration_seconds_sum')).toBeCloseTo(0.32);
  });

  it('counts triggers by reason and an unknown reason as other', async () => {
    const h = harness();
    h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    h.publish('reconciliation.triggered', { reason: 'became_leader', coalescible: false });
    h.publish('reconciliation.triggered', { reason: 'something_new', coalescible: false });

    const text = await h.text();
    expect(sample(text, 'haptic_triggers_total{reason="resource_change"}')).toBe(2);
    expect(sample(text, 'haptic_triggers_total{reason="became_leader"}')).toBe(1);
    expect(sample(text, 'haptic_triggers_total{reason="other"}')).toBe(1);
    expect(text).not.toContain('something_new');
  });

  it('counts deployments by kind and outcome and observes their duration by kind', async () => {
    const h = harness();
    const deployed = { reason: 'resource_change', runtimeOps: 0, checksum: 'abc' };
    h.publish('deployment.completed', { ...deployed, kind: 'runtime', outcome: 'success', durationMs: 4, runtimeOps: 3 });
    h.publish('deployment.completed', { ...deployed, kind: 'reload', outcome: 'failure', durationMs: 1500, error: 'reload failed' });
    h.publish('deployment.completed', { ...deployed, kind: 'skipped', outcome: 'success', durationMs: 0 });

    const text = await h.text();
    expect(sample(text, 'haptic_deployments_total{kind="runtime",outcome="success"}')).toBe(1);
    expect(sample(text, 'haptic_deployments_total{kind="reload",outcome="failure"}')).toBe(1);
    expect(sample(text, 'haptic_deployments_total{kind="skipped",outcome="success"}')).toBe(1);
    expect(sample(text, 'haptic_deployment_duration_seconds_count{kind="reload"}')).toBe(1);
    expect(sample(text, 'haptic_deployment_duration_seconds_sum{kind="reload"}')).toBe(1.5);
  });

  it('counts render gate verdicts as ok, refused, or unknown when the check could not run', async () => {
    const h = harness();
    const gate = { renderId: 'r1', newest: true, message: '', durationMs: 5 };
    h.publish('rendergate.completed', { ...gate, ok: true, refused: false });
    h.publish('rendergate.completed', { ...gate, ok: false, refused: true });
    h.publish('rendergate.completed', { ...gate, ok: false, refused: false });
    h.publish('rendergate.completed', { ...gate, ok: false, refused: false });

    const text = await h.text();
    expect(sample(text, 'haptic_rendergate_verdicts_total{verdict="ok"}')).toBe(1);
    expect(sample(text, 'haptic_rendergate_verdicts_total{verdict="refused"}')).toBe(1);
    expect(sample(text, 'haptic_rendergate_verdicts_total{verdict="unknown"}')).toBe(2);
  });

  it('sets the leader gauge on leader.became and clears it on leader.lost', async () => {
    const h = harness();
    h.publish('leader.became', { identity: 'pod-a' });
    expect(sample(await h.text(), 'haptic_leader')).toBe(1);

    h.publish('leader.lost', { identity: 'pod-a', reason: 'lease expired' });
    expect(sample(await h.text(), 'haptic_leader')).toBe(0);
  });

  it('measures queue seconds from a trigger to its reconciliation.started, on the events’ timestamps', async () => {
    const h = harness();
    const trigger = h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    await h.clock.advance(250);
    h.publish('reconciliation.started', { trigger: 'resource_change' }, trigger);

    const text = await h.text();
    expect(sample(text, 'haptic_reconciliation_queue_seconds_count')).toBe(1);
    expect(sample(text, 'haptic_reconciliation_queue_seconds_sum')).toBe(0.25);
    expect(sample(text, 'haptic_reconciliation_queue_seconds_bucket{le="0.1"}')).toBe(0);
    expect(sample(text, 'haptic_reconciliation_queue_seconds_bucket{le="0.25"}')).toBe(1);
    expect(h.adapter.pendingTriggers).toBe(0);
  });

  it('forgets every earlier trigger when a later one starts, since coalesced triggers never start', async () => {
    const h = harness();
    for (let i = 0; i < 10; i++) h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    const newest = h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    await h.settled();
    expect(h.adapter.pendingTriggers).toBe(11);

    await h.clock.advance(1);
    h.publish('reconciliation.started', { trigger: 'resource_change' }, newest);
    await h.settled();

    expect(h.adapter.pendingTriggers).toBe(0);
  });

  it('keeps the pending-trigger map bounded under a flood of coalesced triggers that never start', async () => {
    const h = harness({}, 64);
    for (let chunk = 0; chunk < 20; chunk++) {
      for (let i = 0; i < 500; i++) h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
      await h.settled();
      expect(h.adapter.pendingTriggers).toBeLessThanOrEqual(64);
    }
    for (let i = 0; i < 500; i++) h.publish('reconciliation.triggered', { reason: 'drift_prevention', coalescible: false });
    await h.settled();

    expect(h.adapter.pendingTriggers).toBeLessThanOrEqual(128);
    expect(h.bus.droppedLossy).toBe(0);
    expect(sample(await h.text(), 'haptic_triggers_total{reason="resource_change"}')).toBe(10_000);
  });

  it('still times the trigger an idle Coordinator took first when a flood overflows the map', async () => {
    const h = harness({}, 16);
    const first = h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    for (let i = 0; i < 1000; i++) h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    await h.clock.advance(5);
    h.publish('reconciliation.started', { trigger: 'resource_change' }, first);

    const text = await h.text();
    expect(sample(text, 'haptic_reconciliation_queue_seconds_sum')).toBe(0.005);
  });

  it('times queueing through a real Coordinator, and holds no trigger once the flood has been reconciled', async () => {
    const h = harness();
    const pipeline = new FakePipeline();
    const coordinator = new Coordinator({ eventBus: h.bus, pipeline, storeProvider: new StoreProvider(), logger: silentLogger(), clock: h.clock });
    const term = new AbortController();
    const running = coordinator.start(term.signal);
    await coordinator.whenReady();

    h.publish('reconciliation.triggered', { reason: 'index_synchronized', coalescible: false });
    await pipeline.waitForCalls(1);
    for (let i = 0; i < 1000; i++) h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    await h.clock.advance(400);
    pipeline.call(0).result.resolve(pipelineResult());
    await pipeline.waitForCalls(2);
    pipeline.call(1).result.resolve(pipelineResult());
    await waitUntil(() => coordinator.stats.renders === 2, 'two renders');

    const text = await h.text();
    expect(sample(text, 'haptic_reconciliation_queue_seconds_count')).toBe(2);
    expect(sample(text, 'haptic_reconciliation_queue_seconds_sum')).toBe(0.4);
    expect(sample(text, 'haptic_reconciliations_total{outcome="success"}')).toBe(2);
    expect(h.adapter.pendingTriggers).toBe(0);
    term.abort();
    await running;
  });

  it('shows what the object checks left out of the latest render, by store kind and scope, through a real Coordinator', async () => {
    const h = harness();
    const pipeline = new FakePipeline();
    const coordinator = new Coordinator({ eventBus: h.bus, pipeline, storeProvider: new StoreProvider(), logger: silentLogger(), clock: h.clock });
    const term = new AbortController();
    const running = coordinator.start(term.signal);
    await coordinator.whenReady();
    const rejection = (kind: string, scope: 'object' | 'path' | 'tls', name: string) => ({ kind, scope, namespace: 'tenant-a', name, reason: `bad ${name}` });

    h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    await pipeline.waitForCalls(1);
    pipeline.call(0).result.resolve(pipelineResult({ rejections: [rejection('Ingress', 'path', 'a'), rejection('Ingress', 'path', 'b'), rejection('Secret', 'object', 'evil-tls')] }));
    await waitUntil(() => coordinator.stats.renders === 1, 'one render');
    let text = await h.text();
    expect(sample(text, 'haptic_rejections{kind="Ingress",scope="path"}')).toBe(2);
    expect(sample(text, 'haptic_rejections{kind="Secret",scope="object"}')).toBe(1);
    expect(text).not.toContain('tenant-a');
    expect(text).not.toContain('evil-tls');

    h.publish('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    await pipeline.waitForCalls(2);
    pipeline.call(1).result.resolve(pipelineResult({ rejections: [rejection('Ingress', 'tls', 'a')] }));
    await waitUntil(() => coordinator.stats.renders === 2, 'two renders');
    text = await h.text();
    expect(sample(text, 'haptic_rejections{kind="Ingress",scope="tls"}')).toBe(1);
    expect(sample(text, 'haptic_rejections{kind="Ingress",scope="path"}')).toBeUndefined();
    expect(sample(text, 'haptic_rejections{kind="Secret",scope="object"}')).toBeUndefined();
    term.abort();
    await running;
  });

  it('never puts a value from cluster data or messages into a label', async () => {
    const host = 'tenant-a.evil.example.com';
    const h = harness({ stores: { counts: () => ({ ingresses: 1 }) } });
    h.publish('reconciliation.triggered', { reason: host, coalescible: true });
    h.publish('reconciliation.completed', { outcome: 'success', durationMs: 1, triggerReason: host });
    h.publish('rendergate.completed', { renderId: host, ok: false, refused: true, newest: true, message: `backend ${host} refused`, durationMs: 1 });
    h.publish('deployment.completed', { reason: host, kind: 'reload', outcome: 'failure', durationMs: 1, runtimeOps: 0, checksum: host, error: host });
    h.publish('leader.became', { identity: host });
    h.publish('leader.lost', { identity: host, reason: host });
    h.publish('resource.index.updated', { resourceTypeName: host, changeStats: { created: 1, modified: 0, deleted: 0, isInitialSync: false } });

    const text = await h.text();
    expect(sample(text, 'haptic_triggers_total{reason="other"}')).toBe(1);
    expect(text).not.toContain('evil');
    expect(text).not.toContain('example.com');
  });

  it('unsubscribes from the bus when its signal aborts', async () => {
    const h = harness();
    expect(h.bus.subscriberCount).toBe(1);

    await h.stop();

    expect(h.bus.subscriberCount).toBe(0);
  });
});

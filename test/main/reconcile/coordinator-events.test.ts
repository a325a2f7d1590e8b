// What the Coordinator publishes for a render: started, template.rendered or reconciliation.failed,
// and completed, in the trigger's correlation.
import { afterEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../src/main/events/events.js';
import { PipelineError, type PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { endHarness, harness } from '../../helpers/coordinator-harness.js';
import { trigger } from '../../helpers/events.js';
import { FakePipeline, pipelineResult } from '../../helpers/fake-pipeline.js';
import { spyLogger } from '../../helpers/loggers.js';

afterEach(endHarness);

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

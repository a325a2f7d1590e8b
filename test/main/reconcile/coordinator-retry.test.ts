// The Coordinator renders again, with a capped exponential backoff, after a worker fault.
import { afterEach, describe, expect, it } from 'vitest';
import { PipelineError } from '../../../src/main/pipeline/pipeline.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { endHarness, harness } from '../../helpers/coordinator-harness.js';
import { trigger } from '../../helpers/events.js';
import { pipelineResult } from '../../helpers/fake-pipeline.js';

afterEach(endHarness);

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

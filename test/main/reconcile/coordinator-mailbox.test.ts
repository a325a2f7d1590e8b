// The Coordinator's mailbox: coalescible triggers merge while a render runs, gate verdicts never do.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DropInfo } from '../../../src/main/bus/event-bus.js';
import { mailboxDecision } from '../../../src/main/reconcile/mailbox.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { endHarness, harness } from '../../helpers/coordinator-harness.js';
import { trigger, verdict } from '../../helpers/events.js';
import { pipelineResult } from '../../helpers/fake-pipeline.js';

afterEach(endHarness);

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

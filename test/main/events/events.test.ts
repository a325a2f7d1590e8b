import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, isEvent, newEvent, type ControllerEvent } from '../../../src/main/events/events.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { resourceUpdated } from '../../helpers/events.js';

describe('newEvent', () => {
  it('without a cause starts a new correlation whose ID is the event ID and has no causation', () => {
    const event = newEvent('index.synchronized', { resourceCounts: { ingresses: 3 } });

    expect(event.type).toBe('index.synchronized');
    expect(event.resourceCounts).toEqual({ ingresses: 3 });
    expect(event.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(event.correlationId).toBe(event.eventId);
    expect(event.causationId).toBeUndefined();
    expect('causationId' in event).toBe(false);
  });

  it('gives every event a unique ID, so two uncaused events are in different correlations', () => {
    const ids = new Set<string>();
    const correlations = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const event = newEvent('leader.became', { identity: 'pod-a' });
      ids.add(event.eventId);
      correlations.add(event.correlationId);
    }
    expect(ids.size).toBe(1000);
    expect(correlations.size).toBe(1000);
  });

  it('with a cause joins the cause correlation and records the cause event as causation', () => {
    const root = newEvent('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    const child = newEvent('reconciliation.started', { trigger: root.reason }, root);
    const grandchild = newEvent('reconciliation.completed', { outcome: 'success', durationMs: 3, triggerReason: root.reason }, child);

    expect(child.eventId).not.toBe(root.eventId);
    expect(child.correlationId).toBe(root.correlationId);
    expect(child.causationId).toBe(root.eventId);
    expect(grandchild.correlationId).toBe(root.correlationId);
    expect(grandchild.causationId).toBe(child.eventId);
  });

  it('takes the correlation from the cause even when the cause is itself part of another correlation', () => {
    const cause = { eventId: 'evt-2', correlationId: 'corr-1' };
    const event = newEvent('leader.lost', { identity: 'pod-a', reason: 'lease expired' }, cause);

    expect(event.correlationId).toBe('corr-1');
    expect(event.causationId).toBe('evt-2');
  });

  it('stamps the timestamp from the clock it is given', async () => {
    const clock = new FakeClock(1_700_000_000_000);

    const first = newEvent('drift.prevention.triggered', { timeSinceLastDeploymentMs: 10 }, undefined, clock);
    await clock.advance(1);
    const second = newEvent('drift.prevention.triggered', { timeSinceLastDeploymentMs: 20 }, undefined, clock);

    expect(first.timestamp).toBe(1_700_000_000_000);
    expect(second.timestamp).toBe(1_700_000_000_001);
  });

  it('a given clock affects only that call: the next event without one uses wall time', () => {
    newEvent('leader.became', { identity: 'x' }, undefined, { now: () => 42 });
    const restored = newEvent('leader.became', { identity: 'x' });
    expect(restored.timestamp).toBeGreaterThan(1_600_000_000_000);
  });

  it('uses wall-clock milliseconds since the epoch by default', () => {
    const before = Date.now();
    const event = newEvent('leader.became', { identity: 'x' });
    const after = Date.now();

    expect(event.timestamp).toBeGreaterThanOrEqual(before);
    expect(event.timestamp).toBeLessThanOrEqual(after);
  });

  it('returns a frozen event whose fields cannot be reassigned', () => {
    const event = resourceUpdated('services');

    expect(Object.isFrozen(event)).toBe(true);
    expect(() => {
      (event as { resourceTypeName: string }).resourceTypeName = 'pods';
    }).toThrow(TypeError);
    expect(() => {
      (event as { correlationId: string }).correlationId = 'hijacked';
    }).toThrow(TypeError);
    expect(event.resourceTypeName).toBe('services');
  });

  it('does not let fields override the envelope or the type', () => {
    const sneaky = { identity: 'pod-a', type: 'leader.lost', eventId: 'forged', correlationId: 'forged' };
    const event = newEvent('leader.became', sneaky as { identity: string });

    expect(event.type).toBe('leader.became');
    expect(event.eventId).not.toBe('forged');
    expect(event.correlationId).toBe(event.eventId);
  });

  it('leaves the caller fields object untouched', () => {
    const fields = { identity: 'pod-a' };
    const event = newEvent('leader.became', fields);

    expect(Object.isFrozen(fields)).toBe(false);
    expect(event).not.toBe(fields);
  });
});

describe('EVENT_TYPES', () => {
  it('lists every event type once', () => {
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
    expect(EVENT_TYPES).toContain('reconciliation.triggered');
    expect(EVENT_TYPES).toContain('rendergate.completed');
    expect(EVENT_TYPES).toHaveLength(14);
  });
});

describe('isEvent', () => {
  it('narrows on the type discriminant', () => {
    const event: ControllerEvent = newEvent('reconciliation.triggered', { reason: 'drift_prevention', coalescible: false });

    expect(isEvent(event, 'reconciliation.triggered')).toBe(true);
    expect(isEvent(event, 'reconciliation.started')).toBe(false);
    if (isEvent(event, 'reconciliation.triggered')) expect(event.coalescible).toBe(false);
  });
});

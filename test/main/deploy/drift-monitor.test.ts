import { describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { DriftPreventionMonitor } from '../../../src/main/deploy/drift-monitor.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../../src/main/events/events.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

async function harness(driftIntervalMs = 60_000) {
  const clock = new FakeClock();
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const publish = vi.spyOn(bus, 'publish');
  bus.start();
  const monitor = new DriftPreventionMonitor({ bus, clock, driftIntervalMs, logger: silentLogger() });
  const term = new AbortController();
  const running = monitor.start(term.signal);
  await monitor.whenReady();
  const triggers = (): EventOf<'drift.prevention.triggered'>[] =>
    publish.mock.calls.map(([e]) => e).filter((e): e is EventOf<'drift.prevention.triggered'> => e.type === 'drift.prevention.triggered');
  const deployed = async (): Promise<void> => {
    bus.publish(newEvent('deployment.completed', { reason: 'resource_change', kind: 'runtime', outcome: 'success', durationMs: 1, runtimeOps: 1, checksum: 'c' }, undefined, clock));
    await flushMicrotasks();
  };
  return { clock, monitor, term, running, triggers, deployed };
}

describe('DriftPreventionMonitor', () => {
  it('triggers once the drift interval passes without a completed deployment, then once per interval', async () => {
    const h = await harness(60_000);
    await h.clock.advance(59_999);
    expect(h.triggers()).toEqual([]);
    await h.clock.advance(1);
    expect(h.triggers().map((e) => e.timeSinceLastDeploymentMs)).toEqual([60_000]);
    await h.clock.advance(60_000);
    expect(h.triggers().map((e) => e.timeSinceLastDeploymentMs)).toEqual([60_000, 120_000]);
    h.term.abort();
    await h.running;
  });

  it('is re-armed by every completed deployment', async () => {
    const h = await harness(60_000);
    await h.clock.advance(50_000);
    await h.deployed();
    await h.clock.advance(50_000);
    await h.deployed();
    await h.clock.advance(59_999);
    expect(h.triggers()).toEqual([]);
    await h.clock.advance(1);
    expect(h.triggers().map((e) => e.timeSinceLastDeploymentMs)).toEqual([60_000]);
    h.term.abort();
    await h.running;
  });

  it('stops, and clears its timer, when the term aborts', async () => {
    const h = await harness(1000);
    h.term.abort();
    await h.running;
    expect(h.clock.pending).toBe(0);
    await h.clock.advance(10_000);
    expect(h.triggers()).toEqual([]);
  });

  it('refuses an interval that is not positive, naming the value', () => {
    expect(() => new DriftPreventionMonitor({ bus: new EventBus<ControllerEvent>({ logger: silentLogger() }), driftIntervalMs: 0 })).toThrow(/got 0/);
  });
});

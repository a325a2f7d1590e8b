// ChangeBatcher: changes recorded one by one leave as one resource.index.updated per store per
// flush, with the counts of that batch and a timestamp from the injected clock.
import { describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import type { ControllerEvent, EventOf } from '../../../src/main/events/events.js';
import { ChangeBatcher } from '../../../src/main/sources/change-batcher.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

function harness(): { batcher: ChangeBatcher; clock: FakeClock; published: () => EventOf<'resource.index.updated'>[] } {
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  bus.start();
  const publish = vi.spyOn(bus, 'publish');
  const clock = new FakeClock();
  const published = (): EventOf<'resource.index.updated'>[] =>
    publish.mock.calls.map(([event]) => {
      if (event.type !== 'resource.index.updated') throw new Error(`unexpected ${event.type} published`);
      return event;
    });
  return { batcher: new ChangeBatcher(bus, clock), clock, published };
}

/** `store created/modified/deleted initial?` per event, sorted by store. */
function summary(events: readonly EventOf<'resource.index.updated'>[]): string[] {
  return events
    .map((e) => {
      const s = e.changeStats;
      return `${e.resourceTypeName} ${s.created}/${s.modified}/${s.deleted}${s.isInitialSync ? ' initial' : ''}`;
    })
    .sort();
}

describe('ChangeBatcher', () => {
  it('publishes one resource.index.updated per store on flush, with that store’s counts', () => {
    const { batcher, published } = harness();
    batcher.record('ingresses', 'created');
    batcher.record('endpointslices', 'modified');
    batcher.record('ingresses', 'created');
    batcher.record('ingresses', 'deleted');
    batcher.record('endpointslices', 'modified');
    batcher.record('ingresses', 'modified');

    expect(published()).toEqual([]);
    expect(batcher.flush()).toBe(2);
    expect(summary(published())).toEqual(['endpointslices 0/2/0', 'ingresses 2/1/1']);
  });

  it('marks the events of a flush as the initial sync when asked', () => {
    const { batcher, published } = harness();
    batcher.record('services', 'created');
    batcher.flush(true);
    batcher.record('services', 'modified');
    batcher.flush();

    expect(published().map((e) => e.changeStats.isInitialSync)).toEqual([true, false]);
  });

  it('publishes nothing on a flush with no recorded change', () => {
    const { batcher, published } = harness();
    expect(batcher.flush()).toBe(0);
    expect(batcher.flush(true)).toBe(0);
    expect(published()).toEqual([]);
  });

  it('starts counting afresh after a flush', () => {
    const { batcher, published } = harness();
    batcher.record('ingresses', 'created');
    batcher.record('services', 'created');
    batcher.flush();

    expect(batcher.flush()).toBe(0);
    batcher.record('ingresses', 'deleted');
    expect(batcher.flush()).toBe(1);
    expect(summary(published().slice(2))).toEqual(['ingresses 0/0/1']);
  });

  it('stamps the events with the injected clock’s time at the flush', async () => {
    const { batcher, clock, published } = harness();
    const start = clock.now();
    batcher.record('ingresses', 'created');
    batcher.flush();
    batcher.record('ingresses', 'modified');
    batcher.record('services', 'modified');
    await clock.advance(1_500);
    batcher.flush();

    expect(published().map((e) => e.timestamp)).toEqual([start, start + 1_500, start + 1_500]);
  });

  it('starts a new correlation with every event', () => {
    const { batcher, published } = harness();
    batcher.record('ingresses', 'created');
    batcher.record('services', 'created');
    batcher.flush();

    const [first, second] = published();
    expect(first?.correlationId).toBe(first?.eventId);
    expect(second?.correlationId).toBe(second?.eventId);
    expect(first?.eventId).not.toBe(second?.eventId);
  });
});

import { describe, expect, it, vi } from 'vitest';
import type { MergeDecision } from '../../../src/main/bus/event-bus.js';
import { a, b, drain, newBus, tags, type TestEvent } from './test-bus.js';

describe('EventBus merge policy', () => {
  function mergingBus(decision: MergeDecision, bufferSize = 100) {
    const bus = newBus();
    const merge = vi.fn<(last: TestEvent, incoming: TestEvent) => MergeDecision>(() => decision);
    const sub = bus.subscribe('merging', { merge, bufferSize });
    bus.start();
    return { bus, sub, merge };
  }

  it('is not consulted while the buffer is empty', () => {
    const { bus, sub, merge } = mergingBus('replace');
    expect(bus.publish(a(1))).toBe(1);
    expect(merge).not.toHaveBeenCalled();
    expect(sub.depth).toBe(1);
  });

  it('is not consulted when a reader is waiting: the event goes straight to it', async () => {
    const { bus, sub, merge } = mergingBus('discard');
    const waiting = sub.next();
    bus.publish(a(1));
    expect(merge).not.toHaveBeenCalled();
    expect((await waiting)?.n).toBe(1);
  });

  it('replace overwrites the last buffered event with the incoming one and counts it as delivered', async () => {
    const { bus, sub, merge } = mergingBus('replace');
    bus.publish(a(1));

    expect(bus.publish(b(2))).toBe(1);

    expect(merge).toHaveBeenCalledWith(a(1), b(2));
    expect(sub.depth).toBe(1);
    expect(tags(await drain(sub))).toEqual(['b2']);
  });

  it('replace only touches the newest buffered event', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s', { merge: (last, incoming) => (last.type === 'b' && incoming.type === 'b' ? 'replace' : 'append') });
    bus.start();
    bus.publish(a(1));
    bus.publish(b(2));
    bus.publish(b(3));
    bus.publish(a(4));
    bus.publish(b(5));

    expect(tags(await drain(sub))).toEqual(['a1', 'b3', 'a4', 'b5']);
  });

  it('discard drops the incoming event, keeps the buffered one and counts it as delivered', async () => {
    const { bus, sub } = mergingBus('discard');
    bus.publish(a(1));

    expect(bus.publish(b(2))).toBe(1);

    expect(tags(await drain(sub))).toEqual(['a1']);
  });

  it('append buffers the incoming event as usual', async () => {
    const { bus, sub } = mergingBus('append');
    bus.publish(a(1));
    expect(bus.publish(b(2))).toBe(1);
    expect(tags(await drain(sub))).toEqual(['a1', 'b2']);
  });

  it('a merging subscriber with a full buffer absorbs a flood without a critical drop', async () => {
    const { bus, sub } = mergingBus('replace', 1);
    for (let i = 0; i < 10_000; i++) expect(bus.publish(a(i))).toBe(1);
    expect(bus.droppedCritical).toBe(0);
    expect(tags(await drain(sub))).toEqual(['a9999']);
  });

  it('append into a full buffer is still a critical drop', () => {
    const { bus } = mergingBus('append', 1);
    bus.publish(a(1));
    expect(bus.publish(a(2))).toBe(0);
    expect(bus.droppedCritical).toBe(1);
  });

  it('a typed merging subscription is only asked about its own types', async () => {
    const bus = newBus();
    const merge = vi.fn<(last: TestEvent, incoming: TestEvent) => MergeDecision>(() => 'replace');
    const sub = bus.subscribe('typed', { types: ['a'], merge });
    bus.start();
    bus.publish(a(1));
    bus.publish(b(2));
    bus.publish(a(3));

    expect(merge).toHaveBeenCalledTimes(1);
    expect(merge).toHaveBeenCalledWith(a(1), a(3));
    expect(tags(await drain(sub))).toEqual(['a3']);
  });
});

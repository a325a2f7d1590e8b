import { describe, expect, it } from 'vitest';
import { a, b, c, drain, newBus, tags } from './test-bus.js';

describe('EventBus typed subscriptions', () => {
  it('only ever see their types, filtered at publish time, replay included', async () => {
    const bus = newBus({ preStartBufferSize: 10 });
    const onlyA = bus.subscribe('only-a', { types: ['a'], bufferSize: 2 });
    const aAndC = bus.subscribe('a-and-c', { types: ['a', 'c'] });
    bus.publish(b(1));
    bus.publish(a(2));
    bus.publish(c(3));
    bus.publish(b(4));

    bus.start();
    expect(bus.publish(b(5))).toBe(0);
    expect(bus.publish(a(6))).toBe(2);

    // other types never took room in the two-slot buffer, so nothing was dropped
    expect(bus.droppedCritical).toBe(0);
    expect(tags(await drain(onlyA))).toEqual(['a2', 'a6']);
    expect(tags(await drain(aAndC))).toEqual(['a2', 'c3', 'a6']);
  });
});

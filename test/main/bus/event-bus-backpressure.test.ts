import { describe, expect, it, vi } from 'vitest';
import { EventBus, type DropInfo } from '../../../src/main/bus/event-bus.js';
import { spyLogger } from '../../helpers/loggers.js';
import { a, b, drain, newBus, tags, type TestEvent } from './test-bus.js';

describe('EventBus with a full subscriber', () => {
  it('counts a critical drop, calls onDrop with the event type, subscriber and buffer size, and still delivers to others', async () => {
    const onDrop = vi.fn<(info: DropInfo) => void>();
    const bus = newBus({ onDrop });
    const slow = bus.subscribe('slow', { bufferSize: 2 });
    const healthy = bus.subscribe('healthy', { bufferSize: 10 });
    bus.start();

    expect(bus.publish(a(1))).toBe(2);
    expect(bus.publish(a(2))).toBe(2);
    const receivers = bus.publish(b(3));

    expect(receivers).toBe(1);
    expect(bus.droppedCritical).toBe(1);
    expect(bus.droppedLossy).toBe(0);
    expect(onDrop).toHaveBeenCalledTimes(1);
    expect(onDrop).toHaveBeenCalledWith({ eventType: 'b', subscriberName: 'slow', bufferSize: 2 });
    expect(slow.depth).toBe(2);
    expect(tags(await drain(healthy))).toEqual(['a1', 'a2', 'b3']);
    expect(tags(await drain(slow))).toEqual(['a1', 'a2']);
  });

  it('publishing to a full subscriber does not block: thousands of publishes return synchronously', () => {
    const bus = newBus();
    const stuck = bus.subscribe('stuck', { bufferSize: 1 });
    bus.start();

    const results: number[] = [];
    for (let i = 0; i < 5000; i++) results.push(bus.publish(a(i)));

    expect(results[0]).toBe(1);
    expect(results.slice(1).every((r) => r === 0)).toBe(true);
    expect(bus.droppedCritical).toBe(4999);
    expect(stuck.depth).toBe(1);
  });

  it('an onDrop handler that throws does not make publish throw', () => {
    const logs = spyLogger();
    const bus = new EventBus<TestEvent>({
      logger: logs.logger,
      onDrop: () => {
        throw new Error('metrics exploded');
      },
    });
    bus.subscribe('full', { bufferSize: 1 });
    bus.start();
    bus.publish(a(1));

    expect(() => bus.publish(a(2))).not.toThrow();
    expect(bus.droppedCritical).toBe(1);
    expect(logs.error).toHaveBeenCalled();
  });

  it('a lossy subscriber drop is counted in droppedLossy, not as critical, and onDrop is not called', async () => {
    const onDrop = vi.fn<(info: DropInfo) => void>();
    const bus = newBus({ onDrop });
    const lossy = bus.subscribe('metrics', { bufferSize: 1, lossy: true });
    bus.start();

    expect(bus.publish(a(1))).toBe(1);
    expect(bus.publish(a(2))).toBe(0);
    expect(bus.publish(a(3))).toBe(0);

    expect(bus.droppedLossy).toBe(2);
    expect(bus.droppedCritical).toBe(0);
    expect(onDrop).not.toHaveBeenCalled();
    expect(tags(await drain(lossy))).toEqual(['a1']);
  });

  it('a reader taking events frees room so later events are delivered again', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s', { bufferSize: 1 });
    bus.start();
    bus.publish(a(1));
    expect(bus.publish(a(2))).toBe(0);

    expect((await sub.next())?.n).toBe(1);
    expect(bus.publish(a(3))).toBe(1);
    expect((await sub.next())?.n).toBe(3);
  });

  it('rejects a bufferSize below 1', () => {
    const bus = newBus();
    expect(() => bus.subscribe('s', { bufferSize: 0 })).toThrow(TypeError);
  });
});

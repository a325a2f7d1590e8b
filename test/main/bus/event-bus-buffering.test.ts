import { describe, expect, it, vi } from 'vitest';
import type { DropInfo } from '../../../src/main/bus/event-bus.js';
import { a, b, c, drain, newBus, tags } from './test-bus.js';

describe('EventBus before start()', () => {
  it('buffers published events and returns 0, even with subscribers', () => {
    const bus = newBus();
    const sub = bus.subscribe('s');

    expect(bus.publish(a(1))).toBe(0);
    expect(bus.publish(b(2))).toBe(0);
    expect(sub.depth).toBe(0);
    expect(bus.started).toBe(false);
  });

  it('replays the buffer in publish order on start(), to subscribers that joined before or after publishing', async () => {
    const bus = newBus();
    const early = bus.subscribe('early');
    bus.publish(a(1));
    bus.publish(b(2));
    const late = bus.subscribe('late');
    bus.publish(a(3));

    bus.start();

    expect(tags(await drain(early))).toEqual(['a1', 'b2', 'a3']);
    expect(tags(await drain(late))).toEqual(['a1', 'b2', 'a3']);
  });

  it('delivers directly after start() and returns the number of receiving subscribers', async () => {
    const bus = newBus();
    const first = bus.subscribe('first');
    const second = bus.subscribe('second');
    const onlyB = bus.subscribe('only-b', { types: ['b'] });
    bus.start();

    expect(bus.publish(a(1))).toBe(2);
    expect(bus.publish(b(2))).toBe(3);
    expect(tags(await drain(first))).toEqual(['a1', 'b2']);
    expect(tags(await drain(second))).toEqual(['a1', 'b2']);
    expect(tags(await drain(onlyB))).toEqual(['b2']);
  });

  it('returns 0 after start() when nobody subscribed', () => {
    const bus = newBus();
    bus.start();
    expect(bus.publish(a(1))).toBe(0);
    expect(bus.droppedCritical).toBe(0);
  });

  it('drops events beyond preStartBufferSize as critical drops and reports them through onDrop', async () => {
    const onDrop = vi.fn<(info: DropInfo) => void>();
    const bus = newBus({ preStartBufferSize: 2, onDrop });
    const sub = bus.subscribe('s');

    bus.publish(a(1));
    bus.publish(a(2));
    expect(bus.droppedCritical).toBe(0);
    expect(bus.publish(b(3))).toBe(0);

    expect(bus.droppedCritical).toBe(1);
    expect(bus.droppedLossy).toBe(0);
    expect(onDrop).toHaveBeenCalledTimes(1);
    expect(onDrop.mock.calls[0]?.[0]).toMatchObject({ eventType: 'b', bufferSize: 2 });

    bus.start();
    expect(tags(await drain(sub))).toEqual(['a1', 'a2']);
  });

  it('with preStartBufferSize 0 drops every event published before start()', () => {
    const bus = newBus({ preStartBufferSize: 0 });
    bus.subscribe('s');
    bus.publish(a(1));
    bus.publish(a(2));
    expect(bus.droppedCritical).toBe(2);
  });

  it('rejects a preStartBufferSize that is not a non-negative integer', () => {
    expect(() => newBus({ preStartBufferSize: -1 })).toThrow(TypeError);
    expect(() => newBus({ preStartBufferSize: 1.5 })).toThrow(TypeError);
  });
});

describe('EventBus start() and pause()', () => {
  it('start() is idempotent: a second call replays nothing again', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    bus.publish(a(1));

    bus.start();
    bus.start();

    expect(tags(await drain(sub))).toEqual(['a1']);
    expect(bus.publish(a(2))).toBe(1);
    expect(tags(await drain(sub))).toEqual(['a2']);
  });

  it('pause() returns a started bus to buffering until the next start()', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    bus.start();
    expect(bus.publish(a(1))).toBe(1);

    bus.pause();
    expect(bus.started).toBe(false);
    expect(bus.publish(a(2))).toBe(0);
    expect(bus.publish(b(3))).toBe(0);
    expect(tags(await drain(sub))).toEqual(['a1']);

    bus.start();
    expect(tags(await drain(sub))).toEqual(['a2', 'b3']);
    expect(bus.publish(c(4))).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { flushMicrotasks, track } from '../../helpers/async.js';
import { a, b, c, drain, newBus, tags, type TestEvent } from './test-bus.js';

describe('Subscription', () => {
  it('next() waits for the next event and resolves with it', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    bus.start();
    const pending = track(sub.next());
    await flushMicrotasks();
    expect(pending.done).toBe(false);

    bus.publish(b(7));

    expect(await pending.promise).toEqual(b(7));
  });

  it('next(signal) resolves undefined when the signal aborts', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    bus.start();
    const controller = new AbortController();
    const pending = sub.next(controller.signal);

    controller.abort();

    expect(await pending).toBeUndefined();
    // the aborted reader is gone: the next event is buffered for the next reader instead
    expect(bus.publish(a(1))).toBe(1);
    expect(sub.depth).toBe(1);
    expect((await sub.next())?.n).toBe(1);
  });

  it('next(signal) with an already aborted signal resolves undefined even when events are buffered', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    bus.start();
    bus.publish(a(1));
    const controller = new AbortController();
    controller.abort();

    expect(await sub.next(controller.signal)).toBeUndefined();
    expect((await sub.next())?.n).toBe(1);
  });

  it('next() resolves undefined for pending and later readers once the subscription is closed', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    bus.start();
    const pending = sub.next();

    sub.close();

    expect(await pending).toBeUndefined();
    expect(await sub.next()).toBeUndefined();
    expect(sub.closed).toBe(true);
  });

  it('close() frees the buffer and unsubscribes, so the bus stops counting it', () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    const other = bus.subscribe('other');
    bus.start();
    bus.publish(a(1));
    expect(bus.subscriberCount).toBe(2);

    sub.close();
    sub.close();

    expect(sub.depth).toBe(0);
    expect(bus.subscriberCount).toBe(1);
    expect(bus.publish(a(2))).toBe(1);
    expect(other.depth).toBe(2);
  });

  it('is async-iterable until closed', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    bus.start();
    const seen: TestEvent[] = [];
    const loop = (async () => {
      for await (const event of sub) {
        seen.push(event);
        if (event.type === 'c') sub.close();
      }
    })();

    bus.publish(a(1));
    bus.publish(b(2));
    bus.publish(c(3));
    bus.publish(a(4));
    await loop;

    expect(tags(seen)).toEqual(['a1', 'b2', 'c3']);
  });

  it('each subscriber sees events in publish order, whatever the interleaving of reads and publishes', async () => {
    const bus = newBus();
    const reader = bus.subscribe('reader', { bufferSize: 1000 });
    const idle = bus.subscribe('idle', { bufferSize: 1000 });
    bus.start();
    const seen: number[] = [];

    let n = 0;
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i <= round % 4; i++) bus.publish(a(n++));
      for (let i = 0; i < round % 3; i++) {
        const e = await reader.next();
        if (e !== undefined) seen.push(e.n);
      }
    }
    seen.push(...(await drain(reader)).map((e) => e.n));

    const expected = Array.from({ length: n }, (_, i) => i);
    expect(seen).toEqual(expected);
    expect((await drain(idle)).map((e) => e.n)).toEqual(expected);
  });

  it('waiting readers are served in the order they called next()', async () => {
    const bus = newBus();
    const sub = bus.subscribe('s');
    bus.start();
    const first = sub.next();
    const second = sub.next();

    bus.publish(a(1));
    bus.publish(a(2));

    expect((await first)?.n).toBe(1);
    expect((await second)?.n).toBe(2);
  });
});

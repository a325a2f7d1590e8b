import { describe, expect, it, vi } from 'vitest';
import { EventBus, type DropInfo, type EventBusOptions, type MergeDecision, type Subscription } from '../../../src/main/bus/event-bus.js';
import { flushMicrotasks, track } from '../../helpers/async.js';
import { silentLogger, spyLogger } from '../../helpers/loggers.js';

type TestEvent = { readonly type: 'a'; readonly n: number } | { readonly type: 'b'; readonly n: number } | { readonly type: 'c'; readonly n: number };

const a = (n: number): TestEvent => ({ type: 'a', n });
const b = (n: number): TestEvent => ({ type: 'b', n });
const c = (n: number): TestEvent => ({ type: 'c', n });

function newBus(options: EventBusOptions = {}): EventBus<TestEvent> {
  return new EventBus<TestEvent>({ logger: silentLogger(), ...options });
}

/** Takes every buffered event without waiting for more. */
async function drain<E>(sub: Subscription<E>): Promise<E[]> {
  const out: E[] = [];
  while (sub.depth > 0) out.push((await sub.next()) as E);
  return out;
}

const tags = (events: readonly TestEvent[]): string[] => events.map((e) => `${e.type}${e.n}`);

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

describe('EventBus late subscriptions', () => {
  it('subscribing after start() logs a warning naming the subscriber', () => {
    const logs = spyLogger();
    const bus = new EventBus<TestEvent>({ logger: logs.logger });
    bus.subscribe('early');
    expect(logs.warn).not.toHaveBeenCalled();

    bus.start();
    bus.subscribe('latecomer');

    expect(logs.warn).toHaveBeenCalledTimes(1);
    expect(logs.warn.mock.calls[0]?.[0]).toEqual({ subscriber: 'latecomer' });
  });

  it('a leaderOnly subscription after start() logs no warning', () => {
    const logs = spyLogger();
    const bus = new EventBus<TestEvent>({ logger: logs.logger });
    bus.start();

    bus.subscribe('coordinator', { leaderOnly: true, types: ['a'] });

    expect(logs.warn).not.toHaveBeenCalled();
    expect(bus.subscriberCount).toBe(1);
  });

  it('a late subscriber misses what was published before it joined', async () => {
    const bus = newBus();
    bus.start();
    bus.publish(a(1));
    const late = bus.subscribe('late', { leaderOnly: true });
    bus.publish(a(2));
    expect(tags(await drain(late))).toEqual(['a2']);
  });
});

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

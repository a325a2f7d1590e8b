import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import { spyLogger } from '../../helpers/loggers.js';
import { a, drain, newBus, tags, type TestEvent } from './test-bus.js';

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

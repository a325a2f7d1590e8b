// The event type, bus and readers the EventBus and Subscription tests share.
import { EventBus, type EventBusOptions, type Subscription } from '../../../src/main/bus/event-bus.js';
import { silentLogger } from '../../helpers/loggers.js';

export type TestEvent = { readonly type: 'a'; readonly n: number } | { readonly type: 'b'; readonly n: number } | { readonly type: 'c'; readonly n: number };

export const a = (n: number): TestEvent => ({ type: 'a', n });
export const b = (n: number): TestEvent => ({ type: 'b', n });
export const c = (n: number): TestEvent => ({ type: 'c', n });

export function newBus(options: EventBusOptions = {}): EventBus<TestEvent> {
  return new EventBus<TestEvent>({ logger: silentLogger(), ...options });
}

/** Takes every buffered event without waiting for more. */
export async function drain<E>(sub: Subscription<E>): Promise<E[]> {
  const out: E[] = [];
  while (sub.depth > 0) out.push((await sub.next()) as E);
  return out;
}

export const tags = (events: readonly TestEvent[]): string[] => events.map((e) => `${e.type}${e.n}`);

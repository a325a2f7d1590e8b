// A generic, in-process publish/subscribe bus that knows no domain beyond an event's `type`.
// Publishing never blocks and never throws: each subscriber has a bounded buffer, and a full
// buffer drops the event for that subscriber only (lossy subscribers just count it; any other
// drop is critical and reported through `onDrop`). Before `start()` events are held in a capped
// buffer and replayed in publish order, so components can subscribe in any order at start-up.
import type { Logger } from 'pino';
import { defaultLogger } from '../core/logger.js';

/** What the bus needs of an event: a string discriminant. */
export interface BusEvent {
  readonly type: string;
}

export interface DropInfo {
  readonly eventType: string;
  readonly subscriberName: string;
  readonly bufferSize: number;
}

export interface EventBusOptions {
  /**
   * Events held before `start()`; beyond it an event is dropped and counted as critical.
   * @default 1000
   */
  readonly preStartBufferSize?: number;
  readonly logger?: Logger;
  /** Called for every critical drop (a non-lossy subscriber whose buffer was full). */
  readonly onDrop?: (info: DropInfo) => void;
}

export interface SubscribeOptions<T extends string, E = BusEvent> {
  /** Only these types are delivered (filtered at publish time, replay included). */
  readonly types?: readonly T[];
  /** @default 100 */
  readonly bufferSize?: number;
  /** A lossy subscriber's drops are counted but are not critical. @default false */
  readonly lossy?: boolean;
  /** Leader-only components subscribe after `start()` on purpose: no warning. @default false */
  readonly leaderOnly?: boolean;
  /**
   * Buffer policy for a busy subscriber: called with the last buffered event and the incoming
   * one. `replace` overwrites the buffered event, `discard` drops the incoming one (both count as
   * delivered: the subscriber asked for it), `append` buffers it as usual. This is how a mailbox
   * coalesces a flood without ever filling its buffer.
   */
  readonly merge?: MergePolicy<E>;
}

export type MergeDecision = 'append' | 'replace' | 'discard';
export type MergePolicy<E> = (last: E, incoming: E) => MergeDecision;

/** A subscriber's view of the bus: an async iterable queue of events. */
export interface Subscription<E> extends AsyncIterable<E> {
  readonly name: string;
  /** Events buffered and not yet taken. */
  readonly depth: number;
  readonly closed: boolean;
  /** The next event; `undefined` once the subscription is closed or `signal` aborts. */
  next(signal?: AbortSignal): Promise<E | undefined>;
  /** Stops delivery and frees the buffer; pending `next()` calls resolve `undefined`. */
  close(): void;
}

type Narrow<E extends BusEvent, T extends string> = Extract<E, { type: T }>;

export class EventBus<E extends BusEvent = BusEvent> {
  readonly #preStartBufferSize: number;
  readonly #logger: Logger;
  readonly #onDrop: ((info: DropInfo) => void) | undefined;
  readonly #subscribers = new Set<SubscriberQueue<E>>();
  /** Events published while not started; never longer than #preStartBufferSize. */
  #pending: E[] = [];
  #started = false;
  #droppedCritical = 0;
  #droppedLossy = 0;

  constructor(options: EventBusOptions = {}) {
    const size = options.preStartBufferSize ?? 1000;
    if (!Number.isInteger(size) || size < 0) {
      throw new TypeError(`preStartBufferSize must be a non-negative integer, got ${String(size)}`);
    }
    this.#preStartBufferSize = size;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'event-bus' });
    this.#onDrop = options.onDrop;
  }

  get started(): boolean {
    return this.#started;
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  get droppedCritical(): number {
    return this.#droppedCritical;
  }

  get droppedLossy(): number {
    return this.#droppedLossy;
  }

  /**
   * Delivers `event` to every matching subscriber and returns how many received it.
   * Before `start()` the event is buffered and 0 is returned.
   */
  publish(event: E): number {
    if (!this.#started) {
      if (this.#pending.length >= this.#preStartBufferSize) {
        this.#droppedCritical++;
        this.#reportDrop({ eventType: event.type, subscriberName: '(pre-start buffer)', bufferSize: this.#preStartBufferSize });
      } else {
        this.#pending.push(event);
      }
      return 0;
    }
    return this.#deliver(event);
  }

  subscribe<T extends E['type']>(
    name: string,
    options: SubscribeOptions<T, Narrow<E, T>> & { types: readonly T[] },
  ): Subscription<Narrow<E, T>>;
  subscribe(name: string, options?: SubscribeOptions<E['type'], E>): Subscription<E>;
  subscribe(
    name: string,
    options: Omit<SubscribeOptions<E['type'], E>, 'merge'> & { readonly merge?: MergePolicy<never> } = {},
  ): Subscription<E> {
    const bufferSize = options.bufferSize ?? 100;
    if (!Number.isInteger(bufferSize) || bufferSize < 1) {
      throw new TypeError(`bufferSize must be a positive integer, got ${String(bufferSize)}`);
    }
    if (this.#started && options.leaderOnly !== true) {
      this.#logger.warn({ subscriber: name }, 'subscribed after the bus started; events published earlier were missed');
    }
    const queue = new SubscriberQueue<E>(
      name,
      options.types === undefined ? undefined : new Set<string>(options.types),
      bufferSize,
      options.lossy === true,
      // A typed subscription's policy only ever sees its own types (filtered before offer).
      options.merge as MergePolicy<E> | undefined,
      (q) => this.#subscribers.delete(q),
    );
    this.#subscribers.add(queue);
    return queue;
  }

  /** Replays the pre-start buffer in publish order, then delivers directly. Idempotent. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    const pending = this.#pending;
    this.#pending = [];
    for (const event of pending) this.#deliver(event);
  }

  /** Returns a started bus to buffering, e.g. while leadership is handed over. */
  pause(): void {
    this.#started = false;
  }

  #deliver(event: E): number {
    let delivered = 0;
    for (const queue of this.#subscribers) {
      if (!queue.accepts(event.type)) continue;
      if (queue.offer(event)) {
        delivered++;
      } else if (queue.lossy) {
        this.#droppedLossy++;
      } else {
        this.#droppedCritical++;
        this.#reportDrop({ eventType: event.type, subscriberName: queue.name, bufferSize: queue.bufferSize });
      }
    }
    return delivered;
  }

  #reportDrop(info: DropInfo): void {
    this.#logger.error(info, 'critical event dropped');
    if (this.#onDrop === undefined) return;
    try {
      this.#onDrop(info);
    } catch (error) {
      // A faulty drop handler must not turn publish into a throwing call.
      this.#logger.error({ err: error }, 'onDrop handler threw');
    }
  }
}

/** A bounded FIFO with at most one waiting reader, which is how subscribers consume. */
class SubscriberQueue<E> implements Subscription<E> {
  readonly name: string;
  readonly bufferSize: number;
  readonly lossy: boolean;
  readonly #types: ReadonlySet<string> | undefined;
  readonly #merge: MergePolicy<E> | undefined;
  readonly #onClose: (queue: SubscriberQueue<E>) => void;
  /** Ring buffer storage; `#head` is the oldest, `#size` never exceeds `bufferSize`. */
  readonly #ring: (E | undefined)[];
  #head = 0;
  #size = 0;
  #waiters: ((event: E | undefined) => void)[] = [];
  #closed = false;

  constructor(
    name: string,
    types: ReadonlySet<string> | undefined,
    bufferSize: number,
    lossy: boolean,
    merge: MergePolicy<E> | undefined,
    onClose: (queue: SubscriberQueue<E>) => void,
  ) {
    this.#merge = merge;
    this.name = name;
    this.#types = types;
    this.bufferSize = bufferSize;
    this.lossy = lossy;
    this.#onClose = onClose;
    this.#ring = new Array<E | undefined>(bufferSize);
  }

  get depth(): number {
    return this.#size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  accepts(type: string): boolean {
    return !this.#closed && (this.#types === undefined || this.#types.has(type));
  }

  /** Hands the event to a waiting reader or buffers it; false when the buffer is full. */
  offer(event: E): boolean {
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      waiter(event);
      return true;
    }
    if (this.#size > 0 && this.#merge !== undefined) {
      const lastSlot = (this.#head + this.#size - 1) % this.bufferSize;
      const decision = this.#merge(this.#ring[lastSlot] as E, event);
      if (decision === 'replace') {
        this.#ring[lastSlot] = event;
        return true;
      }
      if (decision === 'discard') return true;
    }
    if (this.#size >= this.bufferSize) return false;
    this.#ring[(this.#head + this.#size) % this.bufferSize] = event;
    this.#size++;
    return true;
  }

  next(signal?: AbortSignal): Promise<E | undefined> {
    // An aborted reader takes nothing, even when events are buffered: they stay for the next one.
    if (signal?.aborted === true) return Promise.resolve(undefined);
    if (this.#size > 0) {
      const event = this.#ring[this.#head];
      this.#ring[this.#head] = undefined;
      this.#head = (this.#head + 1) % this.bufferSize;
      this.#size--;
      return Promise.resolve(event);
    }
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (event: E | undefined): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(event);
      };
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ring.fill(undefined);
    this.#size = 0;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter(undefined);
    this.#onClose(this);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<E> {
    for (;;) {
      const event = await this.next();
      if (event === undefined) return;
      yield event;
    }
  }
}

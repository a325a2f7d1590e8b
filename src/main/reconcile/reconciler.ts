// Reconciler: turns every relevant change into one `reconciliation.triggered`, immediately.
// Runs on every replica and subscribes in its constructor, so it sees events buffered before
// the bus starts. No timer, no debounce: coalescing is the Coordinator's mailbox's job.
// Subscribes: resource.index.updated, index.synchronized, http.resource.updated,
//             http.resource.accepted, drift.prevention.triggered, leader.became
// Publishes:  reconciliation.triggered (each with a new correlation)
import type { Logger } from 'pino';
import type { EventBus, Subscription } from '../bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventOf } from '../events/events.js';
import { defaultLogger } from '../core/logger.js';

/** The store that tracks HAProxy pods themselves; its changes never affect the rendered config. */
export const HAPROXY_PODS_STORE = 'haproxy-pods';

const INPUT_TYPES = [
  'resource.index.updated',
  'index.synchronized',
  'http.resource.updated',
  'http.resource.accepted',
  'drift.prevention.triggered',
  'leader.became',
] as const;

type ReconcilerInput = EventOf<(typeof INPUT_TYPES)[number]>;

export interface TriggerDecision {
  readonly reason: string;
  readonly coalescible: boolean;
}

/**
 * The Reconciler table: the trigger an input event causes, or `null` when it is ignored.
 * Pure, so every row can be checked without a bus.
 */
export function triggerFor(event: ReconcilerInput): TriggerDecision | null {
  switch (event.type) {
    case 'resource.index.updated':
      // Stores fire one update per object while they hydrate; index.synchronized follows.
      if (event.changeStats.isInitialSync || event.resourceTypeName === HAPROXY_PODS_STORE) return null;
      return { reason: 'resource_change', coalescible: true };
    case 'http.resource.updated':
      return { reason: 'http_resource_change', coalescible: true };
    case 'index.synchronized':
      return { reason: 'index_synchronized', coalescible: false };
    case 'http.resource.accepted':
      return { reason: 'http_resource_accepted', coalescible: false };
    case 'drift.prevention.triggered':
      return { reason: 'drift_prevention', coalescible: false };
    case 'leader.became':
      return { reason: 'became_leader', coalescible: false };
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

export class Reconciler {
  readonly #bus: EventBus<ControllerEvent>;
  readonly #logger: Logger;
  readonly #subscription: Subscription<ReconcilerInput>;

  constructor(bus: EventBus<ControllerEvent>, logger?: Logger) {
    this.#bus = bus;
    this.#logger = (logger ?? defaultLogger()).child({ component: 'reconciler' });
    // A flood of index updates must not be lost while the loop is between awaits: the buffer
    // is generous, and the loop drains it synchronously whenever it runs.
    this.#subscription = bus.subscribe('reconciler', { types: INPUT_TYPES, bufferSize: 10_000 });
  }

  /** Handles events until `signal` aborts, then unsubscribes. */
  async start(signal: AbortSignal): Promise<void> {
    try {
      for (;;) {
        const event = await this.#subscription.next(signal);
        if (event === undefined) return;
        const decision = triggerFor(event);
        if (decision === null) continue;
        this.#bus.publish(newEvent('reconciliation.triggered', decision));
        this.#logger.trace({ reason: decision.reason, source: event.type }, 'reconciliation triggered');
      }
    } finally {
      this.#subscription.close();
    }
  }
}

// Reconciler: turns every relevant change into one `reconciliation.triggered`, immediately.
// Runs on every replica and subscribes in its constructor, so it sees events buffered before
// the bus starts. No timer, no debounce: coalescing is the Coordinator's mailbox's job.
// Subscribes: resource.index.updated, index.synchronized, http.resource.updated,
//             http.resource.accepted, drift.prevention.triggered, leader.became
// Publishes:  reconciliation.triggered (each with a new correlation)
import type { Logger } from 'pino';
import type { EventBus, MergeDecision, Subscription } from '../bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventOf } from '../events/events.js';
import { systemClock, type Clock } from '../core/clock.js';
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

const BUFFER_SIZE = 10_000;
/** Queue depth from which the Reconciler merges queued index updates (well below the buffer). */
const MERGE_FROM = 1000;

/**
 * The Reconciler's buffer rule: an index update queued behind another index update that causes
 * the same decision (both ignored, or both a coalescible `resource_change`) adds nothing, so the
 * later one is dropped from the queue. Every other event is queued, so each one still yields its
 * own trigger (SPEC: one trigger per accepted event; merged updates were one burst of changes).
 */
export function reconcilerMerge(last: ReconcilerInput, incoming: ReconcilerInput): MergeDecision {
  if (last.type !== 'resource.index.updated' || incoming.type !== 'resource.index.updated') return 'append';
  const lastDecision = triggerFor(last);
  const incomingDecision = triggerFor(incoming);
  if (lastDecision === null && incomingDecision === null) return 'discard';
  return lastDecision !== null && incomingDecision !== null ? 'discard' : 'append';
}

export class Reconciler {
  readonly #bus: EventBus<ControllerEvent>;
  readonly #logger: Logger;
  readonly #subscription: Subscription<ReconcilerInput>;
  readonly #clock: Clock;

  /** `clock` stamps the triggers' timestamps. */
  constructor(bus: EventBus<ControllerEvent>, logger?: Logger, clock: Clock = systemClock) {
    this.#bus = bus;
    this.#clock = clock;
    this.#logger = (logger ?? defaultLogger()).child({ component: 'reconciler' });
    // One trigger per event while the loop keeps up. A synchronous burst of any size must still
    // never fill the buffer: once MERGE_FROM events wait, queued updates that would cause the same
    // trigger are merged (see `reconcilerMerge`), the way the Coordinator's mailbox merges triggers.
    const subscription: Subscription<ReconcilerInput> = bus.subscribe('reconciler', {
      types: INPUT_TYPES,
      bufferSize: BUFFER_SIZE,
      merge: (last, incoming) => (subscription.depth < MERGE_FROM ? 'append' : reconcilerMerge(last, incoming)),
    });
    this.#subscription = subscription;
  }

  /** Handles events until `signal` aborts, then unsubscribes. */
  async start(signal: AbortSignal): Promise<void> {
    try {
      for (;;) {
        const event = await this.#subscription.next(signal);
        if (event === undefined) return;
        const decision = triggerFor(event);
        if (decision === null) continue;
        this.#bus.publish(newEvent('reconciliation.triggered', decision, undefined, this.#clock));
        this.#logger.trace({ reason: decision.reason, source: event.type }, 'reconciliation triggered');
      }
    } finally {
      this.#subscription.close();
    }
  }
}

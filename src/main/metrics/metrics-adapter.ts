// MetricsAdapter: feeds ControllerMetrics from the bus. Runs on every replica and subscribes in
// its constructor (like the Reconciler), lossy: under a flood it may miss events, which the bus
// counts as lossy drops, and it never causes a critical drop. Cheap per event: a switch, a
// counter or histogram update, and for queue times a bounded map of trigger timestamps.
// Subscribes: reconciliation.triggered, reconciliation.started, reconciliation.completed,
//             rendergate.completed, deployment.completed, leader.became, leader.lost
// Publishes:  nothing
import type { EventBus, Subscription } from '../bus/event-bus.js';
import type { ControllerEvent, EventOf } from '../events/events.js';
import type { ControllerMetrics } from './metrics.js';
import { PendingTriggers } from './pending-triggers.js';

const INPUT_TYPES = [
  'reconciliation.triggered',
  'reconciliation.started',
  'reconciliation.completed',
  'template.rendered',
  'rendergate.completed',
  'deployment.completed',
  'leader.became',
  'leader.lost',
] as const;

type MetricsInput = EventOf<(typeof INPUT_TYPES)[number]>;

export interface MetricsAdapterOptions {
  /**
   * Events buffered while the adapter waits for its turn on the event loop.
   * @default 10000
   */
  readonly bufferSize?: number;
  /**
   * Trigger timestamps kept per kind (coalescible or not) until their reconciliation starts.
   * @default 4096
   */
  readonly maxPendingTriggers?: number;
}

export class MetricsAdapter {
  readonly #metrics: ControllerMetrics;
  readonly #subscription: Subscription<MetricsInput>;
  /** Trigger eventId -> timestamp; `reconciliation.started` carries the trigger's eventId as its correlationId. */
  readonly #pending: PendingTriggers;

  constructor(bus: EventBus<ControllerEvent>, metrics: ControllerMetrics, options: MetricsAdapterOptions = {}) {
    this.#metrics = metrics;
    this.#pending = new PendingTriggers(options.maxPendingTriggers);
    this.#subscription = bus.subscribe('metrics', { types: INPUT_TYPES, bufferSize: options.bufferSize ?? 10_000, lossy: true });
  }

  /** Triggers waiting for their reconciliation to start (bounded). */
  get pendingTriggers(): number {
    return this.#pending.size;
  }

  /** Events buffered and not yet recorded. */
  get depth(): number {
    return this.#subscription.depth;
  }

  /** Records events until `signal` aborts, then unsubscribes. */
  async start(signal: AbortSignal): Promise<void> {
    try {
      for (;;) {
        const event = await this.#subscription.next(signal);
        if (event === undefined) return;
        this.#record(event);
      }
    } finally {
      this.#subscription.close();
    }
  }

  #record(event: MetricsInput): void {
    const metrics = this.#metrics;
    switch (event.type) {
      case 'reconciliation.triggered':
        metrics.countTrigger(event.reason);
        this.#pending.add(event.eventId, event.timestamp, event.coalescible);
        return;
      case 'reconciliation.started': {
        const triggeredAt = this.#pending.take(event.correlationId);
        if (triggeredAt !== undefined) metrics.observeQueueTime((event.timestamp - triggeredAt) / 1000);
        return;
      }
      case 'reconciliation.completed':
        metrics.observeReconciliation(event.outcome, event.durationMs);
        return;
      case 'template.rendered':
        if (event.rejectionCounts !== undefined) metrics.setRejections(event.rejectionCounts);
        return;
      case 'rendergate.completed':
        metrics.countRenderGateVerdict(event.ok ? 'ok' : event.refused ? 'refused' : 'unknown');
        return;
      case 'deployment.completed':
        metrics.observeDeployment(event.kind, event.outcome, event.durationMs);
        if (event.fleet !== undefined) metrics.setFleetInstances(event.fleet);
        return;
      case 'leader.became':
      case 'leader.lost':
        // Triggers of another term never start: the Coordinator subscribes afresh each term.
        this.#pending.clear();
        metrics.setLeader(event.type === 'leader.became');
        return;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  }
}

// DriftPreventionMonitor (leader only): when no deployment has completed for `driftIntervalMs`,
// asks for one, so HAProxy returns to the rendered state even when nothing changes. Every
// deployment.completed re-arms the timer, and so does firing: a quiet cluster gets one per interval.
// Subscribes (in start, leader-only): deployment.completed
// Publishes: drift.prevention.triggered {timeSinceLastDeploymentMs}
import type { Logger } from 'pino';
import type { EventBus } from '../bus/event-bus.js';
import { deferred } from '../core/async.js';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import { newEvent, type ControllerEvent } from '../events/events.js';

export interface DriftPreventionMonitorOptions {
  readonly bus: EventBus<ControllerEvent>;
  /** Quiet time after which a deployment is forced. @default 60000 */
  readonly driftIntervalMs?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export class DriftPreventionMonitor {
  readonly #bus: EventBus<ControllerEvent>;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #ready = deferred<void>();
  #triggered = 0;

  constructor(options: DriftPreventionMonitorOptions) {
    this.#bus = options.bus;
    this.#intervalMs = options.driftIntervalMs ?? 60_000;
    if (!Number.isFinite(this.#intervalMs) || this.#intervalMs <= 0) {
      throw new TypeError(`driftIntervalMs must be a positive number, got ${String(options.driftIntervalMs)}`);
    }
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'drift-monitor' });
  }

  /** Triggers published so far. */
  get triggered(): number {
    return this.#triggered;
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  /** One leadership term: the interval counts from the term's start until a deployment completes. */
  async start(term: AbortSignal): Promise<void> {
    const completions = this.#bus.subscribe('drift-monitor', {
      types: ['deployment.completed'],
      leaderOnly: true,
      bufferSize: 16,
      // Only the time of the latest completion matters.
      merge: () => 'replace',
    });
    let last = this.#clock.monotonic();
    let timer: TimerHandle | undefined;
    const arm = (): void => {
      this.#clock.clearTimeout(timer);
      timer = this.#clock.setTimeout(fire, this.#intervalMs, { unref: true });
    };
    const fire = (): void => {
      if (term.aborted) return;
      const timeSinceLastDeploymentMs = this.#clock.monotonic() - last;
      this.#triggered++;
      this.#logger.info({ timeSinceLastDeploymentMs }, 'no deployment for the drift interval; forcing one');
      this.#bus.publish(newEvent('drift.prevention.triggered', { timeSinceLastDeploymentMs }, undefined, this.#clock));
      arm();
    };
    arm();
    this.#ready.resolve();
    try {
      for (;;) {
        const completed = await completions.next(term);
        if (completed === undefined) return;
        last = this.#clock.monotonic();
        arm();
      }
    } finally {
      this.#clock.clearTimeout(timer);
      completions.close();
      this.#ready = deferred<void>();
    }
  }
}

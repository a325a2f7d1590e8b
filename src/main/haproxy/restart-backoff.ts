// RestartBackoff: how long to wait before restarting a HAProxy that died. Capped exponential, so
// a config that cannot start (a port taken by another program) is retried ever more slowly but
// never given up, and reset once a run lasted long enough to count as healthy, so one crash a
// day always restarts at once. Time comes from the injected Clock.
import type { Clock } from '../core/clock.js';

export interface RestartBackoffOptions {
  /** Delay before the first restart. @default 500 */
  readonly initialMs?: number;
  /** Upper bound of the delay. @default 30_000 */
  readonly maxMs?: number;
  /** Growth per consecutive failure. @default 2 */
  readonly factor?: number;
  /** A run at least this long resets the delay to `initialMs`. @default 60_000 */
  readonly resetAfterMs?: number;
}

export class RestartBackoff {
  readonly #clock: Clock;
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #factor: number;
  readonly #resetAfterMs: number;
  /** Consecutive short runs; 0 after a healthy one. */
  #failures = 0;
  #runStartedAt: number | undefined;

  constructor(clock: Clock, options: RestartBackoffOptions = {}) {
    this.#clock = clock;
    this.#initialMs = positive('initialMs', options.initialMs ?? 500);
    this.#maxMs = positive('maxMs', options.maxMs ?? 30_000);
    this.#factor = positive('factor', options.factor ?? 2);
    this.#resetAfterMs = positive('resetAfterMs', options.resetAfterMs ?? 60_000);
    if (this.#maxMs < this.#initialMs) throw new TypeError(`maxMs (${this.#maxMs}) must not be below initialMs (${this.#initialMs})`);
  }

  /** Call when a run starts (the process came up). */
  started(): void {
    this.#runStartedAt = this.#clock.monotonic();
  }

  /** Call when the process died or failed to start; returns the delay before the next attempt. */
  nextDelay(): number {
    const ranFor = this.#runStartedAt === undefined ? 0 : this.#clock.monotonic() - this.#runStartedAt;
    this.#runStartedAt = undefined;
    if (ranFor >= this.#resetAfterMs) this.#failures = 0;
    const delay = Math.min(this.#maxMs, this.#initialMs * this.#factor ** this.#failures);
    this.#failures++;
    return delay;
  }

  /** Consecutive attempts since the last healthy run. */
  get failures(): number {
    return this.#failures;
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`RestartBackoff ${name} must be a positive number, got ${String(value)}`);
  return value;
}

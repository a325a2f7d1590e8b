// Backoff: how long to wait before reconnecting to the API server after a list or watch failed.
// Capped exponential with jitter, so a down or overloaded API server is never hammered in a hot
// loop, and a fleet of replicas that lost it at the same instant does not come back in lockstep.
// It resets once a connection stayed healthy for a while, so a watch dropped after hours of
// service reconnects at once. The delay rule is a pure function; the class adds the clock.
import type { Clock } from '../../core/clock.js';

export interface BackoffOptions {
  /** Delay before the first retry. @default 100 */
  readonly initialMs?: number;
  /** Upper bound of every delay. @default 30_000 */
  readonly maxMs?: number;
  /** Growth per consecutive failure. @default 2 */
  readonly factor?: number;
  /**
   * Share of each delay removed at random: the delay lies in `[base * (1 - jitter), base]`, so
   * it never exceeds the cap. @default 0.2
   */
  readonly jitter?: number;
  /** A connection up at least this long resets the delay to `initialMs`. @default 10_000 */
  readonly healthyAfterMs?: number;
  /** A number in [0, 1): tests pass a fixed one. @default Math.random */
  readonly random?: () => number;
}

export type DelayRule = Required<Pick<BackoffOptions, 'initialMs' | 'maxMs' | 'factor' | 'jitter'>>;

/** The delay before retry number `attempt` (0-based), for a `random` draw in [0, 1). */
export function backoffDelay(attempt: number, rule: DelayRule, random: number): number {
  // `factor ** attempt` overflows to Infinity long after the cap is reached; min() absorbs it.
  const base = Math.min(rule.maxMs, rule.initialMs * rule.factor ** attempt);
  return Math.round(base * (1 - rule.jitter * random));
}

export class Backoff {
  readonly #clock: Clock;
  readonly #rule: DelayRule;
  readonly #healthyAfterMs: number;
  readonly #random: () => number;
  /** Failures since the last reset; the exponent of the next delay. */
  #attempts = 0;
  /** When the current connection came up (monotonic), while one is up. */
  #healthySince: number | undefined;

  constructor(clock: Clock, options: BackoffOptions = {}) {
    this.#clock = clock;
    this.#rule = {
      initialMs: positive('initialMs', options.initialMs ?? 100),
      maxMs: positive('maxMs', options.maxMs ?? 30_000),
      factor: positive('factor', options.factor ?? 2),
      jitter: options.jitter ?? 0.2,
    };
    if (!(this.#rule.jitter >= 0 && this.#rule.jitter < 1)) throw new TypeError(`Backoff jitter must be in [0, 1), got ${String(options.jitter)}`);
    if (this.#rule.factor < 1) throw new TypeError(`Backoff factor must be at least 1, got ${String(options.factor)}`);
    if (this.#rule.maxMs < this.#rule.initialMs) throw new TypeError(`Backoff maxMs (${this.#rule.maxMs}) must not be below initialMs (${this.#rule.initialMs})`);
    this.#healthyAfterMs = positive('healthyAfterMs', options.healthyAfterMs ?? 10_000);
    this.#random = options.random ?? Math.random;
  }

  /** A failure happened: the delay before the next attempt. Each call grows the next one. */
  next(): number {
    const since = this.#healthySince;
    this.#healthySince = undefined;
    if (since !== undefined && this.#clock.monotonic() - since >= this.#healthyAfterMs) this.#attempts = 0;
    const delay = backoffDelay(this.#attempts, this.#rule, this.#random());
    this.#attempts++;
    return delay;
  }

  /** A connection came up. Should it last `healthyAfterMs`, the next failure starts over. */
  connected(): void {
    this.#healthySince = this.#clock.monotonic();
  }

  /** Starts over at `initialMs`. */
  reset(): void {
    this.#attempts = 0;
    this.#healthySince = undefined;
  }

  /** Failures since the last reset. */
  get attempts(): number {
    return this.#attempts;
  }
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`Backoff ${name} must be a positive number, got ${String(value)}`);
  return value;
}

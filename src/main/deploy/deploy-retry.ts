// DeployRetry: when an instance's failed deployment is tried again. Capped exponential backoff
// with jitter (instances that failed together do not retry in lockstep), reset by a success; one
// timer at a time, the newest failure's. Time comes from the injected Clock.
import type { Clock, TimerHandle } from '../core/clock.js';

/** The first delay doubles per failure up to `maxMs`, drawn from [delay × (1 − jitter), delay]. */
export interface RetryOptions {
  /** @default 500 */ readonly initialMs?: number;
  /** @default 30_000 */ readonly maxMs?: number;
  /** @default 0.5 */ readonly jitter?: number;
  /** @default Math.random */ readonly random?: () => number;
}

export class DeployRetry {
  readonly #clock: Clock;
  readonly #options: Required<RetryOptions>;
  #failures = 0;
  #timer: TimerHandle | undefined;

  constructor(clock: Clock, options: RetryOptions) {
    this.#clock = clock;
    this.#options = { initialMs: 500, maxMs: 30_000, jitter: 0.5, random: Math.random, ...options };
    const { initialMs, maxMs, jitter } = this.#options;
    if (!(initialMs > 0 && maxMs >= initialMs && jitter >= 0 && jitter < 1)) throw new TypeError(`retry needs 0 < initialMs <= maxMs and 0 <= jitter < 1, got ${JSON.stringify({ initialMs, maxMs, jitter })}`);
  }

  get failures(): number {
    return this.#failures;
  }

  /** A deployment failed: `retry` runs after the next delay (replacing a retry already armed). */
  failed(retry: () => void): void {
    const { initialMs, maxMs, jitter, random } = this.#options;
    const delay = Math.min(maxMs, initialMs * 2 ** Math.min(this.#failures, 30)) * (1 - jitter * random());
    this.#failures++;
    this.cancel();
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      retry();
    }, delay, { unref: true });
  }

  succeeded(): void {
    this.#failures = 0;
  }

  cancel(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

// TokenBucket: paces writes to an API server. It holds up to `burst` tokens and gains `ratePerSecond`
// of them per second (on the injected clock's monotonic time); a write takes one. `wait(signal)`
// resolves once a token was taken, so a loop of writes never runs faster than the rate, however
// much work is queued.
import { sleep, type Clock } from './clock.js';

export interface TokenBucketOptions {
  /** Tokens gained per second. */
  readonly ratePerSecond: number;
  /** Most tokens held (and so the largest burst). @default max(1, ratePerSecond) */
  readonly burst?: number;
}

export class TokenBucket {
  readonly #clock: Clock;
  readonly #rate: number;
  readonly #burst: number;
  #tokens: number;
  #at: number;

  constructor(clock: Clock, options: TokenBucketOptions) {
    if (!Number.isFinite(options.ratePerSecond) || options.ratePerSecond <= 0) throw new TypeError(`a token bucket's rate must be a positive number, got ${String(options.ratePerSecond)}`);
    const burst = options.burst ?? Math.max(1, options.ratePerSecond);
    if (!Number.isFinite(burst) || burst < 1) throw new TypeError(`a token bucket's burst must be at least 1, got ${String(options.burst)}`);
    this.#clock = clock;
    this.#rate = options.ratePerSecond;
    this.#burst = burst;
    this.#tokens = burst;
    this.#at = clock.monotonic();
  }

  /** Takes a token if one is there; never waits. */
  tryTake(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Milliseconds until a token is there (0: now). */
  delayMs(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : Math.ceil(((1 - this.#tokens) / this.#rate) * 1000);
  }

  /** Resolves once a token was taken; rejects with the signal's reason when it aborts first. */
  async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      if (this.tryTake()) return;
      await sleep(this.#clock, this.delayMs(), signal);
    }
  }

  #refill(): void {
    const now = this.#clock.monotonic();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) / 1000) * this.#rate);
    this.#at = now;
  }
}

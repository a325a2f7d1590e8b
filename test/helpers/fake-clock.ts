// A fake Clock for tests: time moves only when the test advances it, and due timers run in
// order of their due time (then of their creation), so debounce, pacing, leases and timeouts are
// driven step by step without sleeping.
import type { Clock, TimerHandle } from '../../src/main/core/clock.js';

interface Timer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #origin: number;
  #nextId = 1;
  readonly #timers = new Map<number, Timer>();

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
    this.#origin = start;
  }

  now(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#now - this.#origin;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { id, due: this.#now + Math.max(0, ms), callback });
    return { id };
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle !== undefined) this.#timers.delete((handle as { id: number }).id);
  }

  /** Timers not yet run or cleared. */
  get pending(): number {
    return this.#timers.size;
  }

  /** When the next timer is due, or undefined when none is set. */
  get nextDue(): number | undefined {
    return this.#next()?.due;
  }

  /**
   * Moves time forward by `ms`, running every timer that falls due on the way at its due time.
   * Between timers it lets queued promise continuations run, so async code that a timer wakes
   * up can set its next timer before time moves on.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await settle();
      const next = this.#next();
      if (next === undefined || next.due > target) break;
      this.#timers.delete(next.id);
      this.#now = Math.max(this.#now, next.due);
      next.callback();
    }
    this.#now = target;
    await settle();
  }

  /** Runs timers until none is left (or `limit` have run), advancing time to each. */
  async runAll(limit = 10_000): Promise<void> {
    for (let i = 0; i < limit; i++) {
      await settle();
      const next = this.#next();
      if (next === undefined) return;
      await this.advance(next.due - this.#now);
    }
    throw new Error(`FakeClock.runAll: more than ${limit} timers ran; a timer keeps rescheduling itself`);
  }

  #next(): Timer | undefined {
    let best: Timer | undefined;
    for (const timer of this.#timers.values()) {
      if (best === undefined || timer.due < best.due || (timer.due === best.due && timer.id < best.id)) best = timer;
    }
    return best;
  }
}

async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}

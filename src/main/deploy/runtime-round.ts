// RuntimeRound: the runtime changes in flight across the instances of one Deployer. A runtime
// change goes to every instance at once; the files behind it (FileSync) are the leader's next
// main-thread work for that instance (a remote target hashes and encodes the changed texts, a local
// one writes them). Started as soon as the FIRST instance answers, that work would sit between the
// other instances' answers and their reading, so the last instance's change would count as applied
// only after it. So files wait until no runtime change is in flight, but never longer than
// `limitMs`: a slow or unreachable instance holds the others' files (and so their next reload)
// for at most that long, never for its own timeout.
import type { Clock } from '../core/clock.js';

/** The longest files wait behind runtime changes in flight on other instances. */
export const ROUND_LIMIT_MS = 250;

export class RuntimeRound {
  readonly #clock: Clock;
  readonly #limitMs: number;
  #inFlight = 0;
  readonly #waiting = new Set<() => void>();

  constructor(clock: Clock, limitMs = ROUND_LIMIT_MS) {
    this.#clock = clock;
    this.#limitMs = limitMs;
  }

  /** Runs one instance's runtime change as part of the round. */
  async run<T>(apply: () => Promise<T>): Promise<T> {
    this.#inFlight++;
    try {
      return await apply();
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) for (const wake of [...this.#waiting]) wake();
    }
  }

  /** Resolves once no runtime change is in flight, or after `limitMs`. Never rejects. */
  quiet(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        this.#clock.clearTimeout(timer);
        this.#waiting.delete(wake);
        resolve();
      };
      const timer = this.#clock.setTimeout(wake, this.#limitMs, { unref: true });
      this.#waiting.add(wake);
    });
  }
}

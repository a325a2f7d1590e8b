// ConcurrencyLimit: at most `limit` tasks at once, the rest wait in arrival order. The fleet's
// agent clients share one, so `--agent-concurrency` bounds the applies in flight across instances
// while each instance still moves on its own.
export class ConcurrencyLimit {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError(`the concurrency limit must be a positive integer, got ${String(limit)}`);
    this.#limit = limit;
  }

  get running(): number {
    return this.#running;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running++;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      // The slot passes straight to the next task: `#running` does not change.
      if (next !== undefined) next();
      else this.#running--;
    }
  }
}

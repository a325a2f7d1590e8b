// PacedStatusWriter: the loop every status writer of the controller runs. Keys wait in a queue
// (each once, in order); for each, the owner says what the object should hold (`wanted`, or
// undefined when it holds it already), and the write goes out through the status subresource,
// one object at a time, paced by a token bucket, so that a new leader over 10,000 objects
// converges at the bucket's rate. A refused write (403) is warned about once per writer, naming
// the missing permission; failed writes are retried with backoff after the others queued
// meanwhile; a 404 (the object is gone) or a 400/422 (refused as invalid) is dropped. Nothing
// here ever waits for or blocks a render. The owners: IngressStatusWriter, GatewayStatusWriter.
import type { Logger } from 'pino';
import { deferred, type Deferred } from '../core/async.js';
import { sleep, type Clock } from '../core/clock.js';
import type { TokenBucket } from '../core/token-bucket.js';
import { Backoff, type BackoffOptions } from '../sources/kubernetes/backoff.js';

export interface StatusWriterStats {
  readonly writes: number;
  readonly failures: number;
  readonly forbidden: number;
  readonly queued: number;
}

export type SendOutcome = 'ok' | 'retry' | 'dropped';

export interface PacedStatusWriterOptions<T> {
  /** The kind written, for log lines (`Ingress`). */
  readonly what: string;
  /** The log field naming the object (`ingress`). */
  readonly field: string;
  /** What the 403 warning says is missing (`ingresses/status (networking.k8s.io)`). */
  readonly permission: string;
  /** What `key` should hold now, or undefined when nothing is to be written. */
  readonly wanted: (key: string) => T | undefined;
  /** Writes `value` to `key`; resolves with the HTTP status, rejects when the server could not be reached. */
  readonly send: (key: string, value: T, signal: AbortSignal) => Promise<number>;
  /** A write of `value` to `key` succeeded. */
  readonly written: (key: string, value: T) => void;
  /** The object is gone (404). */
  readonly gone: (key: string) => void;
  readonly bucket: TokenBucket;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Retry pacing of failed writes. @default 500 ms doubling to 30 s */
  readonly backoff?: BackoffOptions;
}

export class PacedStatusWriter<T> {
  readonly #options: PacedStatusWriterOptions<T>;
  readonly #backoff: Backoff;
  /** Keys to look at, in order. */
  readonly #queue = new Set<string>();
  #wake: Deferred<void> = deferred<void>();
  #warnedForbidden = false;
  #writes = 0;
  #failures = 0;
  #forbidden = 0;

  constructor(options: PacedStatusWriterOptions<T>) {
    this.#options = options;
    this.#backoff = new Backoff(options.clock, { initialMs: 500, maxMs: 30_000, ...options.backoff });
  }

  get stats(): StatusWriterStats {
    return { writes: this.#writes, failures: this.#failures, forbidden: this.#forbidden, queued: this.#queue.size };
  }

  /** Queues `key` to be looked at (once, however often it is queued before). */
  add(key: string): void {
    this.#queue.add(key);
  }

  /** Wakes the loop once keys were added. */
  wake(): void {
    this.#wake.resolve();
  }

  /** Writes until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const onAbort = (): void => this.#wake.resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const key = this.#queue.values().next().value;
        if (key === undefined) {
          this.#wake = deferred<void>();
          if (signal.aborted) return;
          await this.#wake.promise;
          continue;
        }
        this.#queue.delete(key);
        const wanted = this.#options.wanted(key);
        if (wanted === undefined) continue;
        try {
          await this.#options.bucket.take(signal);
          await this.#write(key, wanted, signal);
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** One paced write outside the loop (clearing on shutdown); rejects when `signal` aborts. */
  async writeNow(key: string, value: T, signal: AbortSignal): Promise<SendOutcome> {
    await this.#options.bucket.take(signal);
    return this.#send(key, value, signal);
  }

  async #write(key: string, value: T, signal: AbortSignal): Promise<void> {
    const outcome = await this.#send(key, value, signal);
    if (outcome === 'ok') {
      this.#backoff.reset();
      return;
    }
    if (outcome === 'dropped') return;
    // Retried after the others queued meanwhile, once the backoff delay has passed.
    this.#queue.add(key);
    await sleep(this.#options.clock, this.#backoff.next(), signal);
  }

  async #send(key: string, value: T, signal: AbortSignal): Promise<SendOutcome> {
    const { what, field, logger } = this.#options;
    let status: number;
    try {
      status = await this.#options.send(key, value, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      this.#failures++;
      logger.warn({ [field]: key, err: error }, `${what} status write failed; retrying`);
      return 'retry';
    }
    if (status >= 200 && status < 300) {
      this.#writes++;
      this.#options.written(key, value);
      return 'ok';
    }
    if (status === 404) {
      this.#options.gone(key);
      return 'dropped';
    }
    this.#failures++;
    if (status === 403) {
      this.#forbidden++;
      if (!this.#warnedForbidden) {
        this.#warnedForbidden = true;
        logger.warn({ [field]: key }, `the API server refuses ${what} status writes (403): the controller needs permission to update ${this.#options.permission}; retrying with backoff`);
      }
      return 'retry';
    }
    if (status === 400 || status === 422) {
      logger.warn({ [field]: key, status }, `the API server refused a ${what} status write as invalid; not retried`);
      return 'dropped';
    }
    // 409: the object changed since it was read; the next look reads it again.
    if (status === 409) logger.debug({ [field]: key }, `${what} status write conflicted with a newer version; retrying`);
    else logger.warn({ [field]: key, status }, `${what} status write failed; retrying`);
    return 'retry';
  }
}

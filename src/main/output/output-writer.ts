// OutputWriter (leader only): keeps an output directory current with the newest render, for
// `run` without `--haproxy` (another process or a sidecar runs HAProxy on the files). Renders
// that arrive while a write runs are coalesced: only the newest is written next. A failed write
// (a full disk, a directory made read-only) is retried with backoff until it succeeds or a newer
// render replaces it. Followers never write: the component runs only in a leadership term.
// Subscribes (in start, leader-only): template.rendered
// Publishes: nothing (logs each write)
import type { Logger } from 'pino';
import type { EventBus } from '../bus/event-bus.js';
import { deferred, type Deferred } from '../core/async.js';
import { sleep, type Clock } from '../core/clock.js';
import type { ControllerEvent, EventOf } from '../events/events.js';
import type { OutputDirectory } from './output-directory.js';

export interface OutputWriterOptions {
  readonly bus: EventBus<ControllerEvent>;
  readonly directory: OutputDirectory;
  readonly clock: Clock;
  readonly logger: Logger;
  /** First retry delay after a failed write; doubles up to 30 s. @default 500 */
  readonly retryMs?: number;
}

const MAX_RETRY_MS = 30_000;

export class OutputWriter {
  readonly #options: OutputWriterOptions;
  readonly #logger: Logger;
  #ready: Deferred<void> = deferred<void>();
  #written = false;
  #writes = 0;
  #failures = 0;
  /** Checksum of the render on disk. */
  #checksum: string | undefined;

  constructor(options: OutputWriterOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'output-writer' });
  }

  /** True once a render has been written in the current or an earlier term. */
  get ready(): boolean {
    return this.#written;
  }

  get stats(): { writes: number; failures: number } {
    return { writes: this.#writes, failures: this.#failures };
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  async start(term: AbortSignal): Promise<void> {
    const subscription = this.#options.bus.subscribe('output-writer', {
      types: ['template.rendered'],
      leaderOnly: true,
      bufferSize: 4,
      // Only the newest render matters: a queued one is replaced, never piled up.
      merge: () => 'replace',
    });
    this.#ready.resolve();
    try {
      for (;;) {
        const render = await subscription.next(term);
        if (render === undefined) return;
        await this.#writeWithRetry(render, subscription, term);
      }
    } finally {
      subscription.close();
      this.#ready = deferred<void>();
    }
  }

  async #writeWithRetry(render: EventOf<'template.rendered'>, subscription: { readonly depth: number }, term: AbortSignal): Promise<void> {
    let delay = this.#options.retryMs ?? 500;
    for (;;) {
      if (term.aborted) return;
      if (render.checksum === this.#checksum) return;
      const started = this.#options.clock.monotonic();
      try {
        const summary = await this.#options.directory.write(render.haproxyConfig, render.auxiliaryFiles);
        this.#checksum = render.checksum;
        this.#written = true;
        this.#writes++;
        this.#logger.info(
          { correlationId: render.correlationId, renderId: render.renderId, storeVersion: render.storeVersion, ...summary, ms: Math.round(this.#options.clock.monotonic() - started) },
          'output written',
        );
        return;
      } catch (error) {
        this.#failures++;
        this.#logger.error({ err: error, correlationId: render.correlationId, retryInMs: delay }, 'writing the output failed; retrying');
      }
      // A newer render will be written instead; it retries on its own.
      if (subscription.depth > 0) return;
      try {
        await sleep(this.#options.clock, delay, term);
      } catch {
        return;
      }
      delay = Math.min(MAX_RETRY_MS, delay * 2);
    }
  }
}

// RenderGate (leader only): HAProxy's own verdict (`haproxy -c`, in a child process) on the newest
// render, one check at a time; renders arriving meanwhile replace each other. A check past
// `timeoutMs`, or one that cannot run, is unknown: neither passed nor refused.
// Subscribes (in start, leader-only): template.rendered
// Publishes: rendergate.completed {renderId, ok, refused, newest, message, durationMs}
import type { Logger } from 'pino';
import type { EventBus } from '../bus/event-bus.js';
import { deferred, raceAbort } from '../core/async.js';
import { systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import { newEvent, type ControllerEvent, type EventOf } from '../events/events.js';
import type { OutputPaths } from '../../worker/protocol.js';
import { haproxyRenderChecker, type HaproxyVerdict, type RenderChecker } from './render-checker.js';

export interface RenderGateOptions {
  readonly bus: EventBus<ControllerEvent>;
  /**
   * The directories the renders' configs name (`outputPathsIn(out)`): the default checker
   * rewrites them to a private copy. Needed unless `checker` is given.
   */
  readonly directories?: OutputPaths;
  /** Replaces `haproxy -c` (tests, or a remote checker). @default haproxyRenderChecker({ directories }) */
  readonly checker?: RenderChecker;
  /** A check running longer is aborted and reported as unknown. @default 30000 */
  readonly timeoutMs?: number;
  /** Longest message published; HAProxy's alerts come first. @default 8192 */
  readonly maxMessageBytes?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export interface RenderGateStats {
  readonly passed: number;
  readonly refused: number;
  /** Checks that could not run or timed out. */
  readonly unknown: number;
}

/**
 * Newest wins:
 *   render A ──check A──────────────> verdict A (newest: false: B arrived) ──check B──> verdict B
 *   render B ──┘ (queued; a render C would replace it)
 */
export class RenderGate {
  readonly #bus: EventBus<ControllerEvent>;
  readonly #checker: RenderChecker;
  readonly #timeoutMs: number;
  readonly #maxMessageBytes: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #ready = deferred<void>();
  #passed = 0;
  #refused = 0;
  #unknown = 0;

  constructor(options: RenderGateOptions) {
    this.#bus = options.bus;
    if (options.checker === undefined && options.directories === undefined) throw new TypeError('RenderGate needs `directories` (or a `checker`)');
    this.#checker = options.checker ?? haproxyRenderChecker({ directories: options.directories as OutputPaths });
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    if (!Number.isFinite(this.#timeoutMs) || this.#timeoutMs <= 0) throw new TypeError(`timeoutMs must be a positive number, got ${String(options.timeoutMs)}`);
    this.#maxMessageBytes = options.maxMessageBytes ?? 8192;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'render-gate' });
  }

  get stats(): RenderGateStats {
    return { passed: this.#passed, refused: this.#refused, unknown: this.#unknown };
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  /** One leadership term: checks renders until `term` aborts; a check in flight is aborted and not reported. */
  async start(term: AbortSignal): Promise<void> {
    const queue = this.#bus.subscribe('render-gate', {
      types: ['template.rendered'],
      leaderOnly: true,
      bufferSize: 4,
      // Newest wins: a render waiting for its check is replaced by a newer one.
      merge: () => 'replace',
    });
    this.#ready.resolve();
    try {
      for (;;) {
        const render = await queue.next(term);
        if (render === undefined) return;
        const started = this.#clock.monotonic();
        const verdict = await this.#check(render, term);
        if (term.aborted) return;
        this.#publish(render, verdict, queue.depth === 0, this.#clock.monotonic() - started);
      }
    } finally {
      queue.close();
      this.#ready = deferred<void>();
    }
  }

  async #check(render: EventOf<'template.rendered'>, term: AbortSignal): Promise<HaproxyVerdict> {
    const controller = new AbortController();
    const onTerm = (): void => controller.abort(term.reason);
    term.addEventListener('abort', onTerm, { once: true });
    let timedOut = false;
    const timer = this.#clock.setTimeout(
      () => {
        timedOut = true;
        controller.abort(new Error('timeout'));
      },
      this.#timeoutMs,
      { unref: true },
    );
    try {
      // Raced, so a checker that ignores the signal cannot hold the gate past its timeout.
      return await raceAbort(this.#checker(render, controller.signal), controller.signal);
    } catch (error) {
      if (timedOut) return { ok: false, refused: false, message: `haproxy -c did not finish within ${this.#timeoutMs} ms` };
      return { ok: false, refused: false, message: `the check could not run: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      this.#clock.clearTimeout(timer);
      term.removeEventListener('abort', onTerm);
    }
  }

  #publish(render: EventOf<'template.rendered'>, verdict: HaproxyVerdict, newest: boolean, durationMs: number): void {
    const ok = verdict.ok;
    const refused = !ok && verdict.refused;
    const message = truncate(refused ? refusalMessage(verdict.message) : verdict.message, this.#maxMessageBytes);
    if (ok) this.#passed++;
    else if (refused) this.#refused++;
    else this.#unknown++;
    const fields = { renderId: render.renderId, newest, durationMs: Math.round(durationMs) };
    if (refused) this.#logger.warn({ ...fields, message }, 'haproxy -c refused the render');
    else if (!ok) this.#logger.warn({ ...fields, message }, 'haproxy -c could not judge the render');
    else this.#logger.debug(fields, 'haproxy -c passed the render');
    this.#bus.publish(newEvent('rendergate.completed', { renderId: render.renderId, ok, refused, newest, message, durationMs }, render, this.#clock));
  }
}

/** HAProxy's `[ALERT]` lines (what it refused, and why), or all of its output when it printed none. */
export function refusalMessage(output: string): string {
  const alerts = output.split('\n').filter((line) => line.includes('[ALERT]'));
  return alerts.length === 0 ? output.trim() : alerts.map((line) => line.trim()).join('\n');
}

function truncate(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  return `${Buffer.from(text).subarray(0, maxBytes).toString('utf8')}\n... (truncated)`;
}

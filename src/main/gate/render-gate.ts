// RenderGate (leader only): HAProxy's own verdict (`haproxy -c`, run by a helper process that
// checks only renders whose structure changed: check-helper.ts) on the newest render, one check at
// a time; renders arriving meanwhile replace each other. A check past
// `timeoutMs` is a refusal; one that cannot run at all is unknown: neither passed nor refused.
// With `exclusions`, a refusal costs only the objects behind it: HAProxy's `[file:line]` messages
// are traced back to objects through the render's origin index (or, when they name none, found by
// bisection over namespaces with `rerender`); those objects are taken out of renders while they
// stay at the version refused, and a render without them is asked for (refusal-resolver.ts).
// A render that replaced a waiting one it patches is checked with the two patches chained
// (patch-chain.ts), so the checker still gets a patch of the render it checked before.
// Subscribes (in start, leader-only): template.rendered
// Publishes: rendergate.completed {renderId, ok, refused, newest, message, durationMs, excluded?},
//            then reconciliation.triggered {reason: 'gate_refusal'} when it took objects out
import type { Logger } from 'pino';
import type { EventBus } from '../bus/event-bus.js';
import { deferred, raceAbort } from '../core/async.js';
import { systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import { newEvent, type ControllerEvent, type EventOf } from '../events/events.js';
import type { OutputPaths, RenderExclusions, RenderPatch } from '../../worker/protocol.js';
import { chainPatches } from '../deploy/patch-chain.js';
import type { ObjectExclusions } from './object-exclusions.js';
import { resolveRefusal, type GateRender } from './refusal-resolver.js';
import { CheckHelper, type CheckHelperStats } from './check-helper.js';
import type { HaproxyVerdict, RenderChecker } from './render-checker.js';

/** The trigger reason of the render asked for after the gate took objects out. */
export const GATE_REFUSAL = 'gate_refusal';

type Verdict = HaproxyVerdict & { readonly timedOut?: boolean };

export interface RenderGateOptions {
  readonly bus: EventBus<ControllerEvent>;
  /**
   * The directories the renders' configs name (`outputPathsIn(out)`): the default checker
   * rewrites them to a private copy. Needed unless `checker` is given.
   */
  readonly directories?: OutputPaths;
  /**
   * Replaces `haproxy -c` (tests, or a remote checker). @default a CheckHelper's checker: a helper
   * process that runs haproxy -c on each render whose structure changed (`checkHelperStats`).
   */
  readonly checker?: RenderChecker;
  /** A check running longer is aborted and counts as a refusal. @default 30000 */
  readonly timeoutMs?: number;
  /** Longest message published; HAProxy's alerts come first. @default 8192 */
  readonly maxMessageBytes?: number;
  /**
   * Where objects behind a refusal are taken out (the Coordinator's). Without it a refusal holds
   * every change until a render passes.
   */
  readonly exclusions?: ObjectExclusions;
  /** Renders the current stores with these exclusions: the bisection's trial renders. Without it, only traced lines count. */
  readonly rerender?: (exclusions: RenderExclusions, signal: AbortSignal) => Promise<GateRender>;
  /** @default systemClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export interface RenderGateStats {
  readonly passed: number;
  readonly refused: number;
  /** Checks that could not run. */
  readonly unknown: number;
  /** Objects taken out of renders after refusals. */
  readonly excluded: number;
  /** Trial renders checked while bisecting. */
  readonly trialChecks: number;
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
  readonly #exclusions: ObjectExclusions | undefined;
  readonly #rerender: RenderGateOptions['rerender'];
  readonly #helper: CheckHelper | undefined;
  #ready = deferred<void>();
  #passed = 0;
  #refused = 0;
  #unknown = 0;
  #excluded = 0;
  #trialChecks = 0;

  constructor(options: RenderGateOptions) {
    this.#bus = options.bus;
    if (options.checker === undefined && options.directories === undefined) throw new TypeError('RenderGate needs `directories` (or a `checker`)');
    this.#helper = options.checker === undefined ? new CheckHelper({ directories: options.directories as OutputPaths }) : undefined;
    this.#checker = options.checker ?? (this.#helper as CheckHelper).checker;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    if (!Number.isFinite(this.#timeoutMs) || this.#timeoutMs <= 0) throw new TypeError(`timeoutMs must be a positive number, got ${String(options.timeoutMs)}`);
    this.#maxMessageBytes = options.maxMessageBytes ?? 8192;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'render-gate' });
    this.#exclusions = options.exclusions;
    this.#rerender = options.rerender;
  }

  get stats(): RenderGateStats {
    return { passed: this.#passed, refused: this.#refused, unknown: this.#unknown, excluded: this.#excluded, trialChecks: this.#trialChecks };
  }

  /** The default checker's counts (checks, skipped, helper processes started); undefined with a `checker` of one's own. */
  get checkHelperStats(): CheckHelperStats | undefined {
    return this.#helper?.stats;
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  /** One leadership term: checks renders until `term` aborts; a check in flight is aborted and not reported. */
  async start(term: AbortSignal): Promise<void> {
    // By render: its patch chained onto those of the renders it replaced in the queue.
    const chained = new WeakMap<EventOf<'template.rendered'>, RenderPatch>();
    const queue = this.#bus.subscribe('render-gate', {
      types: ['template.rendered'],
      leaderOnly: true,
      bufferSize: 4,
      // Newest wins: a render waiting for its check is replaced by a newer one.
      merge: (waiting, render) => {
        const before = chained.get(waiting) ?? waiting.patch;
        const patch = before === undefined || render.patch === undefined ? undefined : chainPatches(before, waiting.renderId, render.patch);
        if (patch !== undefined) chained.set(render, patch);
        return 'replace';
      },
    });
    this.#ready.resolve();
    try {
      for (;;) {
        const render = await queue.next(term);
        if (render === undefined) return;
        const started = this.#clock.monotonic();
        const patch = chained.get(render);
        const verdict = await this.#check(patch === undefined ? render : { ...render, patch }, term);
        if (term.aborted) return;
        const { excluded, again } = verdict.refused ? await this.#exclude(render, verdict, queue.depth === 0, term) : { excluded: 0, again: false };
        if (term.aborted) return;
        this.#publish(render, verdict, queue.depth === 0, this.#clock.monotonic() - started, excluded);
        // After the verdict, so the Coordinator has rolled its baseline back when it renders again.
        if (again) this.#bus.publish(newEvent('reconciliation.triggered', { reason: GATE_REFUSAL, coalescible: false }, render, this.#clock));
      }
    } finally {
      queue.close();
      // The helper process lives for one term; the next term starts another.
      this.#helper?.close();
      this.#ready = deferred<void>();
    }
  }

  /**
   * Takes the objects behind a refusal out of renders: `excluded` is how many were not out
   * already, `again` whether to ask for a new render (objects were taken out, or a timeout did not
   * happen again). Bisection (trial renders) runs only for the newest render: a newer one is
   * judged next anyway.
   */
  async #exclude(render: EventOf<'template.rendered'>, verdict: Verdict, newest: boolean, term: AbortSignal): Promise<{ excluded: number; again: boolean }> {
    const exclusions = this.#exclusions;
    if (exclusions === undefined) return { excluded: 0, again: false };
    const rerender = newest ? this.#rerender : undefined;
    try {
      const round = await resolveRefusal(
        {
          render,
          message: verdict.message,
          timedOut: verdict.timedOut === true,
          exclusions: render.exclusions ?? { objects: [] },
          ...(rerender === undefined ? {} : { rerender, check: (trial: GateRender, signal: AbortSignal) => this.#check(trial, signal) }),
        },
        term,
      );
      this.#trialChecks += round.checks;
      const added = exclusions.add(round.exclusions);
      this.#excluded += added;
      for (const e of round.exclusions) {
        this.#logger.warn({ renderId: render.renderId, object: `${e.kind} ${e.namespace}/${e.name}`, method: round.method, reason: e.reason }, 'object taken out of renders: HAProxy refused what it produced');
      }
      if (round.method === 'transient') this.#logger.warn({ renderId: render.renderId }, 'haproxy -c timed out once and then passed; rendering again');
      else if (round.exclusions.length === 0) this.#logger.warn({ renderId: render.renderId, checks: round.checks }, 'the refusal names no object; every change is held until a render passes');
      return { excluded: added, again: added > 0 || round.method === 'transient' };
    } catch (error) {
      if (!term.aborted) this.#logger.warn({ err: error, renderId: render.renderId }, 'could not trace the refusal to objects');
      return { excluded: 0, again: false };
    }
  }

  async #check(render: GateRender, term: AbortSignal): Promise<Verdict> {
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
      // A config HAProxy cannot check in time is never deployed: a refusal, not "unknown".
      if (timedOut) return { ok: false, refused: true, timedOut: true, message: `haproxy -c did not finish within ${this.#timeoutMs} ms` };
      return { ok: false, refused: false, message: `the check could not run: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      this.#clock.clearTimeout(timer);
      term.removeEventListener('abort', onTerm);
    }
  }

  #publish(render: EventOf<'template.rendered'>, verdict: Verdict, newest: boolean, durationMs: number, excluded: number): void {
    const ok = verdict.ok;
    const refused = !ok && verdict.refused;
    const message = truncate(refused && verdict.timedOut !== true ? refusalMessage(verdict.message) : verdict.message, this.#maxMessageBytes);
    if (ok) this.#passed++;
    else if (refused) this.#refused++;
    else this.#unknown++;
    const fields = { renderId: render.renderId, newest, durationMs: Math.round(durationMs) };
    if (refused) this.#logger.warn({ ...fields, message }, 'haproxy -c refused the render');
    else if (!ok) this.#logger.warn({ ...fields, message }, 'haproxy -c could not judge the render');
    else this.#logger.debug(fields, 'haproxy -c passed the render');
    const completed = { renderId: render.renderId, ok, refused, newest, message, durationMs, ...(excluded > 0 ? { excluded } : {}) };
    this.#bus.publish(newEvent('rendergate.completed', completed, render, this.#clock));
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

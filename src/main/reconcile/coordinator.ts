// Coordinator (leader only): runs one reconciliation at a time, coalescing the triggers that
// arrive meanwhile, and calls its PipelineExecutor directly. Keeps the auxiliary baseline of the
// leadership term and settles it on the render gate's verdicts. With `exclusions`, each render
// also leaves out the objects the render gate took out (as data in the execute options).
// Subscribes (in start, leader-only): reconciliation.triggered, rendergate.completed
// Publishes: reconciliation.started -> template.rendered | reconciliation.failed
//            -> reconciliation.completed, all in the trigger's correlation;
//            reconciliation.triggered {reason: 'render_retry'} after a render failed through a
//            worker fault (crash, hang, out of memory), with capped exponential backoff, so the
//            newest store version is rendered even when no further change comes.
import type { Logger } from 'pino';
import type { RenderBaseline, RenderExclusions } from '../../worker/protocol.js';
import { deferred } from '../core/async.js';
import { systemClock, type Clock, type TimerHandle } from '../core/clock.js';
import { PipelineError } from '../core/errors.js';
import type { EventBus } from '../bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventOf } from '../events/events.js';
import { defaultLogger } from '../core/logger.js';
import { removedText } from '../core/patch-text.js';
import { mailboxDecision, type MailboxItem } from './mailbox.js';
import { readPipelineResult } from '../pipeline/result-check.js';
import { EMPTY_AUXILIARY_FILES, type CheckedPipelineResult, type PipelineExecutor, type Rejection } from '../pipeline/pipeline.js';
import type { StoreProvider } from '../stores/store-provider.js';

export interface CoordinatorOptions {
  readonly eventBus: EventBus<ControllerEvent>;
  readonly pipeline: PipelineExecutor;
  readonly storeProvider: StoreProvider;
  readonly logger?: Logger;
  /** Durations and event timestamps. @default systemClock */
  readonly clock?: Clock;
  /**
   * Mailbox capacity. With coalescing it only ever holds alternating triggers and verdicts.
   * @default 1000
   */
  readonly mailboxSize?: number;
  /** First retry after a render failed through a worker fault; doubles per failure. @default 1000 */
  readonly retryBaseMs?: number;
  /** @default 30000 */
  readonly retryMaxMs?: number;
  /**
   * The objects the render gate took out of renders (gate/object-exclusions.ts): each render is
   * given `current()`, then `settle` drops those the render no longer found at their version.
   */
  readonly exclusions?: {
    current(): RenderExclusions;
    settle(given: RenderExclusions, rejections: readonly Rejection[]): void;
  };
}

/** The trigger reason of a retry after a worker fault. */
export const RENDER_RETRY = 'render_retry';

export interface CoordinatorStats {
  readonly renders: number;
  readonly failures: number;
  /** Triggers that were merged into, or absorbed by, a queued trigger. */
  readonly coalesced: number;
  /** The most items the mailbox held when a render ended (coalescing keeps this at 1 for triggers). */
  readonly maxQueued: number;
}

interface PendingBaseline {
  readonly renderId: string;
  readonly baseline: RenderBaseline;
  /** UTF-8 bytes of the baseline's config. */
  readonly configBytes?: number;
}

export class Coordinator {
  readonly #bus: EventBus<ControllerEvent>;
  readonly #pipeline: PipelineExecutor;
  readonly #stores: StoreProvider;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #mailboxSize: number;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #exclusions: CoordinatorOptions['exclusions'];
  #retryDelayMs: number;
  #retryTimer: TimerHandle | undefined;
  #ready = deferred<void>();
  /** Counts `start` calls; a term that ends late must not reset a newer term's readiness. */
  #term = 0;
  #renders = 0;
  #failures = 0;
  #coalesced = 0;
  #maxQueued = 0;
  /** Baseline the fleet is confirmed to run in this term (undefined: nothing confirmed yet). */
  #confirmed: PendingBaseline | undefined;
  /** Newest successful render not yet judged by the gate; the next render reads it. */
  #pending: PendingBaseline | undefined;

  constructor(options: CoordinatorOptions) {
    this.#bus = options.eventBus;
    this.#pipeline = options.pipeline;
    this.#stores = options.storeProvider;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'coordinator' });
    this.#clock = options.clock ?? systemClock;
    this.#mailboxSize = options.mailboxSize ?? 1000;
    this.#retryBaseMs = options.retryBaseMs ?? 1000;
    this.#retryMaxMs = options.retryMaxMs ?? 30_000;
    this.#retryDelayMs = this.#retryBaseMs;
    this.#exclusions = options.exclusions;
  }

  get stats(): CoordinatorStats {
    return { renders: this.#renders, failures: this.#failures, coalesced: this.#coalesced, maxQueued: this.#maxQueued };
  }

  /** The baseline the next render will receive. */
  get baseline(): RenderBaseline {
    return (this.#pending ?? this.#confirmed)?.baseline ?? { auxiliaryFiles: EMPTY_AUXILIARY_FILES };
  }

  /** The confirmed baseline's render ID, if the gate has confirmed one in this term. */
  get confirmedRenderId(): string | undefined {
    return this.#confirmed?.renderId;
  }

  /** Resolves once the running (or next) `start` has subscribed. */
  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  /**
   * One leadership term: subscribes, reconciles until `signal` aborts, then unsubscribes.
   * Each term starts with a fresh baseline.
   */
  async start(signal: AbortSignal): Promise<void> {
    const term = ++this.#term;
    this.#confirmed = undefined;
    this.#pending = undefined;
    this.#retryDelayMs = this.#retryBaseMs;
    const mailbox = this.#bus.subscribe('coordinator', {
      types: ['reconciliation.triggered', 'rendergate.completed'],
      leaderOnly: true,
      bufferSize: this.#mailboxSize,
      merge: (last, incoming) => {
        const decision = mailboxDecision(last, incoming);
        if (decision !== 'append') this.#coalesced++;
        return decision;
      },
    });
    this.#ready.resolve();
    try {
      for (;;) {
        // The mailbox only fills while a render runs, so its depth here is the most it held since.
        this.#maxQueued = Math.max(this.#maxQueued, mailbox.depth);
        const item: MailboxItem | undefined = await mailbox.next(signal);
        if (item === undefined) return;
        if (item.type === 'reconciliation.triggered') {
          await this.#reconcile(item, signal);
        } else {
          this.#settleBaseline(item);
        }
      }
    } finally {
      this.#cancelRetry();
      mailbox.close();
      if (term === this.#term) this.#ready = deferred<void>();
    }
  }

  async #reconcile(trigger: EventOf<'reconciliation.triggered'>, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    // This render covers whatever a scheduled retry would have rendered.
    this.#cancelRetry();
    const started = this.#clock.monotonic();
    this.#bus.publish(newEvent('reconciliation.started', { trigger: trigger.reason }, trigger, this.#clock));
    let result: CheckedPipelineResult | undefined;
    let failure: PipelineError | undefined;
    const exclusions = this.#exclusions?.current();
    try {
      const options = exclusions === undefined || exclusions.objects.length === 0 ? { baseline: this.baseline } : { baseline: this.baseline, exclusions };
      const raw: unknown = await this.#pipeline.execute(signal, this.#stores, 'reconcile', options);
      if (raw === undefined || raw === null) failure = new PipelineError('render', 'the pipeline returned no result');
      else result = readPipelineResult(raw);
    } catch (error) {
      failure = error instanceof PipelineError ? error : new PipelineError('render', toError(error));
    }
    // Leadership lost mid-render: the result belongs to a term that is over.
    if (signal.aborted) {
      this.#logger.debug({ trigger: trigger.reason }, 'leadership lost during render; result discarded');
      return;
    }
    const durationMs = this.#clock.monotonic() - started;
    if (result !== undefined && failure === undefined) {
      this.#renders++;
      this.#retryDelayMs = this.#retryBaseMs;
      if (exclusions !== undefined) this.#exclusions?.settle(exclusions, result.rejections);
      const configBytes = configBytesOf(result, this.#pending ?? this.#confirmed);
      this.#pending = {
        renderId: result.renderId,
        baseline: { haproxyConfig: result.haproxyConfig, auxiliaryFiles: result.auxiliaryFiles },
        configBytes,
      };
      const aux = result.auxiliaryFiles;
      this.#bus.publish(
        newEvent(
          'template.rendered',
          {
            renderId: result.renderId,
            haproxyConfig: result.haproxyConfig,
            auxiliaryFiles: aux,
            checksum: result.checksum,
            configBytes,
            auxiliaryFileCount:
              Object.keys(aux.maps).length + Object.keys(aux.files).length + Object.keys(aux.certificates).length,
            durationMs,
            triggerReason: trigger.reason,
            coalescible: trigger.coalescible,
            storeVersion: result.storeVersion,
            rejectionCounts: countRejections(result.rejections),
            ...(result.origins === undefined ? {} : { origins: result.origins }),
            ...(exclusions === undefined || exclusions.objects.length === 0 ? {} : { exclusions }),
            rejections: result.rejections ?? [],
            ...(result.servedIngresses === undefined ? {} : { servedIngresses: result.servedIngresses }),
            ...(result.findings === undefined ? {} : { findings: result.findings }),
            ...(result.gatewayStatus === undefined ? {} : { gatewayStatus: result.gatewayStatus }),
            ...(result.patch === undefined ? {} : { patch: result.patch }),
          },
          trigger,
          this.#clock,
        ),
      );
      for (const warning of result.warnings) this.#logger.warn({ renderId: result.renderId }, warning);
    } else {
      this.#failures++;
      const error = failure as PipelineError;
      this.#logger.error({ phase: error.phase, subPhase: error.subPhase, trigger: trigger.reason }, error.message);
      // The same inputs fail the same way (a template or validation error) until something
      // changes; a worker fault may pass on another try.
      if (!error.terminal) this.#scheduleRetry(trigger, signal);
      this.#bus.publish(
        newEvent(
          'reconciliation.failed',
          {
            error: error.message,
            phase: error.phase,
            ...(error.subPhase === undefined ? {} : { subPhase: error.subPhase }),
            triggerReason: trigger.reason,
          },
          trigger,
          this.#clock,
        ),
      );
    }
    this.#bus.publish(
      newEvent(
        'reconciliation.completed',
        { outcome: failure === undefined ? 'success' : 'failure', durationMs, triggerReason: trigger.reason },
        trigger,
        this.#clock,
      ),
    );
  }

  #scheduleRetry(failed: EventOf<'reconciliation.triggered'>, signal: AbortSignal): void {
    const delayMs = this.#retryDelayMs;
    this.#retryDelayMs = Math.min(this.#retryMaxMs, delayMs * 2);
    this.#logger.info({ delayMs }, 'render failed through a worker fault; retrying');
    this.#retryTimer = this.#clock.setTimeout(() => {
      this.#retryTimer = undefined;
      if (signal.aborted) return;
      this.#bus.publish(newEvent('reconciliation.triggered', { reason: RENDER_RETRY, coalescible: true }, failed, this.#clock));
    }, delayMs);
  }

  #cancelRetry(): void {
    if (this.#retryTimer === undefined) return;
    this.#clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  #settleBaseline(verdict: EventOf<'rendergate.completed'>): void {
    // Only a verdict on the newest render speaks for what the fleet will run.
    if (!verdict.newest || this.#pending === undefined || verdict.renderId !== this.#pending.renderId) return;
    if (verdict.ok) {
      this.#confirmed = this.#pending;
      this.#pending = undefined;
    } else if (verdict.refused) {
      this.#logger.warn({ renderId: verdict.renderId, message: verdict.message }, 'render refused; baseline rolled back');
      this.#pending = undefined;
    }
    // Neither ok nor refused: the gate could not run; keep the pending baseline.
  }
}

/** Rejections by `<store kind>/<scope>`: fixed by the template set, never by object data. */
function countRejections(rejections: readonly Rejection[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of rejections) {
    const key = `${r.kind}/${r.scope}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * UTF-8 bytes of a result's config: for a patch of the previous render, its bytes and those of the
 * edits (no pass over the whole config); otherwise counted.
 */
function configBytesOf(result: CheckedPipelineResult, previous: PendingBaseline | undefined): number {
  const patched = result.patch !== undefined && result.patch.from === previous?.renderId;
  // A patch that leaves the config out of its edits has the same config as the previous render.
  const edits = patched ? (result.patch?.edits['config'] ?? []) : undefined;
  const before = previous?.baseline.haproxyConfig;
  if (edits === undefined || previous?.configBytes === undefined || before === undefined) return Buffer.byteLength(result.haproxyConfig);
  let bytes = previous.configBytes;
  const patch = result.patch as NonNullable<typeof result.patch>;
  edits.forEach((edit, i) => (bytes += Buffer.byteLength(edit.text) - Buffer.byteLength(removedText(patch, 'config', i, edit, before))));
  return bytes;
}

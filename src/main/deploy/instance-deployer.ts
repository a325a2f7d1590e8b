// InstanceDeployer: the Deployer's rules for ONE HAProxy instance behind one DeployTarget (the
// local HAProxy, or one agent of a fleet). The Deployer owns one per instance, feeds each the same
// renders and verdicts, and publishes what they report; an instance knows nothing of the bus or
// of the others, so a slow or failing one delays no one. With `retry`, a failed deployment is
// tried again after a capped, jittered backoff while no newer render replaces it.
import type { Logger } from 'pino';

import type { Clock } from '../core/clock.js';
import type { EventFields, EventOf } from '../events/events.js';
import { DeployRetry, type RetryOptions } from './deploy-retry.js';
import { DeployScheduler, type DeployStep } from './deploy-scheduler.js';
import { FileSync } from './file-sync.js';
import type { DeployableRender, DeployTarget } from './deploy-target.js';
import { jobFor, type Job } from './deploy-job.js';
import { GateLatch } from './gate-latch.js';
import { PassedRenders } from './passed-renders.js';
import type { RuntimeOp } from './runtime-ops.js';
import { withServerSlotsOf } from './runtime-view.js';
import type { RuntimeRound } from './runtime-round.js';
import { LastDiff, type ConfigDiff, type DiffOptions, type DiffShare } from './patch-diff.js';
import { messageOf } from '../core/errors.js';

export type DeployerInput = EventOf<'template.rendered' | 'rendergate.completed' | 'drift.prevention.triggered'>;
type Cause = Job['cause'];
/** Where an instance stands, for `haptic_fleet_instances{state}`. */
export type InstanceState = 'in_sync' | 'behind' | 'unreachable' | 'fenced';
export type { RetryOptions } from './deploy-retry.js';
export interface InstanceDeployerOptions {
  readonly target: DeployTarget;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly minDeploymentIntervalMs: number;
  readonly diff: DiffOptions;
  /** Computes diffs and runtime views (the Deployer's, shared by its instances). @default each its own */
  readonly diffs?: DiffShare;
  readonly awaitGateVerdict: boolean;
  /** How long a reload waits for its render's verdict before it deploys the newest that passed. */
  readonly verdictWaitLimitMs: number;
  /** Receives each outcome as `deployment.completed` fields, with what caused it. */
  readonly publish: (fields: EventFields['deployment.completed'], cause: Cause) => void;
  /** A render of this store version is applied (after a success). */
  readonly onApplied: (storeVersion: number) => void;
  readonly retry?: RetryOptions;
  /** The runtime changes in flight on all the Deployer's instances: files behind one wait for them. */
  readonly round?: RuntimeRound;
}

/**
 * The rules, in the order they apply:
 * - one deployment in flight, one pending (latest wins); a revert goes ahead of the pending one;
 * - a render whose checksum HAProxy already runs is skipped, unless forced (drift prevention);
 * - a runtime-only change goes out at once (no pacing, no wait for the gate), its files are written
 *   behind it (FileSync); a mixed change sends its runtime part first, then waits for the reload;
 * - a reload waits for the gate's verdict on that render, or deploys meanwhile the newest render
 *   that passed (PassedRenders), and is paced from the END of the previous reload; a refused
 *   render is never reloaded; a failed reload leaves the deployed state and files as they were;
 * - a refused render already applied at runtime is reverted to the last good state, and while
 *   the newest verdict is a refusal, later renders are held until one passes (GateLatch).
 */
export class InstanceDeployer {
  readonly target: DeployTarget;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #minIntervalMs: number;
  readonly #diffOptions: DiffOptions;
  readonly #awaitGate: boolean;
  readonly #publishFields: InstanceDeployerOptions['publish'];
  readonly #onApplied: (storeVersion: number) => void;
  readonly #retry: DeployRetry | undefined;
  #deployed = false;
  #lastReloadEnd: number | undefined;
  #scheduler: DeployScheduler<Job> | undefined;
  // Per term (reset in begin):
  /** What HAProxy runs, runtime changes included; undefined when unknown (the next change reloads). */
  #live: DeployableRender | undefined;
  /** The last state HAProxy ran that the gate did not refuse: what a refused change reverts to. */
  #good: DeployableRender | undefined;
  /** The newest render seen. */
  #latest: Job | undefined;
  readonly #gate = new GateLatch<Job>();
  readonly #passed: PassedRenders<Job>;
  /** The checksum the target reported at the start of the term, until a render matches it. */
  #targetChecksum: string | undefined;
  /** The checksum a drift-forced reload deployed; the drift's own re-render of it is then not forced again. */
  #driftDeployed: string | undefined;
  /** A job waiting for its verdict is planned again on every event: the last pair's diff is kept. */
  readonly #diffs: LastDiff;
  /** The files of runtime changes, written behind them in order; a reload waits for them. */
  readonly #files: FileSync;

  constructor(options: InstanceDeployerOptions) {
    this.target = options.target;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#minIntervalMs = options.minDeploymentIntervalMs;
    this.#diffOptions = options.diff;
    this.#diffs = new LastDiff(options.diff, options.diffs);
    this.#awaitGate = options.awaitGateVerdict;
    this.#publishFields = options.publish;
    this.#onApplied = options.onApplied;
    this.#retry = options.retry === undefined ? undefined : new DeployRetry(options.clock, options.retry);
    this.#files = new FileSync({ target: options.target, logger: options.logger, ...(options.round === undefined ? {} : { round: options.round }) });
    this.#passed = new PassedRenders({ clock: options.clock, limitMs: options.verdictWaitLimitMs, kick: () => this.#scheduler?.kick() });
  }

  /** True once a deployment succeeded (in this or an earlier term). */
  get ready(): boolean {
    return this.#deployed;
  }

  get deployedChecksum(): string | undefined {
    return this.#live?.checksum;
  }

  get latched(): boolean {
    return this.#gate.latched;
  }

  /** Where the instance stands against the newest render it may run. */
  get state(): InstanceState {
    const health = this.target.health?.();
    if (health === 'unreachable' || health === 'fenced') return health;
    const wanted = this.#gate.latched ? this.#good : (this.#latest?.render ?? this.#good);
    return wanted !== undefined && this.#live?.checksum === wanted.checksum ? 'in_sync' : 'behind';
  }

  /** A new leadership term: a fresh baseline (nothing is believed of the previous term but pacing). */
  begin(): void {
    this.#live = undefined;
    this.#good = undefined;
    this.#latest = undefined;
    this.#gate.reset();
    this.#passed.reset();
    this.#driftDeployed = undefined;
    this.#retry?.succeeded();
    // A term that has not ended yet plans nothing more (its step in flight runs to its end).
    this.#scheduler?.stop();
    this.#scheduler = new DeployScheduler<Job>({
      clock: this.#clock,
      minIntervalMs: this.#minIntervalMs,
      plan: (job) => this.#plan(job),
      logger: this.#logger,
      ...(this.#lastReloadEnd === undefined ? {} : { lastPacedEnd: this.#lastReloadEnd }),
    });
  }

  /** Reads what the target runs, so a render it already runs is adopted instead of reloaded. */
  async readTargetChecksum(): Promise<void> {
    this.#targetChecksum = await this.target.currentChecksum?.().catch((error: unknown) => {
      this.#logger.warn({ err: error }, 'could not read the checksum the target runs');
      return undefined;
    });
  }

  /** Ends the term: a deployment in flight finishes (stopping HAProxy half-way through is worse). */
  async end(): Promise<void> {
    this.#retry?.cancel();
    const scheduler = this.#scheduler;
    if (scheduler === undefined) return;
    scheduler.stop();
    await scheduler.whenIdle();
    await this.#files.settled();
    this.#lastReloadEnd = scheduler.lastPacedEnd ?? this.#lastReloadEnd;
    // A new term may have begun meanwhile: its scheduler stays.
    if (this.#scheduler === scheduler) this.#scheduler = undefined;
  }

  handle(event: DeployerInput): void {
    switch (event.type) {
      case 'template.rendered':
        return this.#onRendered(event);
      case 'rendergate.completed':
        return this.#onVerdict(event);
      case 'drift.prevention.triggered':
        return this.#onDrift(event);
      default:
        return unreachable(event);
    }
  }

  #onRendered(event: EventOf<'template.rendered'>): void {
    const render: DeployableRender = { renderId: event.renderId, checksum: event.checksum, haproxyConfig: event.haproxyConfig, auxiliaryFiles: event.auxiliaryFiles, ...(event.patch === undefined ? {} : { patch: event.patch }) };
    if (this.#live === undefined && this.#targetChecksum === event.checksum) {
      // The target already runs exactly this: adopt it instead of reloading.
      this.#live = render;
      this.#good = render;
    }
    this.#targetChecksum = undefined;
    // A drift's own re-render is forced, unless the drift already forced a reload of the same config.
    const force = event.triggerReason === 'drift_prevention' && this.#driftDeployed !== event.checksum;
    const job: Job = { ...jobFor(render, event.triggerReason, event), storeVersion: event.storeVersion, force };
    this.#latest = job;
    this.#passed.rendered(job);
    if (this.#gate.hold(job)) {
      this.#logger.info({ renderId: job.render.renderId }, 'render held: the newest verdict was a refusal');
      return;
    }
    this.#scheduler?.offer(job);
  }

  #onVerdict(event: EventOf<'rendergate.completed'>): void {
    const { verdict, released } = this.#gate.record(event);
    this.#passed.verdict(event.renderId, verdict === 'ok');
    if (verdict === 'refused') {
      this.#revertIfRefused(event.renderId, event, event.newest);
    } else {
      // Not refused (passed, or the gate could not judge it, which a reload would not wait for either).
      if (this.#live?.renderId === event.renderId) this.#good = this.#live;
      if (released !== undefined) this.#scheduler?.offer(released);
    }
    this.#scheduler?.kick();
  }

  /**
   * A refused render whose runtime changes HAProxy runs goes back to the last good state, ahead
   * of anything pending. Also when the runtime state is unknown and nothing newer is coming.
   * Checked on the verdict, and again when a runtime change ends (the verdict may come first).
   */
  #revertIfRefused(renderId: string, cause: Job['cause'], newest: boolean): void {
    const live = this.#live;
    const good = this.#good;
    if (this.#gate.verdictOf(renderId) !== 'refused' || good === undefined || live === good) return;
    if (live === undefined ? !newest : live.renderId !== renderId) return;
    this.#logger.warn({ renderId }, 'refused render was applied at runtime; reverting');
    this.#scheduler?.offerFirst({ ...jobFor(good, 'revert', cause), trusted: true, force: live === undefined });
  }

  #onDrift(event: EventOf<'drift.prevention.triggered'>): void {
    // Re-assert the newest deployable state: the latest render, or while latched the last good one.
    const scheduler = this.#scheduler;
    const base = this.#gate.latched ? undefined : (scheduler?.pending ?? this.#latest);
    const render = base?.render ?? this.#good ?? this.#live;
    if (scheduler === undefined || render === undefined) {
      this.#logger.info('drift prevention: nothing deployed yet');
      return;
    }
    this.#driftDeployed = undefined;
    scheduler.offer({
      ...jobFor(render, 'drift_prevention', event),
      storeVersion: base?.storeVersion,
      force: true,
      trusted: base === undefined || base.trusted,
    });
  }

  #plan(job: Job): DeployStep<Job> {
    const verdict = this.#gate.verdictOf(job.render.renderId);
    if (!job.trusted && verdict === 'refused') {
      this.#logger.warn({ renderId: job.render.renderId }, 'render refused by the gate; not deployed');
      return { type: 'drop' };
    }
    const live = this.#live;
    if (!job.force && live?.checksum === job.render.checksum) return { type: 'run', paced: false, run: () => this.#skip(job) };
    if (!job.force && live !== undefined && !job.runtimeDone) {
      const diff = this.#diffs.of(live, job.render);
      if (!diff.structural) return { type: 'run', paced: false, run: () => this.#applyRuntime(job, diff.runtimeOps, false) };
      if (diff.runtimeOps.length > 0) return { type: 'run', paced: false, run: () => this.#applyRuntime(job, diff.runtimeOps, true, diff) };
      this.#logger.debug({ renderId: job.render.renderId, reasons: diff.reasons }, 'reload needed');
    }
    if (this.#awaitGate && !job.trusted && verdict === undefined) {
      // Renders may come faster than the gate judges them: deploy the newest that passed meanwhile.
      const ahead = this.#passed.ahead(job, live?.checksum);
      return ahead === undefined ? { type: 'wait' } : { type: 'run', paced: true, run: () => this.#reloadAhead(ahead, job) };
    }
    return { type: 'run', paced: true, run: () => this.#reload(job) };
  }

  /** Reloads `passed` with `job`'s server slots (withServerSlotsOf); `job` follows, and reloads on its own verdict. */
  async #reloadAhead(passed: Job, job: Job): Promise<Job> {
    const render = withServerSlotsOf(passed.render, job.render, this.#diffOptions);
    this.#logger.info({ renderId: passed.render.renderId, waiting: job.render.renderId }, 'reloading the newest render the gate passed; the newest render waits for its own verdict');
    await this.#reload({ ...passed, render, storeVersion: job.storeVersion ?? passed.storeVersion, trusted: true, names: passed.render.checksum });
    this.#passed.deployed(passed, this.#live === render);
    return { ...job, runtimeDone: false };
  }

  async #skip(job: Job): Promise<undefined> {
    this.#publish(job, 'skipped', 'success', 0, 0);
    this.#markDeployed(job);
    return undefined;
  }

  /** Runtime API changes; `partial`: a reload must follow (a mixed change), and the job continues. */
  async #applyRuntime(job: Job, ops: readonly RuntimeOp[], partial: boolean, diff?: ConfigDiff): Promise<Job | undefined> {
    const started = this.#clock.monotonic();
    const running = this.#live as DeployableRender;
    let applied: number;
    try {
      applied = ops.length === 0 ? 0 : (await this.#files.runtime(() => this.target.applyRuntime(ops))).applied;
    } catch (error) {
      // Some operations may have gone through: the runtime state is unknown until a reload.
      this.#live = undefined;
      this.#publish(job, 'runtime', 'failure', this.#clock.monotonic() - started, 0, `runtime API: ${messageOf(error)}`);
      return { ...job, runtimeDone: true };
    }
    this.#observeLatency(job);
    if (partial) {
      this.#live = this.#diffs.view(running, job.render, ops);
      this.#logger.info({ renderId: job.render.renderId, ops: ops.length, reasons: diff?.reasons }, 'runtime part applied; reload to follow');
      this.#publish(job, 'runtime', 'success', this.#clock.monotonic() - started, applied);
      this.#revertIfRefused(job.render.renderId, job.cause, false);
      return { ...job, runtimeDone: true };
    }
    this.#live = job.render;
    // Runtime changes do not survive a reload: the files must say the same, written behind the change.
    this.#files.queue(job.render, (error) => this.#publish(job, 'runtime', 'failure', 0, applied, `files not written: ${error}`));
    this.#publish(job, 'runtime', 'success', this.#clock.monotonic() - started, applied);
    this.#markDeployed(job);
    this.#revertIfRefused(job.render.renderId, job.cause, false);
    return undefined;
  }

  async #reload(job: Job): Promise<undefined> {
    const started = this.#clock.monotonic();
    let result: { ok: boolean; detail: string };
    let unknown = false;
    // The files of earlier runtime changes first: a later write never lands before an earlier one.
    await this.#files.settled();
    try {
      await this.target.writeFiles(job.render, 'reload');
      try {
        result = await this.target.reload();
      } catch (error) {
        // The master could not confirm either way: HAProxy may run the old config or the new one.
        unknown = true;
        result = { ok: false, detail: messageOf(error) };
      }
    } catch (error) {
      result = { ok: false, detail: `files not written: ${messageOf(error)}` };
    }
    const durationMs = this.#clock.monotonic() - started;
    if (!result.ok) {
      const live = this.#live;
      if (unknown) this.#live = undefined;
      // HAProxy keeps the old config; put its files back so a restart does not load the new one.
      else if (live !== undefined) await this.target.writeFiles(live, 'serving').then(() => this.#files.wrote(live), (error: unknown) => this.#logger.error({ err: error }, 'restoring the files of the running config failed'));
      this.#publish(job, 'reload', 'failure', durationMs, 0, `reload failed: ${result.detail}`);
      return undefined;
    }
    this.#live = job.render;
    this.#good = job.render;
    this.#files.wrote(job.render);
    this.#passed.deployed(job);
    if (job.reason === 'drift_prevention') this.#driftDeployed = job.render.checksum;
    this.#observeLatency(job);
    this.#publish(job, 'reload', 'success', durationMs, 0);
    this.#markDeployed(job);
    return undefined;
  }

  /** HAProxy runs `job.render` (after a success or a skip). */
  #markDeployed(job: Job): void {
    this.#deployed = true;
    const verdict = this.#gate.verdictOf(job.render.renderId);
    // Applied before its verdict: it becomes good when the verdict comes (see #onVerdict).
    if (job.trusted || (verdict !== undefined && verdict !== 'refused')) this.#good = this.#live;
  }

  #observeLatency(job: Job): void {
    if (job.storeVersion !== undefined) this.#onApplied(job.storeVersion);
  }

  #publish(job: Job, kind: EventFields['deployment.completed']['kind'], outcome: 'success' | 'failure', durationMs: number, runtimeOps: number, error?: string): void {
    const fields: EventFields['deployment.completed'] = { reason: job.reason, kind, outcome, durationMs, runtimeOps, checksum: job.names ?? job.render.checksum, ...(error === undefined ? {} : { error }) };
    if (outcome === 'failure') this.#logger.error({ renderId: job.render.renderId, kind, error }, 'deployment failed');
    else this.#logger.info({ renderId: job.render.renderId, kind, reason: job.reason, runtimeOps, ms: Math.round(durationMs) }, 'deployed');
    if (outcome === 'failure') this.#retry?.failed(() => this.#retryNewest(job));
    else this.#retry?.succeeded();
    this.#publishFields(fields, job.cause);
  }

  /** After a failure: the newest job again, unless a newer one is queued or the instance has caught up meanwhile. */
  #retryNewest(failed: Job): void {
    const scheduler = this.#scheduler;
    const latest = this.#latest ?? failed;
    if (scheduler === undefined || scheduler.pending !== undefined || this.#live?.checksum === latest.render.checksum) return;
    this.#logger.info({ renderId: latest.render.renderId, failures: this.#retry?.failures }, 'retrying the deployment');
    scheduler.offer(this.#gate.latched && this.#good !== undefined ? { ...jobFor(this.#good, 'retry', latest.cause), trusted: true } : { ...latest, runtimeDone: false });
  }

  /**
   * Compares what the instance reports with what this term believes it runs; when they differ (it
   * restarted on an empty directory, or something else changed it), the newest render goes to it
   * again as a full sync. Skipped while a deployment is in flight or queued.
   */
  async probe(): Promise<void> {
    const scheduler = this.#scheduler;
    const live = this.#live;
    if (scheduler === undefined || scheduler.busy || scheduler.pending !== undefined || live === undefined || this.target.currentChecksum === undefined) return;
    const reported = await this.target.currentChecksum().catch(() => live.checksum);
    if (reported === live.checksum || this.#live !== live || scheduler !== this.#scheduler || scheduler.busy || scheduler.pending !== undefined) return;
    this.#logger.warn({ reported: reported ?? null, expected: live.checksum }, 'the instance runs another render; sending it the whole render again');
    const latest = this.#latest;
    if (latest === undefined) return;
    this.#live = undefined;
    scheduler.offer(this.#gate.latched ? { ...jobFor(this.#good ?? live, 'drift_prevention', latest.cause), trusted: true } : { ...latest, runtimeDone: false });
  }
}

const unreachable = (value: never): never => { throw new Error(`unexpected event ${JSON.stringify(value)}`); };

// DeployScheduler: when deployments run. One at a time; behind it one pending job, which a newer
// job replaces (latest wins). A `paced` step (a reload) starts no sooner than `minIntervalMs`
// after the END of the previous paced step; an unpaced one (Runtime API) as soon as nothing runs.
// Knows nothing of renders or HAProxy: the Deployer plans each step and runs it.
import type { Logger } from 'pino';
import { deferred, type Deferred } from '../core/async.js';
import type { Clock, TimerHandle } from '../core/clock.js';

/** What to do with the pending job now. */
export type DeployStep<J> =
  /** Not yet (e.g. a gate verdict is awaited); the planner's owner calls `kick()` when that changes. */
  | { readonly type: 'wait' }
  /** Nothing (more) to do; the job leaves the slot. */
  | { readonly type: 'drop' }
  /**
   * Run it. `run` resolves with a follow-up job (queued again unless a newer job arrived
   * meanwhile), or undefined when the job is finished. It should not reject; if it does, the
   * job is finished and the error logged.
   */
  | { readonly type: 'run'; readonly paced: boolean; readonly run: () => Promise<J | undefined> };

export interface DeploySchedulerOptions<J> {
  readonly clock: Clock;
  /** Least time from the end of one paced step to the start of the next. */
  readonly minIntervalMs: number;
  readonly plan: (job: J) => DeployStep<J>;
  readonly logger: Logger;
  /** When the previous paced step ended (`clock.monotonic()`), e.g. in an earlier leadership term. */
  readonly lastPacedEnd?: number;
}

/**
 * Only paced steps set the pace: a stream of runtime changes must not keep a reload waiting
 * forever, and a slow reload is never followed straight by the next one.
 */
export class DeployScheduler<J> {
  readonly #clock: Clock;
  readonly #minIntervalMs: number;
  readonly #plan: (job: J) => DeployStep<J>;
  readonly #logger: Logger;
  /** Runs before `#pending`, which it does not replace (a revert ahead of a held render). */
  #urgent: J | undefined;
  /** The latest job not yet started; never the one in flight. */
  #pending: J | undefined;
  /** Settled when the step in flight ends; undefined while idle. */
  #inFlight: Deferred<void> | undefined;
  #lastPacedEnd: number | undefined;
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(options: DeploySchedulerOptions<J>) {
    if (!Number.isFinite(options.minIntervalMs) || options.minIntervalMs < 0) {
      throw new TypeError(`minIntervalMs must be a non-negative number, got ${String(options.minIntervalMs)}`);
    }
    this.#clock = options.clock;
    this.#minIntervalMs = options.minIntervalMs;
    this.#plan = options.plan;
    this.#logger = options.logger;
    this.#lastPacedEnd = options.lastPacedEnd;
  }

  get pending(): J | undefined {
    return this.#urgent ?? this.#pending;
  }

  get busy(): boolean {
    return this.#inFlight !== undefined;
  }

  /** When the last paced step ended (`clock.monotonic()`), if one ran. */
  get lastPacedEnd(): number | undefined {
    return this.#lastPacedEnd;
  }

  /** Queues `job` in place of the pending one (latest wins) and plans. */
  offer(job: J): void {
    this.#pending = job;
    this.kick();
  }

  /** Queues `job` ahead of the pending job, which stays queued behind it. */
  offerFirst(job: J): void {
    this.#urgent = job;
    this.kick();
  }

  /** Plans again: call it whenever something the planner reads has changed. */
  kick(): void {
    while (!this.#stopped && this.#inFlight === undefined) {
      const urgent = this.#urgent !== undefined;
      const job = this.#urgent ?? this.#pending;
      if (job === undefined) return;
      let step: DeployStep<J>;
      try {
        step = this.#plan(job);
      } catch (error) {
        this.#logger.error({ err: error }, 'planning a deployment failed; job dropped');
        step = { type: 'drop' };
      }
      if (step.type === 'wait') return;
      if (step.type === 'drop') {
        this.#take(urgent, job);
        continue;
      }
      if (step.paced && this.#lastPacedEnd !== undefined) {
        const wait = this.#lastPacedEnd + this.#minIntervalMs - this.#clock.monotonic();
        if (wait > 0) {
          this.#arm(wait);
          return;
        }
      }
      this.#disarm();
      this.#take(urgent, job);
      this.#start(urgent, step.run, step.paced);
      return;
    }
  }

  /** Stops planning and clears the pacing timer; a step in flight runs to its end. */
  stop(): void {
    this.#stopped = true;
    this.#disarm();
  }

  /** Resolves once no step is in flight. */
  whenIdle(): Promise<void> {
    return this.#inFlight?.promise ?? Promise.resolve();
  }

  #start(urgent: boolean, run: () => Promise<J | undefined>, paced: boolean): void {
    const inFlight = deferred<void>();
    this.#inFlight = inFlight;
    let follow: Promise<J | undefined>;
    try {
      follow = run();
    } catch (error) {
      follow = Promise.reject(error);
    }
    follow
      .catch((error: unknown) => {
        this.#logger.error({ err: error }, 'deployment step failed unexpectedly');
        return undefined;
      })
      .then((next) => {
        if (paced) this.#lastPacedEnd = this.#clock.monotonic();
        // A follow-up goes back to the slot its job came from, unless a newer job took it meanwhile.
        if (next !== undefined) {
          if (urgent) this.#urgent ??= next;
          else this.#pending ??= next;
        }
        this.#inFlight = undefined;
        inFlight.resolve();
        this.kick();
      });
  }

  #take(urgent: boolean, job: J): void {
    if (urgent) {
      if (this.#urgent === job) this.#urgent = undefined;
    } else if (this.#pending === job) {
      this.#pending = undefined;
    }
  }

  #arm(ms: number): void {
    this.#disarm();
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.kick();
    }, ms, { unref: true });
  }

  #disarm(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

// PassedRenders: which render a reload may deploy while the one it waits for is still unjudged.
// The gate checks one render at a time, the newest when it is free (render-gate.ts). Under steady
// churn the render a reload waits for is replaced before its check ends, again and again, and a
// reload that waits only for the newest verdict never comes. So the Deployer follows the gate:
// the render it is checking is the first to arrive while it is idle, then the newest when a
// verdict frees it. The newest render that passed is kept until a reload deploys it or something
// newer; once a reload has waited `limitMs` for its own verdict, it deploys that one instead
// (with the newest render's server slots), and the newest render follows when its own verdict
// comes. A burst of renders is still one reload when its last verdict comes in time. Each
// instance keeps its own.
import type { Clock, TimerHandle } from '../core/clock.js';

interface Tracked<J> {
  readonly job: J;
  /** Arrival order: a passed render older than the one deployed is of no use. */
  readonly seq: number;
}

export interface PassedRendersOptions {
  readonly clock: Clock;
  /** How long a reload waits for its own render's verdict before it takes the newest passed one. */
  readonly limitMs: number;
  /** Plans again (the deploy scheduler's kick) once the limit is reached. */
  readonly kick: () => void;
}

export class PassedRenders<J extends { readonly render: { readonly renderId: string; readonly checksum: string } }> {
  readonly #clock: Clock;
  readonly #limitMs: number;
  readonly #kick: () => void;
  readonly #seqs = new WeakMap<object, number>();
  /** Since when a reload has waited for a verdict (`clock.monotonic()`); reset by a reload. */
  #waitingSince: number | undefined;
  #timer: TimerHandle | undefined;
  #next = 0;
  #latest: Tracked<J> | undefined;
  /** The render the gate is believed to be checking. */
  #checking: Tracked<J> | undefined;
  #passed: Tracked<J> | undefined;

  constructor(options: PassedRendersOptions) {
    this.#clock = options.clock;
    this.#limitMs = options.limitMs;
    this.#kick = options.kick;
  }

  /** A render arrived: the gate checks it at once when it is idle. */
  rendered(job: J): void {
    const tracked = { job, seq: this.#next++ };
    this.#seqs.set(job, tracked.seq);
    this.#latest = tracked;
    this.#checking ??= tracked;
  }

  /** The gate's verdict on `renderId`; only a pass is kept. The gate then takes the newest render, if unjudged. */
  verdict(renderId: string, passed: boolean): void {
    const judged = this.#checking?.job.render.renderId === renderId ? this.#checking : this.#latest?.job.render.renderId === renderId ? this.#latest : undefined;
    if (judged !== undefined && passed && (this.#passed === undefined || judged.seq > this.#passed.seq)) this.#passed = judged;
    const latest = this.#latest;
    this.#checking = latest !== undefined && latest !== judged && (judged === undefined || latest.seq > judged.seq) ? latest : undefined;
  }

  /**
   * What a reload of `job`, still unjudged, may deploy now instead: the newest passed render, once
   * the reload has waited `limitMs`, unless it is `job` or what runs (`liveChecksum`) already.
   * Until then undefined, and the limit is armed to plan again.
   */
  ahead(job: J, liveChecksum: string | undefined): J | undefined {
    const now = this.#clock.monotonic();
    this.#waitingSince ??= now;
    const passed = this.#passed?.job;
    if (passed === undefined || passed === job || passed.render.renderId === job.render.renderId) return undefined;
    if (passed.render.checksum === liveChecksum) return undefined;
    const left = this.#waitingSince + this.#limitMs - now;
    if (left <= 0) return passed;
    this.#timer ??= this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#kick();
    }, left, { unref: true });
    return undefined;
  }

  /** A reload deployed `job` (or, `ok` false, failed to): passed renders no newer are of no more use. */
  deployed(job: J, ok = true): void {
    this.#waitingSince = undefined;
    if (!ok) {
      if (this.#passed?.job === job) this.#passed = undefined;
      return;
    }
    const seq = this.#seqs.get(job);
    if (seq !== undefined && this.#passed !== undefined && this.#passed.seq <= seq) this.#passed = undefined;
  }

  reset(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#waitingSince = undefined;
    this.#latest = undefined;
    this.#checking = undefined;
    this.#passed = undefined;
  }
}

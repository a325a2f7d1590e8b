// PassedRenders: which render a reload may deploy while the one it waits for is still unjudged.
// The gate checks one render at a time, the newest when it is free (render-gate.ts). Under steady
// churn the render a reload waits for is replaced before its check ends, again and again, and a
// reload that waits only for the newest verdict never comes. So the Deployer follows the gate:
// the render it is checking is the first to arrive while it is idle, then the newest when a
// verdict frees it. The newest render that passed is kept until a reload deploys it or something
// newer; a reload may then deploy it (with the newest render's server slots), and the newest
// render follows when its own verdict comes. Each instance keeps its own.

interface Tracked<J> {
  readonly job: J;
  /** Arrival order: a passed render older than the one deployed is of no use. */
  readonly seq: number;
}

export class PassedRenders<J extends { readonly render: { readonly renderId: string } }> {
  readonly #seqs = new WeakMap<object, number>();
  #next = 0;
  #latest: Tracked<J> | undefined;
  /** The render the gate is believed to be checking. */
  #checking: Tracked<J> | undefined;
  #passed: Tracked<J> | undefined;

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

  /** The newest passed render, unless it is `job` itself (which then needs no other). */
  ahead(job: J): J | undefined {
    const passed = this.#passed;
    return passed === undefined || passed.job === job || passed.job.render.renderId === job.render.renderId ? undefined : passed.job;
  }

  /** `job` was deployed by a reload: passed renders no newer than it are of no more use. */
  deployed(job: J): void {
    const seq = this.#seqs.get(job);
    if (seq !== undefined && this.#passed !== undefined && this.#passed.seq <= seq) this.#passed = undefined;
  }

  /** `job` could not be deployed: it is not offered again. */
  discard(job: J): void {
    if (this.#passed?.job === job) this.#passed = undefined;
  }

  reset(): void {
    this.#latest = undefined;
    this.#checking = undefined;
    this.#passed = undefined;
  }
}

// An elector the soak steps down and back up: the replica leads from the start, and a
// leadership fault takes leadership away (as a lost Lease renewal would) until `stepUp`. The
// engine turns each change into `leader.lost` / `leader.became` and a fresh leadership term.
import type { Elector, LeadershipCallbacks } from '../../leadership/elector.js';

export class SwitchableElector implements Elector {
  readonly identity = 'soak';
  #callbacks: LeadershipCallbacks | undefined;
  /** Invariant: true exactly between an onBecameLeader and the next onLostLeadership we called. */
  #leading = false;

  get leading(): boolean {
    return this.#leading;
  }

  async run(callbacks: LeadershipCallbacks, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#callbacks = callbacks;
    this.stepUp();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.stepDown('stopping');
    this.#callbacks = undefined;
  }

  /** Gives leadership up; a no-op while following or before `run`. */
  stepDown(reason = 'soak: leadership fault'): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#callbacks?.onLostLeadership(reason);
  }

  /** Takes leadership back; a no-op while leading or before `run`. */
  stepUp(): void {
    if (this.#leading || this.#callbacks === undefined) return;
    this.#leading = true;
    this.#callbacks.onBecameLeader();
  }
}

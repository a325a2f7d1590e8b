// GateLatch: what the render gate said, as the Deployer needs it. It remembers the verdicts of
// recent renders, and latches when the gate refuses the newest render: from then on renders are
// held (only the latest is kept) until a verdict on the newest one passes, which releases it.
// A verdict the gate could not reach (HAProxy missing, a timeout) neither latches nor releases.

export type Verdict = 'ok' | 'refused' | 'unknown';

/** The fields of `rendergate.completed` the latch reads. */
export interface GateVerdict {
  readonly renderId: string;
  readonly ok: boolean;
  readonly refused: boolean;
  readonly newest: boolean;
}

export class GateLatch<J extends { readonly render: { readonly renderId: string } }> {
  readonly #kept: number;
  /** Insertion-ordered; the oldest is evicted beyond `#kept`. */
  readonly #verdicts = new Map<string, Verdict>();
  #latched = false;
  #held: J | undefined;

  /** @param kept verdicts remembered (renders older than that are long replaced). */
  constructor(kept = 32) {
    this.#kept = kept;
  }

  get latched(): boolean {
    return this.#latched;
  }

  verdictOf(renderId: string): Verdict | undefined {
    return this.#verdicts.get(renderId);
  }

  /** Records a verdict; returns what it was and, when it passes the held render, that render (the latch opens). */
  record(verdict: GateVerdict): { readonly verdict: Verdict; readonly released: J | undefined } {
    const value: Verdict = verdict.ok ? 'ok' : verdict.refused ? 'refused' : 'unknown';
    this.#verdicts.delete(verdict.renderId);
    this.#verdicts.set(verdict.renderId, value);
    if (this.#verdicts.size > this.#kept) this.#verdicts.delete(this.#verdicts.keys().next().value as string);
    if (value === 'refused' && verdict.newest) this.#latched = true;
    let released: J | undefined;
    if (value === 'ok' && verdict.newest && this.#latched && this.#held?.render.renderId === verdict.renderId) {
      released = this.#held;
      this.#held = undefined;
      this.#latched = false;
    }
    return { verdict: value, released };
  }

  /** Holds `job` (replacing any held one) when latched; false when it may go. */
  hold(job: J): boolean {
    if (!this.#latched) return false;
    this.#held = job;
    return true;
  }

  reset(): void {
    this.#verdicts.clear();
    this.#latched = false;
    this.#held = undefined;
  }
}

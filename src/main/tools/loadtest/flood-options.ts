// What one flood is: its options, their validation, and the freshness wait that the parent
// (its deadline for a child), the child (how long it waits) and the memory series (how far it
// runs) all plan with.

export type LoadtestMode = 'inline' | 'pool';

export interface FloodOptions {
  readonly ingresses: number;
  /** Changes per second. */
  readonly rate: number;
  /** Seconds. */
  readonly duration: number;
  readonly seed: number;
  /** Worker threads of the pool (PoolPipeline's default when undefined). */
  readonly threads?: number;
}

/** How long a child waits, after the flood, for a render of the last change. */
export const FRESHNESS_TIMEOUT_MS = 60_000;

const LIMITS = { ingresses: 1_000_000, rate: 1_000_000, duration: 3600, threads: 64 } as const;

/** Throws a RangeError naming the first option out of range (by its CLI flag). */
export function validateFloodOptions(options: FloodOptions): void {
  const check = (ok: boolean, message: string): void => {
    if (!ok) throw new RangeError(message);
  };
  check(Number.isInteger(options.ingresses) && options.ingresses >= 1 && options.ingresses <= LIMITS.ingresses, `--ingresses must be an integer in 1..${LIMITS.ingresses}`);
  check(Number.isFinite(options.rate) && options.rate > 0 && options.rate <= LIMITS.rate, `--rate must be a number in (0, ${LIMITS.rate}]`);
  check(Number.isFinite(options.duration) && options.duration > 0 && options.duration <= LIMITS.duration, `--duration must be a number of seconds in (0, ${LIMITS.duration}]`);
  check(Number.isInteger(options.seed), '--seed must be an integer');
  check(options.threads === undefined || (Number.isInteger(options.threads) && options.threads >= 1 && options.threads <= LIMITS.threads), `--threads must be an integer in 1..${LIMITS.threads}`);
}

// What one soak is: its options with their defaults, the faults it rotates through, and the
// validation that names a bad option by its CLI flag. The soak run, its report and the command
// line all plan with these.

/** The faults a soak injects, in rotation order; the HAProxy ones (SIGKILL of a worker, of the master) need `--haproxy`. */
export const FAULT_KINDS = ['crash', 'hang', 'oom', 'leadership', 'output', 'haproxy-worker', 'haproxy-master'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export const HAPROXY_FAULTS: readonly FaultKind[] = ['haproxy-worker', 'haproxy-master'];
/** The rotation without `--haproxy`. */
export const ENGINE_FAULT_ROTATION: readonly FaultKind[] = ['crash', 'hang', 'oom', 'leadership', 'output'];
/** The rotation with `--haproxy`: no `output` fault, since HAProxy runs from the output directory (its sockets are there). */
export const HAPROXY_FAULT_ROTATION: readonly FaultKind[] = ['crash', 'haproxy-worker', 'hang', 'leadership', 'haproxy-master', 'oom'];

/** A soak against a real HAProxy (`--haproxy`), serving traffic to local echo backends. */
export interface HaproxySoakOptions {
  /** Requests per second through HAProxy. */
  readonly trafficRate: number;
  /** Seconds between two Ingress edits that change a backend's options (each forces a reload). */
  readonly reloadIntervalSeconds: number;
  /** Old HAProxy workers left draining after a reload (the supervisor's bound). */
  readonly maxOldWorkers: number;
}

export interface SoakOptions {
  /** How long the flood runs, in seconds. */
  readonly durationSeconds: number;
  readonly ingresses: number;
  /** Changes per second. */
  readonly rate: number;
  /** Worker threads of the pool (PoolPipeline's default when undefined). */
  readonly threads?: number;
  /** Seconds between two fault injections. */
  readonly faultIntervalSeconds: number;
  /** The faults to rotate through, in order. */
  readonly faults: readonly FaultKind[];
  /** A render running longer fails and its worker is replaced: how a hang ends. */
  readonly renderTimeoutMs: number;
  /** Old-generation heap limit of each worker thread: where an out-of-memory worker dies. */
  readonly workerHeapMb: number;
  readonly seed: number;
  /** Where soak.json and soak.svg (soak-haproxy.json and .svg with `haproxy`) are written. */
  readonly outDir: string;
  /** Deploy to a real HAProxy under traffic. */
  readonly haproxy?: HaproxySoakOptions;
}

export const SOAK_DEFAULTS = {
  minutes: 10,
  ingresses: 1000,
  rate: 1000,
  faultIntervalSeconds: 20,
  renderTimeoutMs: 5000,
  // The workers' heap at 1,000 Ingresses under churn stays well below this; an out-of-memory
  // fault fills it, so a lower limit also keeps the RSS spike of that fault small.
  workerHeapMb: 256,
  seed: 1,
  outDir: 'bench/results',
  // With --haproxy: most changes still move endpoints (runtime-only), and every edit of an
  // Ingress's paths or options reaches HAProxy, so the churn is paced to what a cluster sends.
  haproxyRate: 20,
  trafficRate: 100,
  reloadIntervalSeconds: 10,
  maxOldWorkers: 3,
} as const;

const LIMITS = { ingresses: 1_000_000, rate: 1_000_000, durationSeconds: 7 * 24 * 3600, threads: 64 } as const;

/** Throws a RangeError naming the first option out of range (by its CLI flag). */
export function validateSoakOptions(options: SoakOptions): void {
  const check = (ok: boolean, message: string): void => {
    if (!ok) throw new RangeError(message);
  };
  const { durationSeconds, ingresses, rate, threads } = options;
  check(Number.isFinite(durationSeconds) && durationSeconds > 0 && durationSeconds <= LIMITS.durationSeconds, `--minutes / --seconds must give a duration in (0, ${LIMITS.durationSeconds}] seconds`);
  check(Number.isInteger(ingresses) && ingresses >= 1 && ingresses <= LIMITS.ingresses, `--ingresses must be an integer in 1..${LIMITS.ingresses}`);
  check(Number.isFinite(rate) && rate > 0 && rate <= LIMITS.rate, `--rate must be a number in (0, ${LIMITS.rate}]`);
  check(threads === undefined || (Number.isInteger(threads) && threads >= 1 && threads <= LIMITS.threads), `--threads must be an integer in 1..${LIMITS.threads}`);
  check(Number.isFinite(options.faultIntervalSeconds) && options.faultIntervalSeconds > 0, '--fault-interval must be a positive number of seconds');
  check(options.faults.every((f) => (FAULT_KINDS as readonly string[]).includes(f)), `--faults must name faults among ${FAULT_KINDS.join(', ')}`);
  check(Number.isFinite(options.renderTimeoutMs) && options.renderTimeoutMs > 0, '--render-timeout must be a positive number of ms');
  check(Number.isInteger(options.workerHeapMb) && options.workerHeapMb >= 32, '--worker-heap-mb must be an integer of at least 32');
  check(Number.isInteger(options.seed), '--seed must be an integer');
  const haproxy = options.haproxy;
  if (haproxy === undefined) {
    check(!options.faults.some((f) => HAPROXY_FAULTS.includes(f)), `--faults ${HAPROXY_FAULTS.join(', ')} need --haproxy`);
    return;
  }
  check(!options.faults.includes('output'), '--faults output cannot be used with --haproxy: HAProxy runs from the output directory');
  check(Number.isFinite(haproxy.trafficRate) && haproxy.trafficRate > 0 && haproxy.trafficRate <= 10_000, '--traffic-rate must be a number in (0, 10000]');
  check(Number.isFinite(haproxy.reloadIntervalSeconds) && haproxy.reloadIntervalSeconds > 0, '--reload-interval must be a positive number of seconds');
  check(Number.isInteger(haproxy.maxOldWorkers) && haproxy.maxOldWorkers >= 0, '--max-old-workers must be a non-negative integer');
}

/** Parses `--faults crash,hang,...`: a comma-separated list of fault kinds, in rotation order. */
export function parseFaultList(text: string): FaultKind[] {
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const name of names) {
    if (!(FAULT_KINDS as readonly string[]).includes(name)) throw new RangeError(`unknown fault ${JSON.stringify(name)}; expected some of ${FAULT_KINDS.join(', ')}`);
  }
  return names as FaultKind[];
}

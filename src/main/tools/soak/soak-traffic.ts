// SoakTraffic: steady HTTP traffic through HAProxy while the soak runs. At a fixed rate it sends
// GET requests over a rotating set of hosts, alternately on a fresh connection and over a pool of
// keep-alive connections, and tallies each outcome: answered by an echo backend (200 with its
// x-backend header), refused (ECONNREFUSED: nothing listening), or another error (a reset, a
// timeout, a wrong status). A failure whose request started or ended while a HAProxy fault was
// open (HAProxy killed, until the current store version is served again) is counted apart: those
// are the fault's cost; every other failure is a failure of the controller. Latency goes into
// bounded histograms: one for the whole run, one per sample period.
import { Agent, request } from 'node:http';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { every, type Clock } from '../../core/clock.js';
import { round } from '../loadtest/units.js';

export type Outcome = { readonly ok: true; readonly latencyMs: number } | { readonly ok: false; readonly refused: boolean; readonly what: string };

/** Sends one request for `host`; never rejects. */
export type Probe = (host: string, keepAlive: boolean) => Promise<Outcome>;

export interface TrafficTotals {
  readonly sent: number;
  readonly ok: number;
  /** Failures outside HAProxy faults: refused connections, and every other error. */
  readonly refused: number;
  readonly errors: number;
  /** Failures while a HAProxy fault was open. */
  readonly faultRefused: number;
  readonly faultErrors: number;
  /** Requests not sent because too many were in flight. */
  readonly skipped: number;
  /** The first few failures outside faults, in words. */
  readonly failureSamples: readonly string[];
}

export interface LatencySummary {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** One sample period of traffic: requests answered and failed in it, and their latency. */
export interface TrafficPeriod extends LatencySummary {
  readonly ok: number;
  readonly failed: number;
  readonly faultFailed: number;
}

export interface SoakTrafficOptions {
  readonly clock: Clock;
  readonly probe: Probe;
  readonly hosts: readonly string[];
  readonly ratePerSecond: number;
  /** True while a HAProxy fault is open. */
  readonly faultOpen: () => boolean;
  /** @default 20 */
  readonly tickMs?: number;
  /** @default 1000 */
  readonly maxInFlight?: number;
}

const FAILURE_SAMPLES = 10;

export class SoakTraffic {
  readonly #options: SoakTrafficOptions;
  readonly #inFlight = new Set<Promise<void>>();
  /** Microseconds. */
  readonly #latency: RecordableHistogram = createHistogram();
  readonly #periodLatency: RecordableHistogram = createHistogram();
  readonly #totals = { sent: 0, ok: 0, refused: 0, errors: 0, faultRefused: 0, faultErrors: 0, skipped: 0 };
  readonly #samples: string[] = [];
  #period = { ok: 0, failed: 0, faultFailed: 0 };
  #due = 0;
  #next = 0;
  #stopTimer: (() => void) | undefined;

  constructor(options: SoakTrafficOptions) {
    if (options.hosts.length === 0) throw new TypeError('traffic needs at least one host');
    if (!(options.ratePerSecond > 0) || !Number.isFinite(options.ratePerSecond)) throw new RangeError(`the traffic rate must be a positive number, got ${options.ratePerSecond}`);
    this.#options = options;
  }

  start(): void {
    if (this.#stopTimer !== undefined) return;
    const tickMs = this.#options.tickMs ?? 20;
    let last = this.#options.clock.monotonic();
    this.#stopTimer = every(this.#options.clock, tickMs, () => {
      const now = this.#options.clock.monotonic();
      this.#due += ((now - last) / 1000) * this.#options.ratePerSecond;
      last = now;
      while (this.#due >= 1) {
        this.#due--;
        this.#send();
      }
    });
  }

  /** Stops sending and waits for the requests in flight. */
  async stop(): Promise<void> {
    this.#stopTimer?.();
    this.#stopTimer = undefined;
    await Promise.all(this.#inFlight);
  }

  get totals(): TrafficTotals {
    return { ...this.#totals, failureSamples: [...this.#samples] };
  }

  /** Latency of every answered request so far. */
  get latency(): LatencySummary {
    return summary(this.#latency);
  }

  /** The period since the last call, and starts the next. */
  takePeriod(): TrafficPeriod {
    const period: TrafficPeriod = { ...this.#period, ...summary(this.#periodLatency) };
    this.#period = { ok: 0, failed: 0, faultFailed: 0 };
    this.#periodLatency.reset();
    return period;
  }

  #send(): void {
    if (this.#inFlight.size >= (this.#options.maxInFlight ?? 1000)) {
      this.#totals.skipped++;
      return;
    }
    const n = this.#next++;
    const hosts = this.#options.hosts;
    const host = hosts[n % hosts.length] as string;
    const duringFault = this.#options.faultOpen();
    this.#totals.sent++;
    const done: Promise<void> = this.#options.probe(host, n % 2 === 1).then((outcome) => {
      this.#inFlight.delete(done);
      this.#record(outcome, host, duringFault || this.#options.faultOpen());
    });
    this.#inFlight.add(done);
  }

  #record(outcome: Outcome, host: string, duringFault: boolean): void {
    if (outcome.ok) {
      this.#totals.ok++;
      this.#period.ok++;
      const us = Math.max(1, Math.round(outcome.latencyMs * 1000));
      this.#latency.record(us);
      this.#periodLatency.record(us);
      return;
    }
    if (duringFault) {
      this.#period.faultFailed++;
      if (outcome.refused) this.#totals.faultRefused++;
      else this.#totals.faultErrors++;
      return;
    }
    this.#period.failed++;
    if (outcome.refused) this.#totals.refused++;
    else this.#totals.errors++;
    if (this.#samples.length < FAILURE_SAMPLES) this.#samples.push(`${host}: ${outcome.what}`);
  }
}

function summary(histogram: RecordableHistogram): LatencySummary {
  if (histogram.count === 0) return { p50Ms: 0, p99Ms: 0, maxMs: 0 };
  const ms = (us: number): number => round(us / 1000, 2);
  return { p50Ms: ms(histogram.percentile(50)), p99Ms: ms(histogram.percentile(99)), maxMs: ms(histogram.max) };
}

/**
 * The real probe: GET / with `Host: host` to HAProxy at `address:port`; answered means a 200 that
 * an echo backend sent (its x-backend header). Keep-alive requests share `maxSockets` connections.
 * A failure names the connection it met (fresh, a new keep-alive one, or a reused keep-alive one,
 * where a reset can be the server closing an idle connection as the request went out) and how
 * long after sending.
 */
export function httpProbe(address: string, port: number, options: { readonly timeoutMs?: number; readonly maxSockets?: number } = {}): { probe: Probe; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 8 });
  const probe: Probe = (host, keepAlive) =>
    new Promise<Outcome>((resolve) => {
      const began = performance.now();
      const req = request({ host: address, port, path: '/', headers: { host }, agent: keepAlive ? agent : false, timeout: options.timeoutMs ?? 5000 }, (res) => {
        res.resume();
        res.on('end', () => {
          const backend = res.headers['x-backend'];
          if (res.statusCode === 200 && typeof backend === 'string') resolve({ ok: true, latencyMs: performance.now() - began });
          else resolve({ ok: false, refused: false, what: `status ${String(res.statusCode)}${typeof backend === 'string' ? '' : ' without x-backend'}` });
        });
        res.on('error', (error) => resolve({ ok: false, refused: false, what: error.message }));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (error: NodeJS.ErrnoException) => {
        const connection = !keepAlive ? 'a fresh connection' : req.reusedSocket ? 'a reused keep-alive connection' : 'a new keep-alive connection';
        resolve({ ok: false, refused: error.code === 'ECONNREFUSED', what: `${error.code ?? error.message} on ${connection} after ${Math.round(performance.now() - began)} ms` });
      });
      req.end();
    });
  return { probe, close: () => agent.destroy() };
}

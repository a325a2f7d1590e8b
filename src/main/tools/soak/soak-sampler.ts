// SoakSampler: one sample per period (1 s; longer for soaks over an hour, so the series stays
// bounded): the main thread's memory (RSS, heap used and total, external, array
// buffers), its live heap (heap in use after V8's own full collections, read through the GC
// profiler: the soak never forces one) and GC time, the workers' heap, the main event-loop delay
// of the period (p50, p99, max, net of the monitor's resolution), renders per second and the
// running failure and drop counts. The workers' heap and the 100 ms peaks come from the load
// test's MemorySampler running alongside. With `--haproxy`, each sample also holds HAProxy's
// processes (workers, old workers, their RSS) and the period's traffic (answered, failed, latency).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { GCProfiler } from 'node:v8';
import { every, type Clock } from '../../core/clock.js';
import { MemorySampler, memoryWindowMs } from '../loadtest/memory.js';
import { round, toMb } from '../loadtest/units.js';
import type { HaproxySample } from './haproxy-sampler.js';
import type { TrafficPeriod } from './soak-traffic.js';

export interface SoakSample {
  /** End of the period, ms since the soak started. */
  readonly tMs: number;
  readonly rssMb: number;
  readonly heapUsedMb: number;
  readonly heapTotalMb: number;
  readonly externalMb: number;
  readonly arrayBuffersMb: number;
  /**
   * The main heap in use right after the period's full (mark-compact) collections, the lowest
   * if several: what is live, without the garbage heapUsedMb includes. Null when none ran.
   */
  readonly liveHeapMb: number | null;
  /** Time V8 spent collecting garbage on the main thread in the period, all kinds. */
  readonly gcMs: number;
  /** The pool workers' heap in use, summed, from their latest answer; null before the first. */
  readonly workerHeapMb: number | null;
  readonly eldP50Ms: number;
  readonly eldP99Ms: number;
  readonly eldMaxMs: number;
  readonly rendersPerSecond: number;
  /** Running totals since the engine started (the initial render included). */
  readonly renders: number;
  readonly failures: number;
  readonly criticalDrops: number;
  readonly lossyDrops: number;
  /** With `--haproxy`: HAProxy's processes at the period's end (null when the poll failed: HAProxy restarting). */
  readonly haproxy?: HaproxySample | null;
  /** With `--haproxy`: the period's traffic. */
  readonly traffic?: TrafficPeriod;
}

/** Running totals the sampler reads each period. */
export interface SoakCounters {
  readonly renders: number;
  readonly failures: number;
  readonly criticalDrops: number;
  readonly lossyDrops: number;
}

export interface SoakSamplerOptions {
  readonly clock: Clock;
  readonly durationSeconds: number;
  readonly counters: () => SoakCounters;
  /** The pool workers' heap in use, summed. */
  readonly workerHeapBytes: () => Promise<number>;
  /** With `--haproxy`: the latest sample of HAProxy's processes, and the period's traffic (taken, so it restarts). */
  readonly haproxy?: { readonly processes: () => HaproxySample | null; readonly takeTraffic: () => TrafficPeriod };
}

export interface EventLoopDelay {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** Periods a soak is planned for: an hour of 1 s periods ... */
const PLANNED_SAMPLES = 3600;
/** ... and the most it keeps, with room for the wait for the last recovery after the flood. */
export const MAX_SAMPLES = 4000;
/** Sampling interval of the event-loop delay monitors; reported delays are net of it. */
const ELD_RESOLUTION_MS = 1;

/** 1 s, or the whole number of seconds that keeps a soak of this length within PLANNED_SAMPLES. */
export function samplePeriodMs(durationSeconds: number): number {
  return 1000 * Math.max(1, Math.ceil(durationSeconds / PLANNED_SAMPLES));
}

export class SoakSampler {
  readonly periodMs: number;
  readonly samples: SoakSample[] = [];
  /** RSS and heap peaks (sampled every 100 ms) and the workers' heap. */
  readonly memory: MemorySampler;
  readonly #options: SoakSamplerOptions;
  readonly #startedMs: number;
  /** Over the whole soak, and over the current period. */
  readonly #eld: IntervalHistogram = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  readonly #eldPeriod: IntervalHistogram = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  /** Restarted every period, so that it holds one period's collections at most. */
  readonly #gc = new GCProfiler();
  #lastRenders = 0;
  #lastMs: number;
  #stopTimer: (() => void) | undefined;

  constructor(options: SoakSamplerOptions) {
    this.#options = options;
    this.periodMs = samplePeriodMs(options.durationSeconds);
    this.memory = new MemorySampler(memoryWindowMs(options.durationSeconds), options.workerHeapBytes);
    this.#startedMs = options.clock.monotonic();
    this.#lastMs = this.#startedMs;
    this.#lastRenders = options.counters().renders;
    this.#eld.enable();
    this.#eldPeriod.enable();
    this.#gc.start();
    this.#stopTimer = every(options.clock, this.periodMs, () => this.#sample());
  }

  /** Event-loop delay over the whole soak so far. */
  get eventLoopDelay(): EventLoopDelay {
    return { p50Ms: netDelayMs(this.#eld.percentile(50)), p99Ms: netDelayMs(this.#eld.percentile(99)), maxMs: netDelayMs(this.#eld.max) };
  }

  /** Stops sampling (after a last sample when a period is under way). Idempotent. */
  async stop(): Promise<void> {
    if (this.#stopTimer === undefined) return;
    this.#stopTimer();
    this.#stopTimer = undefined;
    if (this.#options.clock.monotonic() - this.#lastMs >= this.periodMs / 2) this.#sample();
    this.#eld.disable();
    this.#eldPeriod.disable();
    this.#gc.stop();
    await this.memory.stop();
  }

  #sample(): void {
    // Restarted even when the series is full, so that the profiler never holds more than a period.
    const collections = this.#gc.stop().statistics;
    this.#gc.start();
    if (this.samples.length >= MAX_SAMPLES) return;
    const now = this.#options.clock.monotonic();
    const usage = process.memoryUsage();
    const counters = this.#options.counters();
    const seconds = (now - this.#lastMs) / 1000;
    const live = collections.filter((c) => c.gcType === 'MarkSweepCompact').map((c) => c.afterGC.heapStatistics.usedHeapSize);
    this.samples.push({
      tMs: round(now - this.#startedMs, 0),
      rssMb: toMb(usage.rss),
      heapUsedMb: toMb(usage.heapUsed),
      heapTotalMb: toMb(usage.heapTotal),
      externalMb: toMb(usage.external),
      arrayBuffersMb: toMb(usage.arrayBuffers),
      liveHeapMb: live.length === 0 ? null : toMb(Math.min(...live)),
      // The profiler's cost is in microseconds.
      gcMs: round(collections.reduce((sum, c) => sum + c.cost, 0) / 1000, 1),
      workerHeapMb: this.memory.points.at(-1)?.workerHeapMb ?? null,
      eldP50Ms: netDelayMs(this.#eldPeriod.percentile(50)),
      eldP99Ms: netDelayMs(this.#eldPeriod.percentile(99)),
      eldMaxMs: netDelayMs(this.#eldPeriod.max),
      rendersPerSecond: seconds > 0 ? round((counters.renders - this.#lastRenders) / seconds, 2) : 0,
      ...counters,
      ...(this.#options.haproxy === undefined ? {} : { haproxy: this.#options.haproxy.processes(), traffic: this.#options.haproxy.takeTraffic() }),
    });
    this.#eldPeriod.reset();
    this.#lastRenders = counters.renders;
    this.#lastMs = now;
  }
}

/** A monitor's delay (ns) in ms, net of its sampling interval; 0 before it has a sample. */
function netDelayMs(nanoseconds: number): number {
  return Number.isFinite(nanoseconds) ? round(Math.max(0, nanoseconds / 1e6 - ELD_RESOLUTION_MS), 2) : 0;
}

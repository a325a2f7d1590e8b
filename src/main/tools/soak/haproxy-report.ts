// The soak's HAProxy part (`--haproxy`): what HAProxy did (reloads, runtime-only deployments,
// restarts, old workers stopped), its processes' peaks, the traffic's totals and latency
// (HaproxyMeasurement); the judgement of its memory and worker count (HAPROXY_GROWTH_RULE) and of
// the traffic (no failure outside a HAProxy fault); and its lines of the text summary.
import { countGrowth, HAPROXY_GROWTH_RULE, seriesGrowth, type CountGrowth, type SeriesGrowth } from './growth.js';
import type { SoakSample } from './soak-sampler.js';
import type { LatencySummary, TrafficTotals } from './soak-traffic.js';

export interface HaproxyMeasurement {
  readonly maxOldWorkers: number;
  readonly trafficRate: number;
  readonly reloadIntervalSeconds: number;
  /** Deployments by kind, from the Deployer's events. */
  readonly deployments: { readonly reloads: number; readonly runtime: number; readonly skipped: number; readonly failed: number };
  /** Paced Ingress edits that change a backend's options (each asks for a reload). */
  readonly reloadEdits: number;
  /** HAProxy restarts by the supervisor after an exit. */
  readonly restarts: number;
  readonly oldWorkersStopped: number;
  readonly peakRssMb: number;
  readonly peakWorkers: number;
  readonly traffic: TrafficTotals & { readonly latency: LatencySummary };
}

export interface HaproxyJudgement {
  readonly rss: SeriesGrowth | null;
  readonly workers: CountGrowth | null;
  readonly rule: string;
  /** Every request outside a HAProxy fault was answered by an echo backend. */
  readonly trafficClean: boolean;
}

export function haproxyJudgement(m: HaproxyMeasurement, samples: readonly SoakSample[], warmupMs: number): HaproxyJudgement {
  const points = (value: (s: NonNullable<SoakSample['haproxy']>) => number): (readonly [number, number])[] =>
    samples.flatMap((s) => (s.haproxy === undefined || s.haproxy === null ? [] : [[s.tMs, value(s.haproxy)] as const]));
  return {
    rss: seriesGrowth(points((h) => h.rssMb), warmupMs),
    // The bound: the current worker, the old ones kept, and a reload's new one before the trim.
    workers: countGrowth(points((h) => h.workers), warmupMs, 1 + m.maxOldWorkers + 1),
    rule: HAPROXY_GROWTH_RULE,
    trafficClean: m.traffic.errors === 0 && m.traffic.refused === 0 && m.traffic.ok > 0,
  };
}

export function haproxySummaryLines(m: HaproxyMeasurement, j: HaproxyJudgement, growthLine: (g: SeriesGrowth | null) => string): string[] {
  const t = m.traffic;
  const d = m.deployments;
  const workers = j.workers;
  return [
    `HAProxy: ${d.reloads} reloads, ${d.runtime} runtime-only deployments, ${d.skipped} skipped, ${d.failed} failed; ${m.reloadEdits} paced reload edits; ` +
      `${m.restarts} restarts; ${m.oldWorkersStopped} old workers stopped past the bound of ${m.maxOldWorkers}`,
    `HAProxy processes: peak ${m.peakWorkers} workers (current + draining), RSS of master + workers peak ${m.peakRssMb.toFixed(0)} MB`,
    `traffic: ${t.sent} requests at ${m.trafficRate}/s, ${t.ok} answered, outside faults ${t.errors} errors and ${t.refused} refused; ` +
      `during HAProxy faults ${t.faultErrors} errors and ${t.faultRefused} refused; ${t.skipped} not sent (too many in flight); ` +
      `latency p50 ${t.latency.p50Ms.toFixed(2)} ms, p99 ${t.latency.p99Ms.toFixed(2)} ms, max ${t.latency.maxMs.toFixed(1)} ms`,
    ...t.failureSamples.map((s) => `  failure: ${s}`),
    `  HAProxy RSS: ${growthLine(j.rss)}`,
    `  HAProxy workers: ${workers === null ? 'too few samples after the warm-up' : `floor ${workers.firstHalfFloor} -> ${workers.secondHalfFloor}, peak ${workers.peak} (bound ${workers.bound}): ${workers.growing ? 'GROWING' : 'bounded'}`}`,
  ];
}

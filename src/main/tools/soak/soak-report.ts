// The soak's report: what a run measured (SoakMeasurement), the whole report with its fault
// summary, memory growth and verdict (SoakReport, serialised as is to soak.json), and the short
// text summary printed at the end, which names every fault given up as failed and why. The run
// passes when every injected fault recovered and every memory series was judged and found bounded
// (GROWTH_RULE).
import { availableParallelism } from 'node:os';
import type { FaultRecord } from './fault-log.js';
import { GROWTH_RULE, seriesGrowth, warmupMs, type SeriesGrowth } from './growth.js';
import { haproxyJudgement, haproxySummaryLines, type HaproxyJudgement, type HaproxyMeasurement } from './haproxy-report.js';
import { FAULT_KINDS, type FaultKind, type SoakOptions } from './soak-options.js';
import type { EventLoopDelay, SoakSample } from './soak-sampler.js';

/** What one run measured; the report adds the judgements. */
export interface SoakMeasurement {
  readonly options: SoakOptions;
  readonly threads: number;
  readonly startedAt: string;
  readonly initialRenderMs: number;
  /** From the flood's start until its last change. */
  readonly floodMs: number;
  readonly samplePeriodMs: number;
  readonly samples: readonly SoakSample[];
  readonly eventLoopDelay: EventLoopDelay;
  /** Peaks sampled every 100 ms. */
  readonly peakRssMb: number;
  readonly peakHeapUsedMb: number;
  readonly peakWorkerHeapMb: number | null;
  readonly totals: SoakTotals;
  readonly faults: readonly FaultRecord[];
  /** With `--haproxy`. */
  readonly haproxy?: HaproxyMeasurement;
}

export interface SoakTotals {
  readonly changes: number;
  readonly renders: number;
  /** Failed reconciliations (each worker fault causes one). */
  readonly failures: number;
  readonly writes: number;
  readonly writeFailures: number;
  readonly criticalDrops: number;
  readonly lossyDrops: number;
  readonly workersReplaced: number;
  /** Fault injections put off to the next interval because the previous fault had not recovered. */
  readonly faultsPostponed: number;
}

export interface FaultKindSummary {
  readonly injected: number;
  readonly recovered: number;
  /** Given up as failed (FaultRecord.failure says why). */
  readonly failed: number;
  /** The longest time from injection to recovery of this kind; null when none recovered. */
  readonly maxRecoveryMs: number | null;
  /** The longest time from the fault's clearing (its end) to recovery; null when none recovered. */
  readonly maxRecoveryAfterClearingMs: number | null;
}

export interface SoakReport extends Omit<SoakMeasurement, 'peakRssMb' | 'peakHeapUsedMb' | 'peakWorkerHeapMb'> {
  readonly environment: { readonly node: string; readonly platform: string; readonly cpus: number };
  readonly warmupMs: number;
  readonly memory: {
    readonly peakRssMb: number;
    readonly lastRssMb: number;
    readonly peakHeapUsedMb: number;
    readonly peakWorkerHeapMb: number | null;
    /** Null where too few samples follow the warm-up. */
    readonly growth: { readonly rss: SeriesGrowth | null; readonly liveHeap: SeriesGrowth | null; readonly workerHeap: SeriesGrowth | null };
  };
  readonly faultSummary: { readonly injected: number; readonly recovered: number; readonly failed: number; readonly byKind: Readonly<Record<FaultKind, FaultKindSummary>> };
  /** With `--haproxy`: HAProxy's memory and worker count judged, and the traffic. */
  readonly haproxyVerdict?: HaproxyJudgement;
  readonly verdict: {
    /** `unjudged`: a series had too few samples after the warm-up (a soak too short). */
    readonly memory: 'bounded' | 'growing' | 'unjudged';
    readonly memoryRule: string;
    readonly allFaultsRecovered: boolean;
    readonly pass: boolean;
  };
}

export function soakReport(m: SoakMeasurement): SoakReport {
  const { peakRssMb, peakHeapUsedMb, peakWorkerHeapMb, ...measured } = m;
  const warmup = warmupMs(m.floodMs);
  const series = (value: (s: SoakSample) => number | null): (readonly [number, number])[] =>
    m.samples.flatMap((s) => {
      const v = value(s);
      return v === null ? [] : [[s.tMs, v] as const];
    });
  const growth = {
    rss: seriesGrowth(series((s) => s.rssMb), warmup),
    liveHeap: seriesGrowth(series((s) => s.liveHeapMb), warmup),
    workerHeap: seriesGrowth(series((s) => s.workerHeapMb), warmup),
  };
  const haproxy = m.haproxy === undefined ? undefined : haproxyJudgement(m.haproxy, m.samples, warmup);
  const judged = [...Object.values(growth), ...(haproxy === undefined ? [] : [haproxy.rss, haproxy.workers])];
  const memory = judged.some((g) => g?.growing === true) ? 'growing' : judged.every((g) => g !== null) ? 'bounded' : 'unjudged';
  const recovered = m.faults.filter((f) => f.recoveredMs !== null).length;
  const allFaultsRecovered = recovered === m.faults.length;
  const trafficClean = haproxy?.trafficClean ?? true;
  return {
    ...measured,
    environment: { node: process.version, platform: `${process.platform}-${process.arch}`, cpus: availableParallelism() },
    warmupMs: warmup,
    memory: { peakRssMb, lastRssMb: m.samples.at(-1)?.rssMb ?? 0, peakHeapUsedMb, peakWorkerHeapMb, growth },
    faultSummary: { injected: m.faults.length, recovered, failed: m.faults.filter((f) => f.failure !== null).length, byKind: faultsByKind(m.faults) },
    ...(haproxy === undefined ? {} : { haproxyVerdict: haproxy }),
    verdict: { memory, memoryRule: GROWTH_RULE, allFaultsRecovered, pass: allFaultsRecovered && memory === 'bounded' && trafficClean },
  };
}

export function textSummary(r: SoakReport): string {
  const o = r.options;
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const t = r.totals;
  const rate = r.floodMs > 0 ? (t.renders / (r.floodMs / 1000)).toFixed(1) : '0';
  const kinds = FAULT_KINDS.filter((k) => r.faultSummary.byKind[k].injected > 0).map((k) => {
    const s = r.faultSummary.byKind[k];
    const times = s.maxRecoveryMs === null ? '' : ` (at most ${seconds(s.maxRecoveryMs)} after injection, ${seconds(s.maxRecoveryAfterClearingMs ?? 0)} after the fault ended)`;
    return `${k} ${s.recovered}/${s.injected}${times}${s.failed > 0 ? `, ${s.failed} failed` : ''}`;
  });
  const failures = r.faults.filter((f) => f.failure !== null).map((f) => `  failed: ${f.kind} injected at ${seconds(f.injectedMs)}: ${f.failure ?? ''}`);
  const eld = r.eventLoopDelay;
  const mem = r.memory;
  const lines = [
    `soak${o.haproxy === undefined ? '' : ' --haproxy'}: ${seconds(r.floodMs)} flood of ${o.ingresses} Ingresses at ${o.rate} changes/s, ${r.threads} worker thread${r.threads === 1 ? '' : 's'}, ` +
      `a fault every ${o.faultIntervalSeconds} s (${o.faults.join(', ') || 'none'}); initial render ${seconds(r.initialRenderMs)}`,
    `renders ${t.renders} (${rate}/s), changes ${t.changes}, render failures ${t.failures}, writes ${t.writes} (failed ${t.writeFailures}), ` +
      `workers replaced ${t.workersReplaced}, critical drops ${t.criticalDrops}, lossy drops ${t.lossyDrops}`,
    `faults: ${r.faultSummary.injected} injected, ${r.faultSummary.recovered} recovered, ${r.faultSummary.failed} failed` +
      `${t.faultsPostponed > 0 ? ` (${t.faultsPostponed} injection(s) postponed while a fault was open)` : ''}`,
    ...kinds.map((k) => `  ${k}`),
    ...failures,
    `main event-loop delay: p50 ${eld.p50Ms.toFixed(2)} ms, p99 ${eld.p99Ms.toFixed(2)} ms, max ${eld.maxMs.toFixed(1)} ms`,
    `memory: RSS peak ${mem.peakRssMb.toFixed(0)} MB, last ${mem.lastRssMb.toFixed(0)} MB; main heap peak ${mem.peakHeapUsedMb.toFixed(0)} MB; ` +
      `workers' heap peak ${mem.peakWorkerHeapMb === null ? '–' : `${mem.peakWorkerHeapMb.toFixed(0)} MB`}`,
    `growth after the ${seconds(r.warmupMs)} warm-up (median floor of the first half -> of the second half, limit, slope of the floors):`,
    ...(
      [
        ['RSS', mem.growth.rss],
        ['main live heap', mem.growth.liveHeap],
        ["workers' heap", mem.growth.workerHeap],
      ] as const
    ).map(([label, g]) => `  ${label}: ${growthLine(g)}`),
    ...(r.haproxy === undefined || r.haproxyVerdict === undefined ? [] : haproxySummaryLines(r.haproxy, r.haproxyVerdict, growthLine)),
    `memory: ${r.verdict.memory}. ${r.verdict.memoryRule}${r.haproxyVerdict === undefined ? '' : ` ${r.haproxyVerdict.rule}`}`,
    `verdict: ${r.verdict.pass ? 'PASS' : 'FAIL'} (${r.verdict.allFaultsRecovered ? 'every fault recovered' : 'a fault did not recover'}, memory ${r.verdict.memory}` +
      `${r.haproxyVerdict === undefined ? '' : r.haproxyVerdict.trafficClean ? ', no request failed outside a HAProxy fault' : ', requests FAILED outside HAProxy faults'})`,
  ];
  return `${lines.join('\n')}\n`;
}

function growthLine(g: SeriesGrowth | null): string {
  if (g === null) return 'too few samples after the warm-up';
  const sign = g.growthMb >= 0 ? '+' : '';
  return (
    `${g.firstHalfFloorMb.toFixed(1)} -> ${g.secondHalfFloorMb.toFixed(1)} MB (${sign}${g.growthMb.toFixed(1)} MB, ${sign}${g.growthPct.toFixed(1)} %; ` +
    `limit ${g.limitMb.toFixed(1)} MB), ${g.slopeMbPerMin.toFixed(1)} MB/min: ${g.growing ? 'GROWING' : 'bounded'}`
  );
}

function faultsByKind(faults: readonly FaultRecord[]): Record<FaultKind, FaultKindSummary> {
  const byKind = {} as Record<FaultKind, FaultKindSummary>;
  for (const kind of FAULT_KINDS) {
    const of = faults.filter((f) => f.kind === kind);
    const recovered = of.filter((f) => f.recoveredMs !== null);
    const longest = (from: (f: FaultRecord) => number | null): number | null =>
      recovered.length === 0 ? null : Math.max(...recovered.map((f) => (f.recoveredMs as number) - (from(f) ?? f.injectedMs)));
    byKind[kind] = {
      injected: of.length,
      recovered: recovered.length,
      failed: of.filter((f) => f.failure !== null).length,
      maxRecoveryMs: longest((f) => f.injectedMs),
      maxRecoveryAfterClearingMs: longest((f) => f.clearedMs),
    };
  }
  return byKind;
}

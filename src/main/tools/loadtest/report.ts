// The load test's report: what each child measures (ChildReport), what the parent adds (the
// probe figures), the whole run (LoadtestReport), the targets it judges, and the Markdown
// summary. The JSON report is these types serialised as they are.
import type { FloodOptions, LoadtestMode } from './flood-options.js';
import { MEMORY_SAMPLE_MS, type MemoryPoint, type MemorySettling } from './memory.js';

/** What one child measures; the parent adds the probe figures. */
export interface ChildReport extends MemorySettling {
  readonly mode: LoadtestMode;
  readonly threads: number | null;
  /** Changes applied to the stores during the flood (rate x duration, caught up after stalls). */
  readonly changes: number;
  readonly floodMs: number;
  readonly initialRenderMs: number;
  /** Main event-loop delay over the flood, net of the monitor's 1 ms resolution. */
  readonly eldP50Ms: number;
  readonly eldP99Ms: number;
  readonly eldMaxMs: number;
  /** Main event-loop utilisation over the flood, 0..1. */
  readonly elu: number;
  /** From the flood's start until the freshness render (or the wait's end). */
  readonly triggers: number;
  readonly renders: number;
  readonly coalesced: number;
  readonly failures: number;
  readonly criticalDrops: number;
  /** The most executes running at once (pool: worker tasks, abandoned ones included). */
  readonly maxRendersInFlight: number;
  /** The most items the Coordinator's mailbox held when a render ended. */
  readonly maxQueuedTriggers: number;
  readonly lossyDrops: number;
  readonly renderP50Ms: number;
  readonly renderP99Ms: number;
  /** Last change of the flood -> template.rendered covering it; a lower bound when `fresh` is false. */
  readonly freshnessMs: number;
  readonly fresh: boolean;
  /** Process RSS (all threads) and main-thread V8 heap in use, sampled every 100 ms. */
  readonly peakRssMb: number;
  readonly peakHeapMb: number;
  /** Peak of the pool workers' heap in use (summed over the workers); null for the inline mode. */
  readonly peakWorkerHeapMb: number | null;
  /** Max event-loop delay (net) per window, from the flood's start. */
  readonly seriesWindowMs: number;
  readonly series: readonly { readonly tMs: number; readonly eldMaxMs: number }[];
  /**
   * Memory per window from the flood's start until the end of the freshness wait (the window
   * ending at the flood's end is cut there). 1 s windows; shorter for floods under 20 s (at least
   * 20 windows per flood), longer for floods over 30 min (at most MAX_MEMORY_POINTS points).
   */
  readonly memoryWindowMs: number;
  readonly memorySeries: readonly MemoryPoint[];
}

export interface ModeReport extends ChildReport {
  /** Latency of GET /healthz on the child's main thread, probed from the parent during the flood. */
  readonly probeP50Ms: number;
  readonly probeP99Ms: number;
  /** Probes in the percentiles: answered, or timed out (recorded at the timeout). */
  readonly probes: number;
  /** Probes that failed, timed out, or were not sent because too many were outstanding. */
  readonly probeErrors: number;
}

export interface LoadtestReport {
  readonly options: FloodOptions;
  readonly environment: { readonly node: string; readonly platform: string; readonly cpus: number };
  /** How `rssSettled` is decided (RSS_SETTLED_RULE). */
  readonly rssSettledRule: string;
  readonly inline?: ModeReport;
  readonly pool?: ModeReport;
  /** The performance targets this run can judge, with the measured figures. */
  readonly targets?: readonly TargetCheck[];
}

export interface TargetCheck {
  readonly target: string;
  readonly limit: string;
  readonly measured: string;
  readonly met: boolean;
}

interface Row {
  readonly label: string;
  readonly value: (r: ModeReport) => number;
  readonly digits: number;
  /** Shown instead of the number, e.g. for a timed-out wait. */
  readonly note?: (r: ModeReport) => string | undefined;
  /** No pool/inline ratio (a verdict, or a figure that may be negative). */
  readonly noRatio?: boolean;
}

const ROWS: readonly Row[] = [
  { label: 'changes applied', value: (r) => r.changes, digits: 0 },
  { label: 'main event-loop delay p50 (ms)', value: (r) => r.eldP50Ms, digits: 2 },
  { label: 'main event-loop delay p99 (ms)', value: (r) => r.eldP99Ms, digits: 2 },
  { label: 'main event-loop delay max (ms)', value: (r) => r.eldMaxMs, digits: 1 },
  { label: 'main event-loop utilisation', value: (r) => r.elu, digits: 3 },
  { label: '/healthz latency p50 (ms)', value: (r) => r.probeP50Ms, digits: 2 },
  { label: '/healthz latency p99 (ms)', value: (r) => r.probeP99Ms, digits: 2 },
  { label: 'triggers published', value: (r) => r.triggers, digits: 0 },
  { label: 'renders executed', value: (r) => r.renders, digits: 0 },
  { label: 'triggers coalesced', value: (r) => r.coalesced, digits: 0 },
  { label: 'critical bus drops', value: (r) => r.criticalDrops, digits: 0 },
  { label: 'renders in flight, max', value: (r) => r.maxRendersInFlight, digits: 0 },
  { label: 'triggers queued behind a render, max', value: (r) => r.maxQueuedTriggers, digits: 0 },
  { label: 'render p50 (ms)', value: (r) => r.renderP50Ms, digits: 1 },
  { label: 'render p99 (ms)', value: (r) => r.renderP99Ms, digits: 1 },
  {
    label: 'freshness after the last change (ms)',
    value: (r) => r.freshnessMs,
    digits: 0,
    note: (r) => (r.fresh ? undefined : `> ${r.freshnessMs.toFixed(0)} (timed out)`),
  },
  { label: 'peak RSS (MB)', value: (r) => r.peakRssMb, digits: 0 },
  { label: 'peak main heap (MB)', value: (r) => r.peakHeapMb, digits: 0 },
  {
    label: "peak workers' heap, all workers (MB)",
    value: (r) => r.peakWorkerHeapMb ?? 0,
    digits: 0,
    note: (r) => (r.peakWorkerHeapMb === null ? '–' : undefined),
  },
  { label: 'RSS peak, first half of the flood (MB)', value: (r) => r.rssFirstHalfPeakMb, digits: 0 },
  { label: 'RSS peak, second half of the flood (MB)', value: (r) => r.rssSecondHalfPeakMb, digits: 0 },
  { label: 'RSS growth, second half over first (%)', value: (r) => r.rssGrowthPct, digits: 1, noRatio: true },
  {
    label: 'RSS slope over the second half (MB/min)',
    value: (r) => r.rssSlopeMbPerMin,
    digits: 1,
    note: (r) => `${r.rssSlopeMbPerMin.toFixed(1)} ± ${r.rssSlopeStdErrMbPerMin.toFixed(1)} (${r.rssSlopePctPerMin.toFixed(1)} % of peak)`,
    noRatio: true,
  },
  { label: 'RSS settled', value: (r) => (r.rssSettled ? 1 : 0), digits: 0, note: (r) => (r.rssSettled ? 'yes' : '**no**'), noRatio: true },
  {
    label: 'main heap, first / second half peak (MB)',
    value: (r) => r.heapSecondHalfPeakMb,
    digits: 0,
    note: (r) => `${r.heapFirstHalfPeakMb.toFixed(0)} / ${r.heapSecondHalfPeakMb.toFixed(0)}`,
    noRatio: true,
  },
  {
    label: "workers' heap, first / second half peak (MB)",
    value: (r) => r.workerHeapSecondHalfPeakMb ?? 0,
    digits: 0,
    note: (r) => `${r.workerHeapFirstHalfPeakMb?.toFixed(0) ?? '–'} / ${r.workerHeapSecondHalfPeakMb?.toFixed(0) ?? '–'}`,
    noRatio: true,
  },
];

export function markdownSummary(report: LoadtestReport): string {
  const o = report.options;
  const modes = (['inline', 'pool'] as const).filter((m) => report[m] !== undefined);
  const both = report.inline !== undefined && report.pool !== undefined;
  const threads = report.pool?.threads;
  const lines = [
    '## haptic-reconciler loadtest',
    '',
    `${o.ingresses} Ingresses, ${o.rate} changes/s for ${o.duration} s, seed ${o.seed}` +
      `${threads === undefined || threads === null ? '' : `, pool of ${threads} worker thread${threads === 1 ? '' : 's'}`}; ` +
      `Node ${report.environment.node}, ${report.environment.cpus} CPUs. Each mode ran in a fresh child process.`,
    '',
    `| metric | ${modes.join(' | ')}${both ? ' | pool/inline |' : ' |'}`,
    `|---|${modes.map(() => '---:').join('|')}|${both ? '---:|' : ''}`,
  ];
  for (const row of ROWS) {
    const cells = modes.map((m) => {
      const r = report[m] as ModeReport;
      return row.note?.(r) ?? row.value(r).toFixed(row.digits);
    });
    if (both) cells.push(row.noRatio === true ? '–' : ratio(row.value(report.pool as ModeReport), row.value(report.inline as ModeReport)));
    lines.push(`| ${row.label} | ${cells.join(' | ')} |`);
  }
  const targets = report.targets ?? evaluateTargets(report);
  if (targets.length > 0) {
    lines.push('', '| target | limit | measured | met |', '|---|---|---|---|');
    for (const t of targets) lines.push(`| ${t.target} | ${t.limit} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`);
  }
  const windows = [...new Set(modes.map((m) => (report[m] as ModeReport).memoryWindowMs))].join(' / ');
  lines.push(
    '',
    `Memory is sampled every ${MEMORY_SAMPLE_MS} ms and kept per ${windows} ms window (max RSS, heap at the window's end). ` +
      report.rssSettledRule,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * The performance targets a load test run can judge: event-loop delay of the pool against
 * inline (needs both modes), no critical drops, at most one render in flight plus one trigger
 * queued, freshness of the pool within twice its render p50 plus 50 ms, and RSS settling.
 */
export function evaluateTargets(report: Pick<LoadtestReport, 'inline' | 'pool'>): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const { inline, pool } = report;
  if (inline !== undefined && pool !== undefined) {
    const r = inline.eldP99Ms > 0 ? pool.eldP99Ms / inline.eldP99Ms : Number.POSITIVE_INFINITY;
    checks.push({
      target: 'main event-loop delay p99, pool / inline',
      limit: '≤ 0.1',
      measured: `${pool.eldP99Ms.toFixed(2)} / ${inline.eldP99Ms.toFixed(2)} ms = ${r.toPrecision(2)}`,
      met: r <= 0.1,
    });
  }
  for (const [mode, m] of [['inline', inline], ['pool', pool]] as const) {
    if (m === undefined) continue;
    checks.push({ target: `critical bus drops (${mode})`, limit: '0', measured: String(m.criticalDrops), met: m.criticalDrops === 0 });
    checks.push({
      target: `renders in flight / triggers queued (${mode})`,
      limit: '≤ 1 / ≤ 1',
      measured: `${m.maxRendersInFlight} / ${m.maxQueuedTriggers}`,
      met: m.maxRendersInFlight <= 1 && m.maxQueuedTriggers <= 1,
    });
  }
  if (pool !== undefined) {
    const limit = 2 * pool.renderP50Ms + 50;
    checks.push({
      target: 'freshness (pool)',
      limit: `≤ 2 × render p50 + 50 ms = ${limit.toFixed(0)} ms`,
      measured: `${pool.freshnessMs.toFixed(0)} ms${pool.fresh ? '' : ' (timed out)'}`,
      met: pool.fresh && pool.freshnessMs <= limit,
    });
    checks.push({
      target: 'RSS settles during the flood (pool)',
      limit: 'growth ≤ 5 %, slope ≤ 5 %/min',
      measured: `${pool.rssGrowthPct.toFixed(1)} %, ${pool.rssSlopePctPerMin.toFixed(1)} %/min`,
      met: pool.rssSettled,
    });
  }
  return checks;
}

function ratio(pool: number, inline: number): string {
  if (inline === 0) return '–';
  const r = pool / inline;
  return r >= 100 ? r.toFixed(0) : r >= 0.1 ? r.toFixed(2) : r.toPrecision(2);
}

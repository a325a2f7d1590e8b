// The load test's SVG charts, drawn from a LoadtestReport: the main event-loop delay over the
// flood (max per window, log scale) and memory over the flood and its freshness wait, both modes
// on one plot each.
import { lineChartSvg, type ChartSeries } from '../svg-chart.js';
import { SERIES_WINDOW_MS } from './flood-meter.js';
import type { LoadtestMode } from './flood-options.js';
import { MEMORY_WINDOW_MS, type MemoryPoint } from './memory.js';
import type { LoadtestReport } from './report.js';

export function eventLoopDelayChart(report: LoadtestReport): string {
  const colors: Record<LoadtestMode, string> = { inline: '#d62728', pool: '#1f77b4' };
  const series = (['inline', 'pool'] as const).flatMap((mode) => {
    const r = report[mode];
    if (r === undefined) return [];
    return [{ name: `${mode} (max ${r.eldMaxMs.toFixed(0)} ms)`, color: colors[mode], points: r.series.map((p) => [p.tMs / 1000, p.eldMaxMs] as const) }];
  });
  const windowMs = report.inline?.seriesWindowMs ?? report.pool?.seriesWindowMs ?? SERIES_WINDOW_MS;
  const o = report.options;
  return lineChartSvg({
    title: `Main event-loop delay: ${o.ingresses} Ingresses, ${o.rate} changes/s`,
    xLabel: 'time since the flood started (s)',
    yLabel: `event-loop delay, max per ${windowMs} ms (ms, log scale)`,
    series,
    logY: { floor: 0.1 },
  });
}

/** RSS (solid), main heap (dashed) and, for the pool, the workers' heap (dotted) over time, both modes on one plot. */
export function memoryChart(report: LoadtestReport): string {
  const colors: Record<LoadtestMode, { rss: string; heap: string; workers: string }> = {
    inline: { rss: '#d62728', heap: '#d62728', workers: '#ff9896' },
    pool: { rss: '#1f77b4', heap: '#1f77b4', workers: '#2ca02c' },
  };
  const series: ChartSeries[] = [];
  const floodEnds: number[] = [];
  for (const mode of ['inline', 'pool'] as const) {
    const r = report[mode];
    if (r === undefined) continue;
    const at = (p: MemoryPoint): number => p.tMs / 1000;
    floodEnds.push(r.floodMs / 1000);
    series.push({
      name: `${mode} RSS (${r.rssSettled ? 'settled' : 'not settled'})`,
      color: colors[mode].rss,
      points: r.memorySeries.map((p) => [at(p), p.rssMb] as const),
    });
    series.push({ name: `${mode} main heap`, color: colors[mode].heap, dash: '6 3', points: r.memorySeries.map((p) => [at(p), p.heapMb] as const) });
    const workers = r.memorySeries.flatMap((p) => (p.workerHeapMb === null ? [] : [[at(p), p.workerHeapMb] as const]));
    if (workers.length > 0) series.push({ name: `${mode} workers' heap`, color: colors[mode].workers, dash: '2 3', points: workers });
  }
  const windowMs = report.inline?.memoryWindowMs ?? report.pool?.memoryWindowMs ?? MEMORY_WINDOW_MS;
  const o = report.options;
  return lineChartSvg({
    title: `Memory during the flood: ${o.ingresses} Ingresses, ${o.rate} changes/s`,
    xLabel: 'time since the flood started (s)',
    yLabel: `MB (RSS: max per ${windowMs} ms; heaps: at its end)`,
    series,
    markers: floodEnds.length === 0 ? [] : [{ x: Math.max(...floodEnds), label: 'flood end' }],
  });
}

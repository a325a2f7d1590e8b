// The soak's SVG chart, drawn from a SoakReport: memory over time (RSS, the main heap used, total
// and live, external memory, the workers' heap) above the main event-loop delay per sample period
// (p50, p99, max; log scale), both with a marker at each fault injection. Two line charts from
// svg-chart.ts, stacked in one SVG document. With `--haproxy`, the memory chart also shows the RSS
// of HAProxy's master and workers, and two more charts follow: the traffic's latency per period
// (p50, p99, max; log scale), and HAProxy's workers (current and draining) with the requests
// that failed in each period, outside and during HAProxy faults.
import { lineChartSvg, type ChartMarker, type ChartSeries } from '../svg-chart.js';
import type { SoakReport } from './soak-report.js';
import type { SoakSample } from './soak-sampler.js';

const WIDTH = 900;
const HEIGHT = 420;

export function soakChart(report: SoakReport): string {
  const markers: ChartMarker[] = report.faults.map((f) => ({ x: f.injectedMs / 1000, label: f.kind }));
  const o = report.options;
  const what = `${o.ingresses} Ingresses, ${o.rate} changes/s, a fault every ${o.faultIntervalSeconds} s`;
  const at = (s: SoakSample): number => s.tMs / 1000;
  const line = (name: string, color: string, value: (s: SoakSample) => number | null, dash?: string): ChartSeries => ({
    name,
    color,
    ...(dash === undefined ? {} : { dash }),
    points: report.samples.flatMap((s) => {
      const v = value(s);
      return v === null ? [] : [[at(s), v] as const];
    }),
  });
  const memory = lineChartSvg({
    title: `Memory during the soak: ${what}`,
    xLabel: 'time since the flood started (s)',
    yLabel: `MB (per ${report.samplePeriodMs / 1000} s sample)`,
    width: WIDTH,
    height: HEIGHT,
    series: [
      line('RSS', '#1f77b4', (s) => s.rssMb),
      line('main heap used', '#d62728', (s) => s.heapUsedMb),
      line('main heap total', '#d62728', (s) => s.heapTotalMb, '6 3'),
      line('main live heap (after a full GC)', '#8c564b', (s) => s.liveHeapMb),
      line('external', '#9467bd', (s) => s.externalMb, '2 3'),
      line("workers' heap", '#2ca02c', (s) => s.workerHeapMb),
      ...(o.haproxy === undefined ? [] : [line('HAProxy RSS (master + workers)', '#ff7f0e', (s) => s.haproxy?.rssMb ?? null)]),
    ],
    markers,
  });
  const delay = lineChartSvg({
    title: `Main event-loop delay during the soak: ${what}`,
    xLabel: 'time since the flood started (s)',
    yLabel: `delay per ${report.samplePeriodMs / 1000} s sample (ms, log scale)`,
    width: WIDTH,
    height: HEIGHT,
    series: [
      line('p50', '#2ca02c', (s) => s.eldP50Ms),
      line('p99', '#ff7f0e', (s) => s.eldP99Ms),
      line('max', '#d62728', (s) => s.eldMaxMs),
    ],
    logY: { floor: 0.1 },
    markers,
  });
  if (o.haproxy === undefined) return stack([memory, delay]);
  const latency = lineChartSvg({
    title: `Request latency through HAProxy: ${o.haproxy.trafficRate} requests/s`,
    xLabel: 'time since the flood started (s)',
    yLabel: `latency per ${report.samplePeriodMs / 1000} s sample (ms, log scale)`,
    width: WIDTH,
    height: HEIGHT,
    series: [
      line('p50', '#2ca02c', (s) => (s.traffic === undefined || s.traffic.ok === 0 ? null : s.traffic.p50Ms)),
      line('p99', '#ff7f0e', (s) => (s.traffic === undefined || s.traffic.ok === 0 ? null : s.traffic.p99Ms)),
      line('max', '#d62728', (s) => (s.traffic === undefined || s.traffic.ok === 0 ? null : s.traffic.maxMs)),
    ],
    logY: { floor: 0.1 },
    markers,
  });
  const processes = lineChartSvg({
    title: `HAProxy workers (old-worker bound ${o.haproxy.maxOldWorkers}) and failed requests`,
    xLabel: 'time since the flood started (s)',
    yLabel: `count per ${report.samplePeriodMs / 1000} s sample`,
    width: WIDTH,
    height: HEIGHT,
    series: [
      line('workers (current + draining)', '#1f77b4', (s) => s.haproxy?.workers ?? null),
      line('old workers draining', '#1f77b4', (s) => s.haproxy?.oldWorkers ?? null, '6 3'),
      line('failed requests outside faults', '#d62728', (s) => s.traffic?.failed ?? null),
      line('failed requests during HAProxy faults', '#9467bd', (s) => s.traffic?.faultFailed ?? null, '2 3'),
    ],
    markers,
  });
  return stack([memory, delay, latency, processes]);
}

/** SVG documents of HEIGHT each, one under the other, as nested <svg> elements of one document. */
function stack(charts: readonly string[]): string {
  const inner = charts.map((svg, i) => svg.trimEnd().replace(/^<svg /, `<svg x="0" y="${i * HEIGHT}" `));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT * charts.length}" viewBox="0 0 ${WIDTH} ${HEIGHT * charts.length}">\n${inner.join('\n')}\n</svg>\n`;
}

// A hand-written SVG line chart for reports (the load test's event-loop delay and memory over
// time): one plot, several named series (solid or dashed), labelled axes with round-number ticks,
// grid lines, optional vertical markers and a legend (rows under the title, one unless it is too
// wide).
// Linear x axis; linear or logarithmic y axis. No dependencies: the output is a standalone
// SVG document as text.

export interface ChartSeries {
  readonly name: string;
  /** Any SVG colour. */
  readonly color: string;
  /** [x, y] pairs in drawing order (x ascending). */
  readonly points: readonly (readonly [number, number])[];
  /** An SVG stroke-dasharray, e.g. '6 3'; solid when undefined. */
  readonly dash?: string;
}

/** A vertical line across the plot at `x`, labelled at its top. */
export interface ChartMarker {
  readonly x: number;
  readonly label: string;
}

export interface LineChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
  /** @default 800 */
  readonly width?: number;
  /** @default 420 */
  readonly height?: number;
  /** A logarithmic y axis; values below `floor` (> 0) are drawn at `floor`. */
  readonly logY?: { readonly floor: number };
  readonly markers?: readonly ChartMarker[];
}

interface Axis {
  readonly ticks: readonly number[];
  /** Maps a data value to a pixel coordinate. */
  readonly scale: (value: number) => number;
}

const MARGIN = { left: 72, right: 24, top: 64, bottom: 56 } as const;
const LEGEND_ROW_HEIGHT = 18;

export function lineChartSvg(options: LineChartOptions): string {
  const width = options.width ?? 800;
  const height = options.height ?? 420;
  const legend = legendRows(options.series, width);
  // Each legend row beyond the first pushes the plot down.
  const top = MARGIN.top + (legend.length - 1) * LEGEND_ROW_HEIGHT;
  const plot = { x0: MARGIN.left, x1: width - MARGIN.right, y0: height - MARGIN.bottom, y1: top };
  let xMax = 0;
  let yMax = 0;
  for (const s of options.series) {
    for (const [x, y] of s.points) {
      xMax = Math.max(xMax, x);
      yMax = Math.max(yMax, y);
    }
  }
  for (const m of options.markers ?? []) xMax = Math.max(xMax, m.x);
  const x = linearAxis(xMax, 10, plot.x0, plot.x1);
  const y = options.logY === undefined ? linearAxis(yMax, 6, plot.y0, plot.y1) : logAxis(yMax, options.logY.floor, plot.y0, plot.y1);
  const clampY = (v: number): number => (options.logY === undefined ? v : Math.max(options.logY.floor, v));

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`,
  ];
  for (const t of x.ticks) {
    const px = fixed(x.scale(t));
    out.push(`<line x1="${px}" y1="${plot.y1}" x2="${px}" y2="${plot.y0}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${px}" y="${plot.y0 + 16}" text-anchor="middle">${formatTick(t)}</text>`);
  }
  for (const t of y.ticks) {
    const py = fixed(y.scale(t));
    out.push(`<line x1="${plot.x0}" y1="${py}" x2="${plot.x1}" y2="${py}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${plot.x0 - 6}" y="${py}" text-anchor="end" dominant-baseline="middle">${formatTick(t)}</text>`);
  }
  out.push(`<line x1="${plot.x0}" y1="${plot.y0}" x2="${plot.x1}" y2="${plot.y0}" stroke="black"/>`);
  out.push(`<line x1="${plot.x0}" y1="${plot.y0}" x2="${plot.x0}" y2="${plot.y1}" stroke="black"/>`);
  out.push(`<text x="${(plot.x0 + plot.x1) / 2}" y="${height - 14}" text-anchor="middle">${escapeXml(options.xLabel)}</text>`);
  const yMid = (plot.y0 + plot.y1) / 2;
  out.push(`<text x="16" y="${yMid}" text-anchor="middle" transform="rotate(-90 16 ${yMid})">${escapeXml(options.yLabel)}</text>`);

  for (const m of options.markers ?? []) {
    const px = fixed(x.scale(m.x));
    out.push(`<line x1="${px}" y1="${plot.y1}" x2="${px}" y2="${plot.y0}" stroke="#777" stroke-dasharray="4 4"/>`);
    out.push(`<text x="${px}" y="${plot.y1 + 12}" text-anchor="end" dx="-4" fill="#555">${escapeXml(m.label)}</text>`);
  }

  for (const s of options.series) {
    if (s.points.length === 0) continue;
    const coords = s.points.map(([px, py]) => `${fixed(x.scale(px))},${fixed(y.scale(clampY(py)))}`).join(' ');
    out.push(`<polyline fill="none" stroke="${escapeXml(s.color)}" stroke-width="1.5" stroke-linejoin="round"${dashAttr(s)} points="${coords}"/>`);
  }

  // Legend: rows between the title and the plot, each centred, so it never hides a line.
  legend.forEach((row, r) => {
    let lx = (width - row.reduce((sum, item) => sum + item.width, 0)) / 2;
    const ly = MARGIN.top - 16 + r * LEGEND_ROW_HEIGHT;
    for (const { series: s, width: w } of row) {
      out.push(`<line x1="${fixed(lx)}" y1="${ly}" x2="${fixed(lx + 24)}" y2="${ly}" stroke="${escapeXml(s.color)}" stroke-width="3"${dashAttr(s)}/>`);
      out.push(`<text x="${fixed(lx + 30)}" y="${ly}" dominant-baseline="middle">${escapeXml(s.name)}</text>`);
      lx += w;
    }
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

interface LegendItem {
  readonly series: ChartSeries;
  readonly width: number;
}

/** Legend items in rows no wider than the chart (less a small margin); always at least one row. */
function legendRows(series: readonly ChartSeries[], width: number): LegendItem[][] {
  const rows: LegendItem[][] = [[]];
  let used = 0;
  for (const s of series) {
    const item = { series: s, width: 34 + 7 * s.name.length + 16 };
    const row = rows.at(-1) as LegendItem[];
    if (row.length > 0 && used + item.width > width - 16) {
      rows.push([item]);
      used = item.width;
    } else {
      row.push(item);
      used += item.width;
    }
  }
  return rows;
}

function dashAttr(s: ChartSeries): string {
  return s.dash === undefined ? '' : ` stroke-dasharray="${escapeXml(s.dash)}"`;
}

/** 0 .. a round number >= max, with about `count` round-number ticks. */
function linearAxis(max: number, count: number, from: number, to: number): Axis {
  const step = niceStep(max > 0 ? max : 1, count);
  const top = Math.max(step, Math.ceil(max / step - 1e-9) * step);
  const ticks: number[] = [];
  for (let i = 0; i * step <= top + step / 1e6; i++) ticks.push(Number((i * step).toPrecision(12)));
  return { ticks, scale: (v) => from + ((to - from) * v) / top };
}

/** Powers of ten from below `floor` to above `max`. */
function logAxis(max: number, floor: number, from: number, to: number): Axis {
  if (!(floor > 0)) throw new RangeError(`a log axis needs a positive floor, got ${floor}`);
  const lo = Math.floor(Math.log10(floor));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(max, floor))));
  const ticks: number[] = [];
  for (let e = lo; e <= hi; e++) ticks.push(Number((10 ** e).toPrecision(12)));
  return { ticks, scale: (v) => from + ((to - from) * (Math.log10(v) - lo)) / (hi - lo) };
}

/** 1, 2 or 5 times a power of ten, near range / count. */
function niceStep(range: number, count: number): number {
  const raw = range / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const normalized = raw / magnitude;
  return (normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10) * magnitude;
}

function formatTick(value: number): string {
  return String(Number(value.toPrecision(6)));
}

function fixed(value: number): string {
  return value.toFixed(1);
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

// Smoke test of `haptic-reconciler loadtest`: a very short flood in both modes, each in its own
// child process, through the real CLI. Checks the reports are complete, not the numbers' size;
// plus the RSS settling verdict on made-up series.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memorySettling, memoryWindowMs, type MemoryPoint } from '../../../src/main/tools/loadtest/memory.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = join(ROOT, 'src', 'main', 'cli', 'cli.ts');

const KEYS = [
  'eldP50Ms',
  'eldP99Ms',
  'eldMaxMs',
  'elu',
  'probeP50Ms',
  'probeP99Ms',
  'triggers',
  'renders',
  'coalesced',
  'criticalDrops',
  'maxRendersInFlight',
  'maxQueuedTriggers',
  'renderP50Ms',
  'renderP99Ms',
  'freshnessMs',
  'peakRssMb',
  'peakHeapMb',
  'rssFirstHalfPeakMb',
  'rssSecondHalfPeakMb',
  'rssGrowthPct',
  'rssSlopeMbPerMin',
  'rssSlopeStdErrMbPerMin',
  'rssSlopePctPerMin',
  'heapFirstHalfPeakMb',
  'heapSecondHalfPeakMb',
  'memoryWindowMs',
] as const;

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

let dir: string;
let stdout: string;
let report: Record<string, Record<string, unknown>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'haptic-loadtest-'));
  const args = ['--import', 'tsx', CLI, 'loadtest', '--ingresses', '200', '--rate', '500', '--duration', '2', '--mode', 'both'];
  const outputs = ['--json', join(dir, 'report.json'), '--markdown', join(dir, 'summary.md'), '--svg', join(dir, 'eld.svg')];
  // Rejects (failing the test) on a non-zero exit: critical drops, failed renders, no freshness.
  ({ stdout } = await run(process.execPath, [...args, ...outputs], { cwd: ROOT, timeout: 150_000, maxBuffer: 16 * 2 ** 20 }));
  report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as typeof report;
}, 180_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('loadtest (smoke)', () => {
  it.each(['inline', 'pool'])('reports every stable metric as a number for the %s mode, with no critical drop', (mode) => {
    const r = report[mode];
    expect(r, `${mode} report`).toBeDefined();
    for (const key of KEYS) {
      expect(typeof r?.[key], `${mode}.${key}`).toBe('number');
      expect(Number.isFinite(r?.[key]), `${mode}.${key} is finite`).toBe(true);
    }
    expect(r?.criticalDrops).toBe(0);
    expect(r?.changes).toBe(1000);
    expect(r?.renders as number).toBeGreaterThan(0);
    expect(r?.triggers as number).toBeGreaterThan(0);
    expect(r?.fresh).toBe(true);
    expect(Array.isArray(r?.series) && (r?.series as unknown[]).length > 0).toBe(true);
    expect(typeof r?.rssSettled).toBe('boolean');
    // The Coordinator never runs two renders at once, and coalescing keeps one trigger queued.
    expect(r?.maxRendersInFlight).toBe(1);
    expect(r?.maxQueuedTriggers as number).toBeLessThanOrEqual(1);
  });

  it('judges the targets it can: drops, renders in flight, freshness and memory per mode, and the pool/inline delay ratio', () => {
    const targets = (report as unknown as { targets: { target: string; limit: string; measured: string; met: boolean }[] }).targets;
    expect(targets.map((t) => t.target)).toEqual([
      'main event-loop delay p99, pool / inline',
      'critical bus drops (inline)',
      'renders in flight / triggers queued (inline)',
      'critical bus drops (pool)',
      'renders in flight / triggers queued (pool)',
      'freshness (pool)',
      'RSS settles during the flood (pool)',
    ]);
    for (const t of targets) expect(typeof t.met, t.target).toBe('boolean');
    expect(targets.find((t) => t.target === 'critical bus drops (pool)')?.met).toBe(true);
    expect(stdout).toContain('| target | limit | measured | met |');
  });

  it.each(['inline', 'pool'])('reports a bounded memory series covering the flood for the %s mode', (mode) => {
    const r = report[mode] as Record<string, unknown>;
    const series = r.memorySeries as MemoryPoint[];
    const windowMs = r.memoryWindowMs as number;
    expect(Array.isArray(series)).toBe(true);
    expect(series.length).toBeGreaterThan(0);
    // Points are at least half a window apart (only a final sliver is shorter, and it is merged).
    const last = series.at(-1) as MemoryPoint;
    expect(series.length).toBeLessThanOrEqual(Math.ceil(last.tMs / (windowMs / 2)) + 2);
    expect(series.length).toBeLessThanOrEqual(2000);
    expect(last.tMs).toBeGreaterThanOrEqual((r.floodMs as number) - 1);
    let previous = 0;
    for (const p of series) {
      expect(Object.keys(p).sort()).toEqual(['heapMb', 'rssMb', 'tMs', 'workerHeapMb']);
      expect(isFiniteNumber(p.tMs) && p.tMs > previous, `tMs ${p.tMs} after ${previous}`).toBe(true);
      previous = p.tMs;
      expect(isFiniteNumber(p.rssMb) && p.rssMb > 0, `rssMb ${p.rssMb}`).toBe(true);
      expect(isFiniteNumber(p.heapMb) && p.heapMb > 0, `heapMb ${p.heapMb}`).toBe(true);
      expect(p.workerHeapMb === null || (isFiniteNumber(p.workerHeapMb) && p.workerHeapMb > 0), `workerHeapMb ${p.workerHeapMb}`).toBe(true);
    }
    expect(Math.max(...series.map((p) => p.rssMb))).toBeLessThanOrEqual(r.peakRssMb as number);
    for (const key of ['workerHeapFirstHalfPeakMb', 'workerHeapSecondHalfPeakMb']) {
      expect(r[key] === null || isFiniteNumber(r[key]), key).toBe(true);
    }
    if (mode === 'pool') {
      expect(isFiniteNumber(r.peakWorkerHeapMb) && r.peakWorkerHeapMb > 0).toBe(true);
      expect(series.some((p) => p.workerHeapMb !== null)).toBe(true);
    } else {
      expect(r.peakWorkerHeapMb).toBeNull();
      expect(series.every((p) => p.workerHeapMb === null)).toBe(true);
    }
  });

  it('prints the Markdown summary with both modes side by side, and writes it and the SVG chart', async () => {
    expect(stdout).toContain('| metric | inline | pool | pool/inline |');
    expect(stdout).toContain('critical bus drops');
    expect(stdout).toContain(await readFile(join(dir, 'summary.md'), 'utf8'));
    const svg = await readFile(join(dir, 'eld.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg).toContain('inline (max');
    expect(svg).toContain('pool (max');
  });

  it('states the settling rule, shows the RSS figures, and writes the memory chart next to the SVG', async () => {
    expect(typeof report.rssSettledRule).toBe('string');
    expect(stdout).toContain(report.rssSettledRule as unknown as string);
    expect(stdout).toContain('| RSS peak, first half of the flood (MB) |');
    expect(stdout).toContain('| RSS settled |');
    const svg = await readFile(join(dir, 'eld-rss.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    // RSS and main heap of each mode, and the pool workers' heap.
    expect(svg.match(/<polyline /g)).toHaveLength(5);
    expect(svg).toMatch(/inline RSS \((settled|not settled)\)/);
    expect(svg).toMatch(/pool RSS \((settled|not settled)\)/);
    expect(svg).toContain("pool workers' heap");
    expect(svg).toContain('flood end');
  });
});

describe('RSS settling verdict', () => {
  /** One point per second over a 60 s flood, then 2 s of freshness wait; RSS by `rss(t)` (t in s). */
  const series = (rss: (t: number) => number): MemoryPoint[] =>
    Array.from({ length: 62 }, (_, i) => ({ tMs: (i + 1) * 1000, rssMb: rss(i + 1), heapMb: 50, workerHeapMb: null }));

  it('is settled when RSS plateaus after a ramp, whatever happens after the flood', () => {
    const s = memorySettling(
      series((t) => (t > 60 ? 900 : Math.min(400, 100 + 50 * t) + (t % 2))),
      60_000,
    );
    expect(s.rssFirstHalfPeakMb).toBe(401);
    expect(s.rssSecondHalfPeakMb).toBe(401);
    expect(s.rssGrowthPct).toBe(0);
    expect(Math.abs(s.rssSlopeMbPerMin)).toBeLessThan(1);
    expect(s.rssSettled).toBe(true);
    expect(s.workerHeapFirstHalfPeakMb).toBeNull();
  });

  it('is not settled when RSS keeps growing', () => {
    const s = memorySettling(series((t) => 300 + 0.5 * t), 60_000);
    expect(s.rssFirstHalfPeakMb).toBe(315);
    expect(s.rssSecondHalfPeakMb).toBe(330);
    expect(s.rssSlopeMbPerMin).toBeCloseTo(30, 6);
    // A perfect line leaves no residuals: the slope is exact.
    expect(s.rssSlopeStdErrMbPerMin).toBeCloseTo(0, 6);
    expect(s.rssSlopePctPerMin).toBeCloseTo((30 / 330) * 100, 1);
    // Under 5% growth between the half peaks, but the trend is ~9% of the peak per minute.
    expect(s.rssGrowthPct).toBeLessThan(5);
    expect(s.rssSettled).toBe(false);
  });

  it('reports how much of the slope garbage-collection swings alone could explain', () => {
    // A flat level with a ±40 MB sawtooth: the slope is near 0, its standard error is not.
    const s = memorySettling(series((t) => 800 + (t % 4 < 2 ? 40 : -40)), 60_000);
    expect(Math.abs(s.rssSlopeMbPerMin)).toBeLessThan(2 * s.rssSlopeStdErrMbPerMin);
    expect(s.rssSlopeStdErrMbPerMin).toBeGreaterThan(10);
  });

  it('is not settled when the second half peaks well above the first', () => {
    const s = memorySettling(series((t) => (t === 50 ? 400 : 300)), 60_000);
    expect(s.rssGrowthPct).toBeCloseTo(33.33, 2);
    expect(s.rssSettled).toBe(false);
  });

  it('sizes memory windows: 1 s, at least 20 per flood, bounded for long floods', () => {
    expect(memoryWindowMs(60)).toBe(1000);
    expect(memoryWindowMs(2)).toBe(100);
    expect(memoryWindowMs(10)).toBe(500);
    expect(memoryWindowMs(0.5)).toBe(100);
    expect((3600 * 1000 + 60_000) / memoryWindowMs(3600)).toBeLessThanOrEqual(2000);
  });
});

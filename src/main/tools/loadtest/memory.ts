// Memory over the flood: MemorySampler keeps process RSS and the main and worker heaps per
// window, and memorySettling judges from that series whether RSS settles (RSS_SETTLED_RULE).
// The window size grows with the flood so the series stays bounded (memoryWindowMs).
import { performance } from 'node:perf_hooks';
import { FRESHNESS_TIMEOUT_MS } from './flood-options.js';
import { round, toMb } from './units.js';

/** One window of the memory series. */
export interface MemoryPoint {
  /** End of the window, ms since the flood started. */
  readonly tMs: number;
  /** Max process RSS (all threads) sampled in the window. */
  readonly rssMb: number;
  /** Main-thread V8 heap in use at the window's last sample. */
  readonly heapMb: number;
  /**
   * The pool workers' V8 heap in use, summed over the workers, from the last status they answered
   * in the window (a busy worker answers between renders); null when none arrived, and always for
   * the inline mode.
   */
  readonly workerHeapMb: number | null;
}

/** Whether RSS settles over the flood (see RSS_SETTLED_RULE). */
export interface MemorySettling {
  /** Max RSS of the windows ending in the first half of the flood. */
  readonly rssFirstHalfPeakMb: number;
  /** Max RSS of the windows ending in the second half of the flood. */
  readonly rssSecondHalfPeakMb: number;
  /** rssSecondHalfPeakMb over rssFirstHalfPeakMb, as growth in % (negative when it fell). */
  readonly rssGrowthPct: number;
  /** Least-squares slope of the windows' RSS over the second half of the flood. */
  readonly rssSlopeMbPerMin: number;
  /** rssSlopeMbPerMin in % of the flood's RSS peak (the larger half peak). */
  readonly rssSlopePctPerMin: number;
  /**
   * Standard error of that slope (MB/min): how far garbage-collection swings alone move it. A
   * slope within about two standard errors of the limit is a noise-limited verdict.
   */
  readonly rssSlopeStdErrMbPerMin: number;
  readonly rssSettled: boolean;
  /** The same halves for the main heap (its value at each window's end) and the workers' heap. */
  readonly heapFirstHalfPeakMb: number;
  readonly heapSecondHalfPeakMb: number;
  readonly workerHeapFirstHalfPeakMb: number | null;
  readonly workerHeapSecondHalfPeakMb: number | null;
}

/** How often memory is sampled; also the shortest window. */
export const MEMORY_SAMPLE_MS = 100;
/** The memory window of floods from 20 s to 30 min (see memoryWindowMs). */
export const MEMORY_WINDOW_MS = 1000;
/** Fewest memory windows per flood (shorter floods get shorter windows, down to MEMORY_SAMPLE_MS). */
const MIN_MEMORY_WINDOWS = 20;
const MAX_MEMORY_POINTS = 2000;
/** A worker status not answered by then no longer holds back the next request. */
const WORKER_STATUS_TIMEOUT_MS = 5000;
/** Settling bounds: the second half of the flood may add this much to the first half's RSS peak ... */
const RSS_SETTLED_MAX_GROWTH_PCT = 5;
/** ... and its RSS trend may rise this fast, in % of the flood's RSS peak per minute. */
const RSS_SETTLED_MAX_SLOPE_PCT_PER_MIN = 5;
export const RSS_SETTLED_RULE =
  `RSS is settled when, splitting the flood (its start to its last change) into halves by the end time of each memory window, ` +
  `the second half's peak RSS is at most ${RSS_SETTLED_MAX_GROWTH_PCT}% above the first half's (rssGrowthPct <= ${RSS_SETTLED_MAX_GROWTH_PCT}) ` +
  `and the least-squares slope of the second half's per-window peak RSS is at most ${RSS_SETTLED_MAX_SLOPE_PCT_PER_MIN}% of the flood's RSS peak per minute ` +
  `(rssSlopePctPerMin <= ${RSS_SETTLED_MAX_SLOPE_PCT_PER_MIN}). The freshness wait after the flood is plotted but not judged.`;

/** 1 s; shorter for short floods (MIN_MEMORY_WINDOWS per flood); whole seconds, longer, for long ones. */
export function memoryWindowMs(durationSeconds: number): number {
  const short = Math.floor((durationSeconds * 1000) / MIN_MEMORY_WINDOWS / MEMORY_SAMPLE_MS) * MEMORY_SAMPLE_MS;
  const window = Math.max(MEMORY_SAMPLE_MS, Math.min(MEMORY_WINDOW_MS, short));
  // The series runs until the end of the freshness wait; keep well under the cap.
  const longestMs = durationSeconds * 1000 + FRESHNESS_TIMEOUT_MS;
  const budget = MAX_MEMORY_POINTS - 100;
  return longestMs / window <= budget ? window : Math.ceil(longestMs / budget / 1000) * 1000;
}

/**
 * The settling figures of a memory series (see RSS_SETTLED_RULE). Points ending after
 * `floodEndMs` (the freshness wait) are left out; each point counts in the half its window ends in.
 */
export function memorySettling(points: readonly MemoryPoint[], floodEndMs: number): MemorySettling {
  const flood = points.filter((p) => p.tMs <= floodEndMs);
  const first = flood.filter((p) => p.tMs <= floodEndMs / 2);
  const second = flood.filter((p) => p.tMs > floodEndMs / 2);
  const peak = (of: readonly MemoryPoint[], value: (p: MemoryPoint) => number | null): number | null => {
    const values = of.map(value).filter((v): v is number => v !== null);
    return values.length === 0 ? null : Math.max(...values);
  };
  const rssFirst = peak(first, (p) => p.rssMb) ?? 0;
  const rssSecond = peak(second, (p) => p.rssMb) ?? rssFirst;
  const rssPeak = Math.max(rssFirst, rssSecond);
  const growthPct = rssFirst > 0 ? (rssSecond / rssFirst - 1) * 100 : 0;
  const { slope: slopeMbPerMin, stdErr: slopeStdErr } = leastSquaresSlope(second.map((p) => [p.tMs / 60_000, p.rssMb] as const));
  const slopePctPerMin = rssPeak > 0 ? (slopeMbPerMin / rssPeak) * 100 : 0;
  return {
    rssFirstHalfPeakMb: round(rssFirst, 1),
    rssSecondHalfPeakMb: round(rssSecond, 1),
    rssGrowthPct: round(growthPct, 2),
    rssSlopeMbPerMin: round(slopeMbPerMin, 2),
    rssSlopePctPerMin: round(slopePctPerMin, 2),
    rssSlopeStdErrMbPerMin: round(slopeStdErr, 2),
    rssSettled: growthPct <= RSS_SETTLED_MAX_GROWTH_PCT && slopePctPerMin <= RSS_SETTLED_MAX_SLOPE_PCT_PER_MIN,
    heapFirstHalfPeakMb: round(peak(first, (p) => p.heapMb) ?? 0, 1),
    heapSecondHalfPeakMb: round(peak(second, (p) => p.heapMb) ?? 0, 1),
    workerHeapFirstHalfPeakMb: peak(first, (p) => p.workerHeapMb),
    workerHeapSecondHalfPeakMb: peak(second, (p) => p.workerHeapMb),
  };
}

/**
 * Memory over the flood and the freshness wait: process RSS and main-thread heap sampled every
 * MEMORY_SAMPLE_MS (their peaks, as before), and one point per window (the window's max RSS, the
 * heap at its end). For the pool mode it also asks the workers for their heap once per window,
 * with at most one request outstanding (a request unanswered for WORKER_STATUS_TIMEOUT_MS stops
 * holding back the next), and keeps the latest answer of each window. Bounded: the points are
 * capped at MAX_MEMORY_POINTS, which memoryWindowMs keeps out of reach.
 */
export class MemorySampler {
  readonly windowMs: number;
  peakRss = 0;
  peakHeap = 0;
  peakWorkerHeap: number | null = null;
  readonly points: MemoryPoint[] = [];
  readonly #workerHeapBytes: (() => Promise<number>) | null;
  readonly #started = performance.now();
  readonly #timer: NodeJS.Timeout;
  #windowStart = this.#started;
  #windowRss = 0;
  #heap = 0;
  #windowWorkerHeap: number | null = null;
  #statusSince: number | undefined;
  #floodEndMs: number | undefined;
  #stopped = false;

  constructor(windowMs: number, workerHeapBytes: (() => Promise<number>) | null) {
    this.windowMs = windowMs;
    this.#workerHeapBytes = workerHeapBytes;
    this.#sample();
    void this.#requestWorkerHeap();
    this.#timer = setInterval(() => this.#tick(), MEMORY_SAMPLE_MS);
  }

  /** ms since the start at which the flood ended (the last window of the flood ends there). */
  get floodEndMs(): number {
    return this.#floodEndMs ?? this.#elapsedMs();
  }

  /** Cuts the current window at the flood's end, so the flood's windows end within it. */
  markFloodEnd(): void {
    if (this.#stopped || this.#floodEndMs !== undefined) return;
    this.#sample();
    this.#closeWindow(true);
    this.#floodEndMs = this.points.at(-1)?.tMs ?? round(this.#elapsedMs(), 0);
  }

  /** Stops sampling after a last worker status (bounded) and a last sample. Idempotent. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    clearInterval(this.#timer);
    this.#statusSince = undefined;
    await this.#requestWorkerHeap();
    if (this.#stopped) return;
    this.#stopped = true;
    this.#sample();
    this.#closeWindow(true);
  }

  #tick(): void {
    this.#sample();
    if (performance.now() - this.#windowStart >= this.windowMs) {
      this.#closeWindow(false);
      void this.#requestWorkerHeap();
    }
  }

  #sample(): void {
    const usage = process.memoryUsage();
    this.peakRss = Math.max(this.peakRss, usage.rss);
    this.peakHeap = Math.max(this.peakHeap, usage.heapUsed);
    this.#windowRss = Math.max(this.#windowRss, usage.rss);
    this.#heap = usage.heapUsed;
  }

  /** Resolves once the workers answered, failed, or WORKER_STATUS_TIMEOUT_MS passed. */
  async #requestWorkerHeap(): Promise<void> {
    const query = this.#workerHeapBytes;
    const now = performance.now();
    if (query === null || this.#stopped) return;
    if (this.#statusSince !== undefined && now - this.#statusSince < WORKER_STATUS_TIMEOUT_MS) return;
    this.#statusSince = now;
    let timer: NodeJS.Timeout | undefined;
    const answered = query().then(
      (bytes) => {
        if (this.#statusSince === now) this.#statusSince = undefined;
        if (this.#stopped) return;
        this.#windowWorkerHeap = bytes;
        this.peakWorkerHeap = Math.max(this.peakWorkerHeap ?? 0, bytes);
      },
      () => {
        // A worker being replaced: the next window asks again.
        if (this.#statusSince === now) this.#statusSince = undefined;
      },
    );
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, WORKER_STATUS_TIMEOUT_MS);
    });
    await Promise.race([answered, timeout]).finally(() => clearTimeout(timer));
  }

  /** `final`: a sliver of a window (under half) joins the previous point rather than standing alone. */
  #closeWindow(final: boolean): void {
    const point: MemoryPoint = {
      tMs: round(this.#elapsedMs(), 0),
      rssMb: toMb(this.#windowRss),
      heapMb: toMb(this.#heap),
      workerHeapMb: this.#windowWorkerHeap === null ? null : toMb(this.#windowWorkerHeap),
    };
    this.#windowStart = performance.now();
    this.#windowRss = 0;
    this.#windowWorkerHeap = null;
    const last = this.points.at(-1);
    if (last !== undefined && point.tMs <= last.tMs) {
      // Closed within the same millisecond as the previous point (stop right after the flood's
      // end): one point per instant, so the series stays strictly increasing in time.
      this.points[this.points.length - 1] = { ...last, rssMb: Math.max(last.rssMb, point.rssMb) };
    } else if (final && last !== undefined && point.tMs - last.tMs < this.windowMs / 2 && last.tMs !== this.#floodEndMs) {
      this.points[this.points.length - 1] = {
        tMs: point.tMs,
        rssMb: Math.max(last.rssMb, point.rssMb),
        heapMb: point.heapMb,
        workerHeapMb: point.workerHeapMb ?? last.workerHeapMb,
      };
    } else if (this.points.length < MAX_MEMORY_POINTS) {
      this.points.push(point);
    }
  }

  #elapsedMs(): number {
    return performance.now() - this.#started;
  }
}

/**
 * Slope of the least-squares line through [x, y] points, with its standard error (0 and 0 with
 * fewer than two distinct x; the error needs at least three points).
 */
function leastSquaresSlope(points: readonly (readonly [number, number])[]): { slope: number; stdErr: number } {
  if (points.length < 2) return { slope: 0, stdErr: 0 };
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - meanX) * (y - meanY);
    sxx += (x - meanX) ** 2;
  }
  if (sxx === 0) return { slope: 0, stdErr: 0 };
  const slope = sxy / sxx;
  if (points.length < 3) return { slope, stdErr: 0 };
  let residuals = 0;
  for (const [x, y] of points) residuals += (y - (meanY + slope * (x - meanX))) ** 2;
  return { slope, stdErr: Math.sqrt(residuals / (points.length - 2) / sxx) };
}

// Whether memory grows without bound over a soak: each series (RSS, the main thread's live heap,
// the workers' heap) is judged after a warm-up by its floor, the lowest sample of each short
// block, comparing the floors' median over the two halves of the span (GROWTH_RULE). A leak
// raises the floor; the garbage-collection sawtooth (tens of MB between collections) and a
// fault's spike (a worker filling its heap until it is terminated) do not, though either would
// decide a comparison of peaks, means or raw slopes. The floors' least-squares slope is
// reported, in MB per minute, to show the trend.
import { round } from '../loadtest/units.js';

export interface SeriesGrowth {
  /** The floors' medians over the first and second half of the span after the warm-up. */
  readonly firstHalfFloorMb: number;
  readonly secondHalfFloorMb: number;
  readonly growthMb: number;
  /** growthMb over the first half's floor, in %. */
  readonly growthPct: number;
  /** Least-squares slope of the floors. */
  readonly slopeMbPerMin: number;
  /** The most the second half's floor may exceed the first half's. */
  readonly limitMb: number;
  readonly growing: boolean;
}

/** The warm-up is this share of the soak (caches fill, V8 sizes its heap) ... */
const WARMUP_SHARE = 0.25;
/** ... but no longer than this. */
const MAX_WARMUP_MS = 60_000;
/** The second half's floor may exceed the first half's by this share of it ... */
const GROWTH_LIMIT_PCT = 10;
/** ... or by this much, whichever is more: a few MB on a small heap are allocator noise. */
const GROWTH_LIMIT_MIN_MB = 5;
/** A floor is the lowest sample of a block this long ... */
const FLOOR_BLOCK_MS = 10_000;
/** ... or shorter, so that the span after the warm-up has at least this many blocks. */
const MIN_BLOCKS = 16;
/** Fewest floors in each half for a verdict. */
const MIN_HALF_FLOORS = 2;

export const GROWTH_RULE =
  `Memory is bounded when, for each of RSS, the main thread's live heap (in use after V8's own full collections) and the workers' heap in use, after the warm-up ` +
  `(the first ${WARMUP_SHARE * 100}% of the soak, at most ${MAX_WARMUP_MS / 1000} s) the series' floor (the lowest sample of each ` +
  `${FLOOR_BLOCK_MS / 1000} s block, or of each 1/${MIN_BLOCKS} of the span when that is shorter) has a median over the second half ` +
  `of the span at most max(${GROWTH_LIMIT_MIN_MB} MB, ${GROWTH_LIMIT_PCT}% of the first half's) above its median over the first half. ` +
  `Floors, so that neither the garbage-collection sawtooth nor a fault's spike decides; their slope is reported as the trend. ` +
  `The halves' middles lie half the span apart, so a longer soak catches slower growth.`;

export const HAPROXY_GROWTH_RULE =
  `With --haproxy, the RSS of HAProxy's master and workers together is judged as the other memory series; HAProxy's worker count ` +
  `(current and draining) grows when the floor of its second half exceeds the first half's, or when it ever exceeds ` +
  `1 + the old-worker bound + 1 (a reload's new worker before the oldest past the bound is stopped).`;

export function warmupMs(durationMs: number): number {
  return Math.min(MAX_WARMUP_MS, Math.round(durationMs * WARMUP_SHARE));
}

/**
 * The growth of one series of [ms since the start, MB] points in time order, judging the points
 * from `fromMs` on; null when either half has fewer than MIN_HALF_FLOORS floors.
 */
export function seriesGrowth(points: readonly (readonly [number, number])[], fromMs: number): SeriesGrowth | null {
  const halves = halfFloors(points, fromMs);
  if (halves === null) return null;
  const { firstFloor, secondFloor, floors } = halves;
  const growthMb = secondFloor - firstFloor;
  const limitMb = Math.max(GROWTH_LIMIT_MIN_MB, (firstFloor * GROWTH_LIMIT_PCT) / 100);
  return {
    firstHalfFloorMb: round(firstFloor, 1),
    secondHalfFloorMb: round(secondFloor, 1),
    growthMb: round(growthMb, 1),
    growthPct: firstFloor > 0 ? round((growthMb / firstFloor) * 100, 2) : 0,
    slopeMbPerMin: round(slopePerMinute(floors), 2),
    limitMb: round(limitMb, 1),
    growing: growthMb > limitMb,
  };
}

/** The lowest point of each block of `blockMs` from `fromMs`, at its block's middle; every point is its own block when `blockMs` is 0. */
function blockFloors(points: readonly (readonly [number, number])[], fromMs: number, blockMs: number): (readonly [number, number])[] {
  if (!(blockMs > 0)) return [...points];
  const lowest = new Map<number, number>();
  for (const [t, mb] of points) {
    const block = Math.floor((t - fromMs) / blockMs);
    lowest.set(block, Math.min(lowest.get(block) ?? Number.POSITIVE_INFINITY, mb));
  }
  return [...lowest].map(([block, mb]) => [fromMs + (block + 0.5) * blockMs, mb] as const);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The least-squares line's slope through [ms, MB] points, in MB per minute (0 without a spread in time). */
function slopePerMinute(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  const sums = points.reduce(
    (s, [ms, mb]) => {
      const minutes = ms / 60_000;
      return { x: s.x + minutes, y: s.y + mb, xx: s.xx + minutes * minutes, xy: s.xy + minutes * mb };
    },
    { x: 0, y: 0, xx: 0, xy: 0 },
  );
  const spread = n * sums.xx - sums.x * sums.x;
  return spread > 0 ? (n * sums.xy - sums.x * sums.y) / spread : 0;
}

/** Whether a count (HAProxy's workers) grows: its floors as for memory, and its peak against a bound. */
export interface CountGrowth {
  readonly firstHalfFloor: number;
  readonly secondHalfFloor: number;
  readonly peak: number;
  readonly bound: number;
  /** The second half's floor above the first half's, or the peak above the bound. */
  readonly growing: boolean;
}

/** A count's growth from `fromMs` on (floors as seriesGrowth takes them); null when either half has too few floors. */
export function countGrowth(points: readonly (readonly [number, number])[], fromMs: number, bound: number): CountGrowth | null {
  const halves = halfFloors(points, fromMs);
  if (halves === null) return null;
  const { firstFloor: firstHalfFloor, secondFloor: secondHalfFloor, judged } = halves;
  const peak = Math.max(...judged.map(([, n]) => n));
  return { firstHalfFloor, secondHalfFloor, peak, bound, growing: secondHalfFloor > firstHalfFloor || peak > bound };
}

/**
 * The median floor of each half of the points from `fromMs` on (floors taken per block), the
 * points judged and the floors; null when either half has fewer than MIN_HALF_FLOORS floors.
 */
function halfFloors(
  points: readonly (readonly [number, number])[],
  fromMs: number,
): { readonly firstFloor: number; readonly secondFloor: number; readonly judged: readonly (readonly [number, number])[]; readonly floors: readonly (readonly [number, number])[] } | null {
  const judged = points.filter(([t]) => t >= fromMs);
  const last = judged.at(-1);
  if (last === undefined) return null;
  const spanMs = last[0] - fromMs;
  const floors = blockFloors(judged, fromMs, Math.min(FLOOR_BLOCK_MS, spanMs / MIN_BLOCKS));
  const middleMs = fromMs + spanMs / 2;
  const first = floors.filter(([t]) => t <= middleMs).map(([, v]) => v);
  const second = floors.filter(([t]) => t > middleMs).map(([, v]) => v);
  if (first.length < MIN_HALF_FLOORS || second.length < MIN_HALF_FLOORS) return null;
  return { firstFloor: median(first), secondFloor: median(second), judged, floors };
}

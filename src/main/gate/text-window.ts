// Where a text changed: the common prefix and suffix of two texts, found by comparing 64 KiB
// slices natively and narrowing inside the last one by halves (no loop over characters), so
// finding one changed line in a 1 MiB file costs microseconds. (The config diff's changedWindow
// does the same for a config, widened to whole sections.)
const SLICE = 64 * 1024;

export interface TextWindow {
  readonly start: number;
  /** End of the changed part in the first text; in the second it ends as far from the end. */
  readonly endA: number;
  readonly endB: number;
}

export function textWindow(a: string, b: string): TextWindow {
  const max = Math.min(a.length, b.length);
  const prefix = common(max, (lo, hi) => a.slice(lo, hi) === b.slice(lo, hi));
  const suffix = common(max - prefix, (lo, hi) => a.slice(a.length - hi, a.length - lo) === b.slice(b.length - hi, b.length - lo));
  return { start: prefix, endA: a.length - suffix, endB: b.length - suffix };
}

/** The largest n ≤ max with same(0, n): whole slices first, then halves of the last one. */
function common(max: number, same: (lo: number, hi: number) => boolean): number {
  let lo = 0;
  while (lo + SLICE <= max && same(lo, lo + SLICE)) lo += SLICE;
  let hi = Math.min(lo + SLICE, max);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (same(lo, mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Where two texts differ: the lengths of their common prefix and suffix, found by comparing
// 64 KiB slices (native comparisons, no per-character loop), so one changed line in a 5 MiB
// config costs a few memory comparisons. Shared by the worker (the config digest) and the main
// thread (the config diff's changed window).

const CHUNK = 65_536;

/** The length of the common prefix of `a` and `b`, found 64 KiB at a time. */
export function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let lo = 0;
  while (lo + CHUNK <= max && a.slice(lo, lo + CHUNK) === b.slice(lo, lo + CHUNK)) lo += CHUNK;
  // Largest equal prefix in [lo, hi]: a[0, lo) is known to be equal.
  let hi = Math.min(lo + CHUNK, max);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (a.slice(lo, mid) === b.slice(lo, mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The length of the common suffix, at most `max` (so it never overlaps the common prefix). */
export function commonSuffix(a: string, b: string, max: number): number {
  let lo = 0;
  while (lo + CHUNK <= max && a.slice(a.length - lo - CHUNK, a.length - lo) === b.slice(b.length - lo - CHUNK, b.length - lo)) lo += CHUNK;
  let hi = Math.min(lo + CHUNK, max);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (a.slice(a.length - mid, a.length - lo) === b.slice(b.length - mid, b.length - lo)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

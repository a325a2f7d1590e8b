// Binary search over a sorted list, shared by the stores' key orders, the route tables and the
// Gateway binds: the first index whose item does not come before `key`.

/** The first index of `list` whose item does not come before `key` (`before(item, key)` is negative when it does). */
export function lowerBound<T, K>(list: readonly T[], key: K, before: (item: T, key: K) => number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(list[mid] as T, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Bisection for a refusal no line of HAProxy's output traces to an object (a timeout, or an error
// outside any object's section): find units (namespaces, then objects) whose removal makes the
// render pass. `passes(excluded)` renders without `excluded` and asks HAProxy. Each culprit costs
// one binary search over the remaining candidates, ceil(log2 n) checks, plus one check that the
// render passes without every unit, and one that it passes without the culprits found.
export interface CulpritSearch<T> {
  /** The units found, in the order found; removing them all makes the render pass when `resolved`. */
  readonly culprits: readonly T[];
  /** Whether the render passes without `culprits` (false: not the units' fault, or more than `maxCulprits`). */
  readonly resolved: boolean;
  /** `passes` calls made: each one a render and a `haproxy -c`. */
  readonly checks: number;
}

/**
 * The culprits among `units`, given that the render with all of them is refused. Assumes that
 * leaving more units out never makes a passing render fail (the units are independent).
 */
export async function findCulprits<T>(
  units: readonly T[],
  passes: (excluded: readonly T[]) => Promise<boolean>,
  maxCulprits = 4,
): Promise<CulpritSearch<T>> {
  let checks = 0;
  const check = async (excluded: readonly T[]): Promise<boolean> => {
    checks++;
    return passes(excluded);
  };
  if (units.length === 0 || !(await check(units))) return { culprits: [], resolved: false, checks };
  const culprits: T[] = [];
  let candidates = [...units];
  while (culprits.length < maxCulprits && candidates.length > 0) {
    // The smallest prefix of the candidates whose removal (with the culprits') makes it pass: its last unit is a culprit.
    let low = 1;
    let high = candidates.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (await check([...culprits, ...candidates.slice(0, mid)])) high = mid;
      else low = mid + 1;
    }
    culprits.push(candidates[low - 1] as T);
    // Every other culprit is before it: removing the prefix passed.
    candidates = candidates.slice(0, low - 1);
    if (await check(culprits)) return { culprits, resolved: true, checks };
  }
  return { culprits, resolved: false, checks };
}

// How a budget that all namespaces share is cut when they ask for more than it holds: the
// namespace holding the most gives up its newest item, again and again until the rest fit. The
// largest holder pays, so no tenant can starve the others by adding more; the newest first
// within it, so growing never takes anything from an older item of its own. Used for the
// health-checked server slots (slot-budget.ts) and the output bytes (output-budget.ts).
import { compareClaimants, type Claimant } from './claimant.js';

export interface Shed<T> {
  /** The items given up, in the order they were. */
  readonly shed: readonly T[];
  /** What all items asked for together. */
  readonly total: number;
}

/** The items to give up so that the sizes of the rest are at most `budget`. Items of size 0 are never given up. */
export function shedLargest<T>(items: readonly T[], budget: number, sizeOf: (item: T) => number, claimantOf: (item: T) => Claimant): Shed<T> {
  let total = 0;
  const byNamespace = new Map<string, { size: number; items: T[] }>();
  for (const item of items) {
    const size = sizeOf(item);
    if (size === 0) continue;
    total += size;
    const namespace = claimantOf(item).namespace;
    const held = byNamespace.get(namespace);
    if (held === undefined) byNamespace.set(namespace, { size, items: [item] });
    else {
      held.size += size;
      held.items.push(item);
    }
  }
  const shed: T[] = [];
  if (total <= budget) return { shed, total };
  const sorted = new Set<string>();
  let left = total;
  while (left > budget) {
    let namespace = '';
    let most = -1;
    for (const [name, held] of byNamespace) if (held.size > most || (held.size === most && name < namespace)) [namespace, most] = [name, held.size];
    const held = byNamespace.get(namespace) as { size: number; items: T[] };
    if (!sorted.has(namespace)) {
      held.items.sort((a, b) => compareClaimants(claimantOf(a), claimantOf(b)));
      sorted.add(namespace);
    }
    const item = held.items.pop() as T;
    const size = sizeOf(item);
    held.size -= size;
    left -= size;
    if (held.items.length === 0) byNamespace.delete(namespace);
    shed.push(item);
  }
  return { shed, total };
}

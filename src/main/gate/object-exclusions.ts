// The objects the render gate takes out of renders because HAProxy refused what they produced
// (leader side). Each holds for the version refused: a render that no longer finds the object at
// that version (changed, or deleted) drops it, so the changed object gets a fresh chance. Bounded.
import type { Exclusion, Rejection, RenderExclusions } from '../../worker/protocol.js';
import { escapeLogText, exclusionKey } from '../../worker/store/object-guard.js';

/** At most this many objects are held; the oldest go first. */
export const MAX_EXCLUSIONS = 10_000;

export class ObjectExclusions {
  readonly #held = new Map<string, Exclusion>();
  readonly #max: number;

  constructor(max = MAX_EXCLUSIONS) {
    this.#max = max;
  }

  get size(): number {
    return this.#held.size;
  }

  /** What the next render leaves out. */
  current(): RenderExclusions {
    return { objects: [...this.#held.values()] };
  }

  has(exclusion: Pick<Exclusion, 'kind' | 'namespace' | 'name' | 'version'>): boolean {
    return this.#held.get(exclusionKey(exclusion.kind, exclusion.namespace, exclusion.name))?.version === exclusion.version;
  }

  /** Adds (or renews) each; returns how many were not held at that version before. */
  add(exclusions: readonly Exclusion[]): number {
    let added = 0;
    for (const exclusion of exclusions) {
      if (!this.has(exclusion)) added++;
      const key = exclusionKey(exclusion.kind, exclusion.namespace, exclusion.name);
      this.#held.delete(key);
      this.#held.set(key, exclusion);
    }
    while (this.#held.size > this.#max) this.#held.delete(this.#held.keys().next().value as string);
    return added;
  }

  /**
   * After a render that was given `given`: each of those the render did not apply (its object
   * changed or is gone) is dropped. Exclusions added meanwhile are kept for the next render.
   */
  settle(given: RenderExclusions, rejections: readonly Rejection[]): void {
    if (given.objects.length === 0) return;
    const applied = new Set<string>();
    for (const r of rejections) if (r.scope === 'object') applied.add(`${exclusionKey(r.kind, r.namespace, r.name)}\0${r.reason}`);
    for (const exclusion of given.objects) {
      const key = exclusionKey(exclusion.kind, exclusion.namespace, exclusion.name);
      if (this.#held.get(key) !== exclusion) continue;
      if (!applied.has(`${key}\0${escapeLogText(exclusion.reason)}`)) this.#held.delete(key);
    }
  }
}

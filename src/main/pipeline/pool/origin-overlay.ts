// A result's origin index as the index it was rendered against plus the objects that changed.
// A worker sends only the changed objects (one per changed Ingress); copying the held array of
// every object to put them in place cost the main thread an array of N pointers, and the garbage
// it makes, on every execute. Here the objects are materialised only when someone reads them (the
// render gate, tracing a refusal), and the changes of consecutive results are merged until there
// are FLATTEN_AT of them, so a long run of small changes neither chains its indexes nor copies N.
import type { OriginIndex, OriginObject } from '../../../worker/protocol.js';

/** Merged changes past which a result's objects are copied at once (amortised: N / FLATTEN_AT per change). */
export const FLATTEN_AT = 256;

interface Overlay {
  readonly base: readonly OriginObject[];
  readonly changes: ReadonlyMap<number, OriginObject>;
}

const overlays = new WeakMap<object, Overlay>();

/**
 * `held` with the objects at `changes`' positions replaced; its names are the same. Throws
 * `invalid(index)`'s error for a position `held` does not have. `held` is left as it was.
 */
export function withChangedObjects(held: Pick<OriginIndex, 'objects' | 'names'>, changes: Iterable<readonly [number, OriginObject]>, invalid: (index: number) => Error): OriginIndex {
  const prior = overlays.get(held);
  const base = prior?.base ?? held.objects;
  const merged = new Map(prior?.changes);
  for (const [index, object] of changes) {
    if (!Number.isInteger(index) || index < 0 || index >= base.length) throw invalid(index);
    merged.set(index, object);
  }
  // As a worker's index crosses threads: without sections, which toPipelineResult computes on first read.
  if (merged.size >= FLATTEN_AT) return { objects: applied(base, merged), names: held.names } as unknown as OriginIndex;
  let objects: readonly OriginObject[] | undefined;
  const index = { names: held.names };
  Object.defineProperty(index, 'objects', { enumerable: true, get: () => (objects ??= applied(base, merged)) });
  overlays.set(index, { base, changes: merged });
  return index as unknown as OriginIndex;
}

function applied(base: readonly OriginObject[], changes: ReadonlyMap<number, OriginObject>): OriginObject[] {
  const objects = base.slice();
  for (const [index, object] of changes) objects[index] = object;
  return objects;
}

// The objects of an origin index that changed since an index the main thread holds, so that a
// result can carry those alone. The indexer reuses the objects and names between renders and its
// objects list records where it differs from the list before it (origin-index.ts), so after a
// small change this looks at the recorded positions only; without a record it compares every
// object by identity.
import type { OriginIndex, OriginObject } from '../protocol.js';
import { replacedSince } from '../store/list-replacements.js';

/**
 * The objects of `next` that differ from `held`'s (position and object, ascending), when the
 * names and the number of objects are the same and at most a quarter of the objects changed
 * (past that the whole index is as cheap to send); undefined otherwise.
 */
export function originChanges(held: Omit<OriginIndex, 'sections'>, next: Omit<OriginIndex, 'sections'>): (readonly [number, OriginObject])[] | undefined {
  if (next.objects.length !== held.objects.length || !sameNames(held.names, next.names)) return undefined;
  const changes: (readonly [number, OriginObject])[] = [];
  const limit = next.objects.length / 4;
  const visit = (i: number): boolean => {
    const before = held.objects[i] as OriginObject;
    const after = next.objects[i] as OriginObject;
    if (before === after || (before.kind === after.kind && before.namespace === after.namespace && before.name === after.name && before.version === after.version)) return true;
    if (changes.length >= limit) return false;
    changes.push([i, after]);
    return true;
  };
  const known = next.objects === held.objects ? [] : replacedSince(next.objects, held.objects);
  if (known !== undefined) {
    for (const i of known) if (!visit(i)) return undefined;
  } else {
    for (let i = 0; i < next.objects.length; i++) if (!visit(i)) return undefined;
  }
  return changes;
}

function sameNames(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  if (a === b) return true;
  const keys = Object.keys(b);
  if (Object.keys(a).length !== keys.length) return false;
  for (const key of keys) if (!Object.hasOwn(a, key) || a[key] !== b[key]) return false;
  return true;
}

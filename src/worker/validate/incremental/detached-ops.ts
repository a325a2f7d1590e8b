// Ops recorded from a chunk text, made independent of it. A chunk record's text is a slice of
// the latest configuration (chunk-index.ts), and the strings a parser records (names, paths,
// messages) are slices or ropes of the text it read: kept as they are, the ops of a chunk
// unchanged for many renders would pin the configuration the chunk was first parsed from.
import { detachString } from './chunk-index.js';

/** V8 copies shorter slices anyway (SlicedString::kMinLength). */
const SLICE_MIN = 13;

/**
 * The ops of every chunk that records none, shared: nearly every chunk records no usage op (a
 * backend section names no map or file), and an empty list of its own costs 32 bytes a chunk,
 * 10,000 chunks at 10,000 Ingresses. Recorded ops are only read, never edited.
 */
const NO_OPS: readonly never[] = Object.freeze([]);

/**
 * A deep copy of freshly recorded ops (plain data: objects, arrays, strings and scalars) whose
 * strings are copies of their own. Objects shared within the ops stay shared in the copy. No ops
 * give the shared empty list.
 */
export function detachedOps<T>(ops: readonly T[]): readonly T[] {
  if (ops.length === 0) return NO_OPS;
  const copies = new Map<object, unknown>();
  return ops.map((op) => detached(op, copies) as T);
}

function detached(value: unknown, copies: Map<object, unknown>): unknown {
  if (typeof value === 'string') return value.length < SLICE_MIN ? interned(value) : detachString(value);
  if (typeof value !== 'object' || value === null) return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const list: unknown[] = [];
    copies.set(value, list);
    for (const item of value) list.push(detached(item, copies));
    // An exact-size copy: a backend chunk records one op, and a push-grown list keeps room for 17.
    const exact = list.slice();
    copies.set(value, exact);
    return exact;
  }
  const record: Record<string, unknown> = {};
  copies.set(value, record);
  for (const key of Object.keys(value)) record[key] = detached((value as Record<string, unknown>)[key], copies);
  return record;
}

/**
 * The one copy V8 keeps of a short string as a property name (its string table): the keywords
 * and names every chunk records (`backend`, a server's port) are then held once, not once per chunk.
 */
function interned(value: string): string {
  for (const key in { [value]: 0 }) return key;
  return value;
}

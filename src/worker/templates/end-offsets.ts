// Where each element's text ends in a keyed loop's text (memo-cache.ts), kept as 32-bit offsets
// in a buffer with room to grow. A loop whose list changed in a few elements edits its offsets in
// place: the elements before the change keep theirs, those after it move in one native copy
// (copyWithin) and shift only when the text's length changed. A 20,000-entry map then costs no
// new arrays per change, where cutting, joining and shifting copies cost three of 20,000. The
// offsets given out are a fresh view over the buffer each time, so the loop's latest offsets are
// those of the latest text alone: the ones they replace must not be read again (the loop does not).

/** Offsets of a text's length at most this fit (a V8 string is shorter). */
const MAX_OFFSET = 0xffff_ffff;

/** The running ends of `lengths`, in a buffer with room for more. */
export function endsOf(lengths: readonly number[]): Uint32Array {
  const out = new Uint32Array(new ArrayBuffer(capacityFor(lengths.length) * 4), 0, lengths.length);
  let at = 0;
  for (let i = 0; i < lengths.length; i++) out[i] = at = checked(at + (lengths[i] as number));
  return out;
}

/**
 * `ends` with the `removed` ends at `from` replaced by `mid` (new ends, in the new text's
 * offsets), and every end after them shifted by `shift`: the same as
 * `[...ends.slice(0, from), ...mid, ...ends.slice(from + removed).map((end) => end + shift)]`.
 * Edits the buffer of `ends` in place when it has room (`ends` is then stale); a plain array is
 * copied into a buffer once.
 */
export function splicedEnds(ends: ArrayLike<number>, from: number, removed: number, mid: readonly number[], shift: number): Uint32Array {
  const length = ends.length - removed + mid.length;
  const tail = from + removed;
  let out: Uint32Array;
  if (ends instanceof Uint32Array && ends.byteOffset === 0 && ends.buffer.byteLength >= length * 4) {
    // A view over both the old and the new extent, so that the copy reads every old end after the cut.
    const whole = new Uint32Array(ends.buffer, 0, Math.max(ends.length, length));
    if (mid.length !== removed) whole.copyWithin(from + mid.length, tail, ends.length);
    out = new Uint32Array(ends.buffer, 0, length);
  } else {
    out = new Uint32Array(new ArrayBuffer(capacityFor(length) * 4), 0, length);
    for (let i = 0; i < from; i++) out[i] = ends[i] as number;
    for (let i = tail; i < ends.length; i++) out[i - removed + mid.length] = ends[i] as number;
  }
  for (let i = 0; i < mid.length; i++) out[from + i] = checked(mid[i] as number);
  if (shift !== 0) {
    for (let i = from + mid.length; i < length; i++) out[i] = checked((out[i] as number) + shift);
  }
  return out;
}

/** Room for a list of `length` ends to grow by an eighth (at least 16) before it moves. */
function capacityFor(length: number): number {
  return length + Math.max(16, length >> 3);
}

function checked(offset: number): number {
  if (!(offset >= 0 && offset <= MAX_OFFSET)) throw new RangeError(`keyed loop text offset ${offset} out of range`);
  return offset;
}

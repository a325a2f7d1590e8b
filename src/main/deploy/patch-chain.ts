// Patch chains: two render patches in a row (A -> B, then B -> C) as one patch A -> C, built from
// the edits alone (no text of A or B is read), so that a reader that skipped B (a write queue or a
// check queue where a newer render replaced a waiting one) still gets a patch of what it holds,
// instead of comparing or hashing whole texts. The cost follows the edits, not the files.
import type { RenderPatch, TextEdit } from '../../worker/protocol.js';
import { checkedEdits } from '../../worker/render/text-window.js';

/**
 * `first` (from A to B) followed by `second` (from B to C) as one patch from A to C; undefined
 * when `second` is not a patch of `firstTo` (the render `first` produced) or
 * when the edits are malformed. The chained patch carries no `removed` texts.
 */
export function chainPatches(first: RenderPatch, firstTo: string, second: RenderPatch): RenderPatch | undefined {
  if (second.from !== firstTo) return undefined;
  const edits: Record<string, readonly TextEdit[]> = { ...first.edits };
  for (const [id, later] of Object.entries(second.edits)) {
    const earlier = first.edits[id];
    const chained = earlier === undefined ? later : chainEdits(earlier, later);
    if (chained === undefined) return undefined;
    edits[id] = chained;
  }
  return { from: first.from, edits };
}

interface Span {
  /** Range in the middle text (B). */
  readonly start: number;
  readonly end: number;
}

/**
 * Edits of A (`first`, giving B) followed by edits of B (`second`, giving C), as edits of A giving
 * C: sorted and apart, the text of each from the first edits' inserted texts and the second's. A
 * part of B that both lists leave alone is kept text of A, and is never needed: every chained edit
 * covers only parts of B that `first` inserted or `second` removes.
 */
export function chainEdits(first: readonly TextEdit[], second: readonly TextEdit[]): TextEdit[] | undefined {
  const a = ordered(first);
  const b = ordered(second);
  if (a === undefined || b === undefined) return undefined;
  // Where each of `first`'s inserted texts lies in B; shifts[k]: how much longer B is than A before edit k.
  const inserted: Span[] = [];
  const shifts: number[] = [0];
  for (const edit of a) {
    const shift = shifts.at(-1) as number;
    inserted.push({ start: edit.at + shift, end: edit.at + shift + edit.text.length });
    shifts.push(shift + edit.text.length - edit.remove);
  }
  const out: TextEdit[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    // A group: spans of both lists that overlap or touch, starting with the leftmost.
    const startsWithFirst = j >= b.length || (i < a.length && (inserted[i] as Span).start <= (b[j] as TextEdit).at);
    const lo = startsWithFirst ? (inserted[i] as Span).start : (b[j] as TextEdit).at;
    let hi = lo;
    const gi = i;
    const gj = j;
    for (;;) {
      if (i < a.length && (inserted[i] as Span).start <= hi) {
        hi = Math.max(hi, (inserted[i] as Span).end);
        i++;
      } else if (j < b.length && (b[j] as TextEdit).at <= hi) {
        hi = Math.max(hi, (b[j] as TextEdit).at + (b[j] as TextEdit).remove);
        j++;
      } else break;
    }
    // [lo, hi) of B in A: before the group's first inserted text, B and A differ by the shift of the edits before it.
    const startInA = gi < i && (inserted[gi] as Span).start === lo ? (a[gi] as TextEdit).at : lo - (shifts[gi] as number);
    const last = i - 1;
    const endInA = gi < i && (inserted[last] as Span).end === hi ? (a[last] as TextEdit).at + (a[last] as TextEdit).remove : hi - (shifts[i] as number);
    // C's text of the group: B's [lo, hi) with the second edits applied; what they keep is inserted text.
    let text = '';
    let at = lo;
    for (let k = gj; k < j; k++) {
      const edit = b[k] as TextEdit;
      const kept = insertedText(a, inserted, gi, i, at, edit.at);
      if (kept === undefined) return undefined;
      text += kept + edit.text;
      at = edit.at + edit.remove;
    }
    const tail = insertedText(a, inserted, gi, i, at, hi);
    if (tail === undefined) return undefined;
    out.push({ at: startInA, remove: endInA - startInA, text: text + tail });
  }
  return out;
}

/** B's text in [from, to), which must lie inside the inserted texts `gi`..`gEnd` of `a`; undefined when it reaches kept text of A. */
function insertedText(a: readonly TextEdit[], inserted: readonly Span[], gi: number, gEnd: number, from: number, to: number): string | undefined {
  let text = '';
  let at = from;
  for (let k = gi; k < gEnd && at < to; k++) {
    const span = inserted[k] as Span;
    if (span.end <= at) continue;
    if (span.start > at) return undefined;
    const end = Math.min(span.end, to);
    text += (a[k] as TextEdit).text.slice(at - span.start, end - span.start);
    at = end;
  }
  return at >= to ? text : undefined;
}

/**
 * `edits` in offset order, or undefined when two overlap or one is malformed (checkedEdits, with
 * no length to stay within); of two at one offset, an insertion goes first.
 */
function ordered(edits: readonly TextEdit[]): TextEdit[] | undefined {
  return checkedEdits([...edits].sort((x, y) => x.at - y.at || x.remove - y.remove), Number.POSITIVE_INFINITY);
}

// Where two texts differ, and text edits: the lengths of their common prefix and suffix, found by
// comparing 64 KiB slices (native comparisons, no per-character loop), so one changed line in a
// 5 MiB config costs a few memory comparisons; the lines that differ (changedLines); and a text
// rebuilt from edits of an earlier one.
// Shared by the worker (the config digest, the endpoint lane) and the main thread (the config
// diff's changed window, the pool putting a result's edited files back together).
import type { TextEdit } from '../protocol.js';
import type { TextView } from '../templates/text-rope.js';

const CHUNK = 65_536;

/** The length of the common prefix of `a` and `b`, found 64 KiB at a time; their first `known` characters are known to be the same. */
export function commonPrefix(a: TextView, b: TextView, known = 0): number {
  const max = Math.min(a.length, b.length);
  let lo = Math.min(known, max);
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

/** The length of the common suffix, at most `max` (so it never overlaps the common prefix); their last `known` characters are known to be the same. */
export function commonSuffix(a: TextView, b: TextView, max: number, known = 0): number {
  let lo = Math.max(0, Math.min(known, max));
  while (lo + CHUNK <= max && a.slice(a.length - lo - CHUNK, a.length - lo) === b.slice(b.length - lo - CHUNK, b.length - lo)) lo += CHUNK;
  let hi = Math.min(lo + CHUNK, max);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (a.slice(a.length - mid, a.length - lo) === b.slice(b.length - mid, b.length - lo)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** What is known of two texts before comparing them: their first `prefix` and last `suffix` characters are the same. */
export interface KnownEnds {
  readonly prefix: number;
  readonly suffix: number;
}

/**
 * The lines of `before` and `after` that differ: from `start` (a line start in both) to
 * `oldEnd` in `before` and `newEnd` in `after` (each a line start or the end, and what follows
 * is the same in both). Undefined when the texts are the same. With `known` ends (a keyed loop
 * that spliced `after` from `before` knows them), the comparison starts past them: the answer is
 * the same, at the cost of the changed part alone.
 */
export function changedLines(before: TextView, after: TextView, known?: KnownEnds): { start: number; oldEnd: number; newEnd: number } | undefined {
  // Two distinct texts of one length compare character by character: with known ends the prefix
  // below tells sameness instead.
  if (known === undefined && before === after) return undefined;
  const prefix = commonPrefix(before, after, known?.prefix);
  if (prefix === before.length && prefix === after.length) return undefined;
  const start = prefix === 0 ? 0 : before.lastIndexOf('\n', prefix - 1) + 1;
  const suffix = commonSuffix(before, after, Math.min(before.length, after.length) - start, known?.suffix);
  let oldEnd = before.length - suffix;
  let newEnd = after.length - suffix;
  const lineStart = (text: TextView, at: number): boolean => at === start || text.slice(at - 1, at) === '\n';
  if (!(lineStart(before, oldEnd) && lineStart(after, newEnd))) {
    // The rest of the line is common to both: the changed lines end after it.
    const newline = before.indexOf('\n', oldEnd);
    const end = newline < 0 ? before.length : newline + 1;
    newEnd += end - oldEnd;
    oldEnd = end;
  }
  return { start, oldEnd, newEnd };
}

/** `text` with `edits` (any order, not overlapping) applied; undefined when two overlap or one is out of range. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string | undefined {
  const ordered = checkedEdits(edits, text.length);
  if (ordered === undefined) return undefined;
  let out = '';
  let at = 0;
  for (const edit of ordered) {
    out += text.slice(at, edit.at) + edit.text;
    at = edit.at + edit.remove;
  }
  return out + text.slice(at);
}

/** `edits` in offset order, or undefined when one is malformed, two overlap or one reaches past `length`. */
export function checkedEdits(edits: readonly TextEdit[], length: number): TextEdit[] | undefined {
  const ordered = sortedEdits(edits);
  let end = 0;
  for (const edit of ordered) {
    if (!Number.isInteger(edit.at) || !Number.isInteger(edit.remove) || edit.remove < 0 || typeof edit.text !== 'string') return undefined;
    if (edit.at < end || edit.at + edit.remove > length) return undefined;
    end = edit.at + edit.remove;
  }
  return ordered;
}

export function sortedEdits(edits: readonly TextEdit[]): TextEdit[] {
  return [...edits].sort((a, b) => a.at - b.at);
}

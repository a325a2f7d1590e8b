// The long lines of each auxiliary file, found again from its changed lines only. A changed
// Ingress changes a line or two of maps of several MB at 50,000 Ingresses, and scanning each such
// map whole for long lines costs a pass over every character. LongLineDeltas keeps, per file, its
// last text and its long lines with where they start; a new text of the same file is scanned
// only between the bounds of the render's ChangedWindows (line starts in both texts, everything
// outside them the same): the long lines before the window keep their numbers, those after it
// move by the lines the window gained or lost, and the window's own are found by the scan. That
// is exactly the scan of the whole new text, since a line is long or not by itself alone.
import type { ChangedWindows, TextViews } from '../../render/changed-windows.js';
import type { TextView } from '../../templates/text-rope.js';
import { longLines, type LongLine } from '../line-limits.js';

/** What the scan found in one text: its long lines and where each starts. */
interface Scan {
  readonly text: string;
  readonly lines: readonly LongLine[];
  readonly starts: readonly number[];
}

/** Changed regions longer than this share of the text are scanned whole. */
const WHOLE_SHARE = 0.5;

/** The long lines of the latest call's files, by file id. */
export class LongLineDeltas {
  #byId = new Map<string, Scan>();
  #next = new Map<string, Scan>();
  /** Texts scanned from their changed lines only, over every call. */
  #spliced = 0;

  get spliced(): number {
    return this.#spliced;
  }

  /** Starts a call: the files it does not ask for are forgotten at `end`. */
  begin(): void {
    this.#next = new Map();
  }

  end(): void {
    this.#byId = this.#next;
    this.#next = new Map();
  }

  /** longLines(text), for the file `id`: from the file's previous scan and the lines that changed. */
  lines(id: string, text: string, windows: ChangedWindows): readonly LongLine[] {
    const before = this.#next.get(id) ?? this.#byId.get(id);
    let scan: Scan;
    if (before === undefined) scan = wholeScan(text);
    else {
      const cut = windows.lines(id, before.text, text);
      const edited = cut === undefined ? before : spliced(before, text, cut, windows.views(id, before.text, text));
      if (edited !== undefined && edited !== before) this.#spliced++;
      scan = edited ?? wholeScan(text);
    }
    this.#next.set(id, scan);
    return scan.lines;
  }
}

function wholeScan(text: string): Scan {
  const starts: number[] = [];
  const lines = longLines(text, starts);
  return { text, lines, starts };
}

/** The scan of `text` from the scan of the text it changed from, or undefined to scan it whole. */
function spliced(before: Scan, text: string, cut: { readonly start: number; readonly oldEnd: number; readonly newEnd: number }, views: TextViews): Scan | undefined {
  // Read through the render's views: a spliced map is never flattened here.
  const old = views.before;
  const view = views.after;
  if (cut.oldEnd - cut.start + (cut.newEnd - cut.start) > WHOLE_SHARE * (old.length + text.length)) return undefined;
  const midStarts: number[] = [];
  const mid = longLines(view.slice(cut.start, cut.newEnd), midStarts);
  const { lines, starts } = before;
  // The old long lines before the window, and from where those after it start.
  let first = 0;
  while (first < starts.length && (starts[first] as number) < cut.start) first++;
  let next = first;
  while (next < starts.length && (starts[next] as number) < cut.oldEnd) next++;
  if (mid.length === 0 && first === next && next === starts.length) return { text, lines, starts };
  const outLines: LongLine[] = lines.slice(0, first);
  const outStarts: number[] = starts.slice(0, first);
  if (mid.length > 0) {
    // Lines before the window: counted from the last long line before it, whose number is known.
    const anchor = first > 0 ? { line: (lines[first - 1] as LongLine).line - 1, at: starts[first - 1] as number } : { line: 0, at: 0 };
    const linesBefore = anchor.line + newlines(view, anchor.at, cut.start);
    for (let i = 0; i < mid.length; i++) {
      const long = mid[i] as LongLine;
      outLines.push({ line: linesBefore + long.line, length: long.length });
      outStarts.push(cut.start + (midStarts[i] as number));
    }
  }
  if (next < starts.length) {
    const lineShift = newlines(view, cut.start, cut.newEnd) - newlines(old, cut.start, cut.oldEnd);
    const charShift = text.length - old.length;
    for (let i = next; i < starts.length; i++) {
      const long = lines[i] as LongLine;
      outLines.push(lineShift === 0 ? long : { line: long.line + lineShift, length: long.length });
      outStarts.push((starts[i] as number) + charShift);
    }
  }
  return { text, lines: outLines, starts: outStarts };
}

/** Newlines in text[from, to). */
function newlines(text: TextView, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at >= 0 && at < to; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

// The lines that differ between a file's previous and new text, found once per render however
// many readers ask. A changed map of a large cluster is several MB, and each reader of a render
// (the map deltas, the long-line scan, the checksum, the pool's line edits) would otherwise
// compare it with its previous text on its own: one pass over the common prefix and suffix each.
// Entries are asked by file id and kept for the current render only (`clear` at its start): the
// texts of a lookup are then the very strings the entry holds, compared by identity, never
// against an older text of the same length, whose comparison would walk the common prefix again.
import { changedLines } from './text-window.js';

/** changedLines' answer: the lines of `before` from `start` to `oldEnd` became those of `after` to `newEnd`. */
export interface LineWindow {
  readonly start: number;
  readonly oldEnd: number;
  readonly newEnd: number;
}

/** changedLines per file id and pair of texts, for one render. */
export class ChangedWindows {
  #entries = new Map<string, { readonly before: string; readonly after: string; readonly window: LineWindow | undefined }>();

  /** changedLines(before, after), computed once per id and pair until the next `clear`. */
  lines(id: string, before: string, after: string): LineWindow | undefined {
    const known = this.#entries.get(id);
    if (known !== undefined && known.after === after && known.before === before) return known.window;
    const window = changedLines(before, after);
    this.#entries.set(id, { before, after, window });
    return window;
  }

  /** Forgets every entry (and the texts they hold): called at the start of each render. */
  clear(): void {
    if (this.#entries.size > 0) this.#entries = new Map();
  }
}

// The lines that differ between a file's previous and new text, found once per render however
// many readers ask. A changed map of a large cluster is several MB, and each reader of a render
// (the map deltas, the long-line scan, the checksum, the pool's line edits) would otherwise
// compare it with its previous text on its own: one pass over the common prefix and suffix each.
// Entries are asked by file id and kept for the current render only (`clear` at its start): the
// texts of a lookup are then the very strings the entry holds, compared by identity, never
// against an older text of the same length, whose comparison would walk the common prefix again.
// A keyed loop that spliced its text (memo-cache.ts) knows which ends it kept: given as a hint,
// the comparison starts past them, so even the first reader touches the changed part alone.
// The hint also gives views of both texts (their ropes, for large ones, text-rope.ts): the
// comparison and every reader that asks `view` read those, so no one makes V8 flatten a spliced
// text, which would copy it whole.
import type { SplicedText } from '../templates/memo-cache.js';
import type { TextView } from '../templates/text-rope.js';
import { changedLines } from './text-window.js';

/** changedLines' answer: the lines of `before` from `start` to `oldEnd` became those of `after` to `newEnd`. */
export interface LineWindow {
  readonly start: number;
  readonly oldEnd: number;
  readonly newEnd: number;
}

/** Views of a pair of texts: each reads its text without flattening it (a rope) or is the text itself. */
export interface TextViews {
  readonly before: TextView;
  readonly after: TextView;
}

interface Entry {
  readonly before: string;
  readonly after: string;
  readonly window: LineWindow | undefined;
  readonly views: TextViews | undefined;
}

/** changedLines per file id and pair of texts, for one render. */
export class ChangedWindows {
  #entries = new Map<string, Entry>();
  #hints: readonly SplicedText[] = [];

  /** changedLines(before, after), computed once per id and pair until the next `clear`. */
  lines(id: string, before: string, after: string): LineWindow | undefined {
    return this.#entry(id, before, after).window;
  }

  /**
   * Views of `before` and `after` (file `id`'s texts, as asked of `lines`) for reading them
   * around their window: the ropes of a keyed loop's splice, or the texts themselves.
   */
  views(id: string, before: string, after: string): TextViews {
    return this.#entry(id, before, after).views ?? { before, after };
  }

  /** The splices of this render (the keyed loops' texts that changed), for the lookups that compare their very texts. */
  hint(splices: readonly SplicedText[]): void {
    this.#hints = splices;
  }

  /** Forgets every entry and hint (and the texts they hold): called at the start of each render. */
  clear(): void {
    if (this.#entries.size > 0) this.#entries = new Map();
    this.#hints = [];
  }

  #entry(id: string, before: string, after: string): Entry {
    // The very strings of the entry: compared by identity.
    const known = this.#entries.get(id);
    if (known !== undefined && known.after === after && known.before === before) return known;
    const hint = this.#hintFor(before, after);
    const window = hint === undefined ? changedLines(before, after) : changedLines(hint.beforeView, hint.afterView, hint);
    const entry = { before, after, window, views: hint === undefined ? undefined : { before: hint.beforeView, after: hint.afterView } };
    this.#entries.set(id, entry);
    return entry;
  }

  /** The splice that made `after` from `before`. */
  #hintFor(before: string, after: string): SplicedText | undefined {
    for (const hint of this.#hints) {
      // Lengths first. The splice's own texts are the very strings asked (compared by identity);
      // another file's text of the same length differs within its first lines.
      if (hint.after.length === after.length && hint.before.length === before.length && hint.after === after && hint.before === before) return hint;
    }
    return undefined;
  }
}

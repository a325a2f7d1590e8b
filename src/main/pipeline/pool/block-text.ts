// BlockText: a file of a render held on the main thread as a list of blocks of about 64 KiB, so
// that the edits of the next render splice only the blocks they touch. Slicing a string V8 holds as
// a concatenation flattens (copies) the whole of it, so edits applied to the previous text itself
// would copy the whole 5 MiB config on every render; here an edit slices one block, and a block
// is at most a few chunks long. The whole text is a balanced concatenation of the blocks, made
// without copying: whoever reads it pays the copy, once, when they read it (V8 flattens it then).
// Immutable: `edited` returns a new BlockText and leaves this one as it was.
import { checkedEdits } from '../../../worker/render/text-window.js';
import type { TextEdit } from '../../../worker/protocol.js';

/** Blocks are cut at this length; a block grown past twice it is cut again, one shrunk below a quarter joins its neighbour. */
export const BLOCK_CHARS = 65_536;

/** What an edit sequence gives: the new text, and per edit (in the order given) the text it removed. */
export interface EditedText {
  readonly text: BlockText;
  readonly removed: readonly string[];
}

export class BlockText {
  readonly #blocks: readonly string[];
  /** Where each block starts, and the length after the last. */
  readonly #starts: readonly number[];
  /** Blocks are cut at this length (BLOCK_CHARS but in tests). */
  readonly #size: number;
  #whole: string | undefined;

  private constructor(size: number, blocks: readonly string[], starts: readonly number[], whole?: string) {
    this.#size = size;
    this.#blocks = blocks;
    this.#starts = starts;
    this.#whole = whole;
  }

  /** `text` cut into blocks: slices of it, nothing copied once it is flat. */
  static of(text: string, blockChars: number = BLOCK_CHARS): BlockText {
    const blocks = cut(text, blockChars);
    const starts = blocks.map((_, i) => i * blockChars);
    starts.push(text.length);
    return new BlockText(blockChars, blocks, starts, text);
  }

  get length(): number {
    return this.#starts[this.#starts.length - 1] as number;
  }

  /** The number of blocks (for tests and diagnostics). */
  get blockCount(): number {
    return this.#blocks.length;
  }

  /** The whole text: concatenated from the blocks on first read (no copy until it is read as a whole). */
  get text(): string {
    this.#whole ??= concatenation(this.#blocks, 0, this.#blocks.length);
    return this.#whole;
  }

  /** The text of [from, to): only the blocks it spans are sliced. */
  slice(from: number, to: number): string {
    const start = Math.max(0, Math.min(from, this.length));
    const end = Math.max(start, Math.min(to, this.length));
    if (start === end) return '';
    const first = this.#blockAt(start);
    const last = this.#blockAt(end - 1);
    let out = '';
    for (let i = first; i <= last; i++) {
      const blockStart = this.#starts[i] as number;
      out += (this.#blocks[i] as string).slice(Math.max(0, start - blockStart), end - blockStart);
    }
    return out;
  }

  /**
   * This text with `edits` applied (any order, not overlapping, offsets into this text), and the
   * text each edit removed; undefined when two overlap or one is out of range (as applyEdits).
   */
  edited(edits: readonly TextEdit[]): EditedText | undefined {
    const ordered = checkedEdits(edits, this.length);
    if (ordered === undefined) return undefined;
    const removed = new Map<TextEdit, string>();
    for (const edit of ordered) removed.set(edit, this.slice(edit.at, edit.at + edit.remove));
    if (ordered.length === 0) return { text: this, removed: [] };
    const size = this.#size;
    const blocks = this.#blocks.slice();
    const starts = this.#starts.slice(0, -1);
    // From the last edit back, so the offsets of the earlier ones still hold.
    for (let e = ordered.length - 1; e >= 0; e--) {
      const edit = ordered[e] as TextEdit;
      if (blocks.length === 0) {
        // Only insertions at 0 reach an empty text.
        for (const piece of cut(edit.text, size)) {
          starts.push(blocks.length === 0 ? 0 : (starts[blocks.length - 1] as number) + (blocks[blocks.length - 1] as string).length);
          blocks.push(piece);
        }
        continue;
      }
      const first = blockAt(starts, edit.at, blocks.length);
      const last = edit.remove === 0 ? first : blockAt(starts, edit.at + edit.remove - 1, blocks.length);
      const head = (blocks[first] as string).slice(0, edit.at - (starts[first] as number));
      const tail = (blocks[last] as string).slice(edit.at + edit.remove - (starts[last] as number));
      let from = first;
      let to = last + 1;
      let merged = head + edit.text + tail;
      // A block shrunk small joins a neighbour, so deletions do not leave many tiny blocks.
      if (merged.length < size / 4 && blocks.length > to - from) {
        if (to < blocks.length) merged += blocks[to++] as string;
        else merged = (blocks[--from] as string) + merged;
      }
      const pieces = merged.length > 2 * size ? cut(merged, size) : merged.length === 0 ? [] : [merged];
      blocks.splice(from, to - from, ...pieces);
      starts.splice(from, to - from, ...pieces.map(() => 0));
      // Starts are recomputed after the last edit; until then only those before `from` are read.
      let at = from === 0 ? 0 : (starts[from - 1] as number) + (blocks[from - 1] as string).length;
      for (let i = from; i < blocks.length; i++) {
        starts[i] = at;
        at += (blocks[i] as string).length;
      }
    }
    const length = blocks.reduce((n, block) => n + block.length, 0);
    starts.length = blocks.length;
    starts.push(length);
    return { text: new BlockText(size, blocks, starts), removed: edits.map((edit) => removed.get(edit) as string) };
  }

  #blockAt(offset: number): number {
    return blockAt(this.#starts, offset, this.#blocks.length);
  }
}

/** The block holding `offset` (the last block for the end of the text). */
function blockAt(starts: readonly number[], offset: number, count: number): number {
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** `text` in blocks of `size` (slicing a concatenation flattens it once: cut only whole texts and merged blocks). */
function cut(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

/** Blocks [from, to) concatenated as a balanced tree: depth log n, nothing copied. */
function concatenation(blocks: readonly string[], from: number, to: number): string {
  if (to - from === 0) return '';
  if (to - from === 1) return blocks[from] as string;
  const mid = (from + to) >> 1;
  return concatenation(blocks, from, mid) + concatenation(blocks, mid, to);
}

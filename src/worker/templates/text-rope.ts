// A large keyed loop's text kept as chunks of about 64 KiB, so that a loop whose list changed in
// a few elements makes its new text without making a new copy of it. V8 gives every new string
// of several MB fresh pages, and filling them costs about 0.6 ms per MiB: a change to a
// 14 MiB map cost 8 ms in copying alone. Here a splice rebuilds the chunk or two it touches and
// shares the others with the rope it came from (which stays as it was: the previous render's
// readers still read it). Its `text` is the chunks concatenated, which V8 keeps as a tree of
// concatenations without copying until someone reads the string itself; the render's readers
// read the rope instead (`slice`, `indexOf`, `lastIndexOf`: a TextView), a few chunks at most.

/** What readers of a large text use of it: a string is one, and so is a TextRope. */
export interface TextView {
  readonly length: number;
  slice(start: number, end: number): string;
  indexOf(search: string, from: number): number;
  lastIndexOf(search: string, from: number): number;
}

/** Chunks are cut at about this many characters. */
const CHUNK = 65_536;
/** A chunk a splice makes longer than this is cut again. */
const MAX_CHUNK = 2 * CHUNK;
/** A chunk a splice leaves shorter than this takes in the next one. */
const MIN_CHUNK = CHUNK / 4;

export class TextRope implements TextView {
  readonly #chunks: readonly string[];
  /** Where each chunk ends in the text. */
  readonly #ends: readonly number[];
  #text: string | undefined;

  private constructor(chunks: readonly string[], ends: readonly number[], text?: string) {
    this.#chunks = chunks;
    this.#ends = ends;
    this.#text = text;
  }

  /** `text` cut into chunks (slices of it, which share its characters). */
  static of(text: string): TextRope {
    const chunks: string[] = [];
    const ends: number[] = [];
    for (let at = 0; at < text.length; at += CHUNK) {
      const end = Math.min(text.length, at + CHUNK);
      chunks.push(text.slice(at, end));
      ends.push(end);
    }
    return new TextRope(chunks, ends, text);
  }

  get length(): number {
    return this.#ends.length === 0 ? 0 : (this.#ends[this.#ends.length - 1] as number);
  }

  /** The whole text: the chunks concatenated, not copied (until a reader of the string flattens it). */
  get text(): string {
    if (this.#text === undefined) {
      let text = '';
      for (const chunk of this.#chunks) text += chunk;
      this.#text = text;
    }
    return this.#text;
  }

  /** The chunk count, for tests. */
  get chunkCount(): number {
    return this.#chunks.length;
  }

  /** text.slice(start, end), for offsets in range (0 <= start <= end <= length). */
  slice(start: number, end: number): string {
    if (end <= start) return '';
    const first = this.#chunkAt(start);
    const from = start - this.#startOf(first);
    const chunk = this.#chunks[first] as string;
    if (end <= (this.#ends[first] as number)) return chunk.slice(from, end - this.#startOf(first));
    let out = chunk.slice(from);
    for (let i = first + 1; i < this.#chunks.length; i++) {
      const at = this.#startOf(i);
      if (end <= (this.#ends[i] as number)) return out + (this.#chunks[i] as string).slice(0, end - at);
      out += this.#chunks[i] as string;
    }
    return out;
  }

  /** text.indexOf(search, from), reading a chunk at a time. */
  indexOf(search: string, from: number): number {
    const length = this.length;
    const start = Math.max(0, from);
    if (search.length === 0) return Math.min(start, length);
    const overlap = search.length - 1;
    for (let i = start >= length ? this.#chunks.length : this.#chunkAt(start); i < this.#chunks.length; i++) {
      // From the chunk's start (or `from`), less the characters a match across its start needs.
      const at = Math.max(start, this.#startOf(i) - overlap);
      const end = Math.min(length, (this.#ends[i] as number) + overlap);
      const found = this.slice(at, end).indexOf(search);
      if (found >= 0) return at + found;
    }
    return -1;
  }

  /** text.lastIndexOf(search, from): the last match starting at or before `from`. */
  lastIndexOf(search: string, from: number): number {
    const length = this.length;
    if (search.length === 0) return Math.min(Math.max(0, from), length);
    const last = Math.min(Math.max(0, from), length - search.length);
    if (last < 0) return -1;
    for (let i = this.#chunkAt(Math.min(last, length - 1)); i >= 0; i--) {
      const at = this.#startOf(i);
      const end = Math.min(length, Math.max(at, Math.min(last, (this.#ends[i] as number) - 1)) + search.length);
      const found = this.slice(at, end).lastIndexOf(search);
      if (found >= 0) return at + found;
    }
    return -1;
  }

  /**
   * The text with [start, oldEnd) replaced by `mid`, as a new rope; this one is unchanged. The
   * chunks the range touches are rebuilt (cut again when long, joined to the next when short),
   * the others shared.
   */
  splice(start: number, oldEnd: number, mid: string): TextRope {
    const count = this.#chunks.length;
    if (count === 0) return TextRope.of(mid);
    let first = this.#chunkAt(start);
    // A range ending at a chunk's end touches that chunk alone, not the next.
    let last = oldEnd <= start ? first : this.#chunkAt(oldEnd - 1);
    if (last < first) last = first;
    let text = (this.#chunks[first] as string).slice(0, start - this.#startOf(first)) + mid + (this.#chunks[last] as string).slice(oldEnd - this.#startOf(last));
    while (text.length < MIN_CHUNK && last + 1 < count) text += this.#chunks[++last] as string;
    if (text.length < MIN_CHUNK && first > 0) text = (this.#chunks[--first] as string) + text;
    const pieces = cut(text);
    const chunks = this.#chunks.slice(0, first);
    const ends = this.#ends.slice(0, first);
    let at = first === 0 ? 0 : (this.#ends[first - 1] as number);
    for (const piece of pieces) {
      chunks.push(piece);
      ends.push((at += piece.length));
    }
    const shift = at - (this.#ends[last] as number);
    for (let i = last + 1; i < count; i++) {
      chunks.push(this.#chunks[i] as string);
      ends.push((this.#ends[i] as number) + shift);
    }
    return new TextRope(chunks, ends);
  }

  #startOf(index: number): number {
    return index === 0 ? 0 : (this.#ends[index - 1] as number);
  }

  /** The chunk holding offset `at` (the last chunk for the end). */
  #chunkAt(at: number): number {
    const ends = this.#ends;
    let lo = 0;
    let hi = ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((ends[mid] as number) > at) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** `text` as one flat chunk, or as chunks of CHUNK when it is longer than MAX_CHUNK; empty for an empty text. */
function cut(text: string): string[] {
  if (text.length === 0) return [];
  // One flat string: the chunk no longer holds the chunks it was made of.
  void Number(text);
  if (text.length <= MAX_CHUNK) return [text];
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += CHUNK) pieces.push(text.slice(at, Math.min(text.length, at + CHUNK)));
  return pieces;
}

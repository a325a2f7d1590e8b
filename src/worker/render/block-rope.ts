// A text kept as its blocks (leaves), with a balanced tree of concatenations over them, so that
// replacing a block costs O(log n) string concatenations and yields the whole new text at once.
// V8 concatenates strings of 13 characters or more without copying (a rope), so the text a
// replacement gives is never copied until someone reads it as a whole; nothing here reads it.
// The tree starts out over a flat base text and its block starts, and nothing is made for it up
// front: a node no replacement has reached is the slice of the base its blocks span, cut when a
// replacement beside it needs it. A node's length is known without cutting it, so a block's
// offset costs O(log n) either way.

export class BlockRope {
  readonly #base: string;
  /** Where each block starts in the base, and the base's length after the last. */
  readonly #bounds: readonly number[];
  /** Node k is the concatenation of nodes 2k and 2k + 1; leaf i is node #size + i; undefined: the base's slice. */
  readonly #nodes: (string | undefined)[];
  readonly #size: number;
  readonly #count: number;

  /** `starts`: where each block of `base` starts (the first at 0), in order; the rope takes the array over. */
  constructor(base: string, starts: number[]) {
    let size = 1;
    while (size < starts.length) size *= 2;
    this.#size = size;
    this.#count = starts.length;
    this.#base = base;
    starts.push(base.length);
    this.#bounds = starts;
    this.#nodes = new Array<string | undefined>(2 * size);
  }

  /** The whole text. */
  get text(): string {
    return this.#text(1);
  }

  /** The number of blocks. */
  get count(): number {
    return this.#count;
  }

  leaf(index: number): string {
    return this.#text(this.#size + index);
  }

  /** Block `index` as a range of a string, without cutting it: its own text, or the base's [from, to). */
  span(index: number): { readonly text: string; readonly from: number; readonly to: number } {
    const own = this.#nodes[this.#size + index];
    if (own !== undefined) return { text: own, from: 0, to: own.length };
    return { text: this.#base, from: this.#bounds[index] as number, to: this.#bounds[index + 1] as number };
  }

  /** Where block `index` starts in the text. */
  start(index: number): number {
    let at = 0;
    for (let k = this.#size + index; k > 1; k >>= 1) if (k & 1) at += this.#length(k - 1);
    return at;
  }

  /** The block holding offset `at` (0 <= at < length), and the offset inside it. */
  locate(at: number): { index: number; offset: number } {
    let k = 1;
    let offset = at;
    while (k < this.#size) {
      const left = this.#length(2 * k);
      if (offset < left) k = 2 * k;
      else {
        offset -= left;
        k = 2 * k + 1;
      }
    }
    return { index: k - this.#size, offset };
  }

  /** Block `index` becomes `text`; the concatenations above it are made again. */
  replace(index: number, text: string): void {
    const nodes = this.#nodes;
    let k = this.#size + index;
    nodes[k] = text;
    for (k >>= 1; k >= 1; k >>= 1) nodes[k] = this.#text(2 * k) + this.#text(2 * k + 1);
  }

  /** Start offsets of every block. */
  starts(): number[] {
    const out = new Array<number>(this.#count);
    const nodes = this.#nodes;
    const bounds = this.#bounds;
    let at = 0;
    for (let i = 0; i < this.#count; i++) {
      out[i] = at;
      at += nodes[this.#size + i]?.length ?? (bounds[i + 1] as number) - (bounds[i] as number);
    }
    return out;
  }

  /** The blocks node k spans, [from, to), clipped to the blocks there are. */
  #span(k: number): [number, number] {
    let from = k;
    let to = k + 1;
    while (from < this.#size) {
      from *= 2;
      to *= 2;
    }
    return [Math.min(from - this.#size, this.#count), Math.min(to - this.#size, this.#count)];
  }

  #text(k: number): string {
    const own = this.#nodes[k];
    if (own !== undefined) return own;
    const [from, to] = this.#span(k);
    return from === to ? '' : this.#base.slice(this.#bounds[from], this.#bounds[to]);
  }

  #length(k: number): number {
    const own = this.#nodes[k];
    if (own !== undefined) return own.length;
    const [from, to] = this.#span(k);
    return (this.#bounds[to] as number) - (this.#bounds[from] as number);
  }
}

// A text kept as its blocks (leaves), with a balanced tree of concatenations over them, so that
// replacing a block costs O(log n) string concatenations and yields the whole new text at once.
// V8 concatenates strings of 13 characters or more without copying (a rope), so the text a
// replacement gives is never copied until someone reads it as a whole; nothing here reads it.
// A block's offset is found from the lengths of the tree's nodes (a string's length is O(1)).

export class BlockRope {
  /** Node k is the concatenation of nodes 2k and 2k + 1; leaf i is node #size + i. */
  readonly #nodes: string[];
  readonly #size: number;
  readonly #count: number;

  constructor(leaves: readonly string[]) {
    let size = 1;
    while (size < leaves.length) size *= 2;
    this.#size = size;
    this.#count = leaves.length;
    const nodes = new Array<string>(2 * size).fill('');
    for (let i = 0; i < leaves.length; i++) nodes[size + i] = leaves[i] as string;
    for (let k = size - 1; k >= 1; k--) nodes[k] = (nodes[2 * k] as string) + (nodes[2 * k + 1] as string);
    this.#nodes = nodes;
  }

  /** The whole text (the root's concatenation). */
  get text(): string {
    return this.#nodes[1] as string;
  }

  /** The number of blocks. */
  get count(): number {
    return this.#count;
  }

  leaf(index: number): string {
    return this.#nodes[this.#size + index] as string;
  }

  /** Where block `index` starts in the text. */
  start(index: number): number {
    let at = 0;
    for (let k = this.#size + index; k > 1; k >>= 1) if (k & 1) at += (this.#nodes[k - 1] as string).length;
    return at;
  }

  /** The block holding offset `at` (0 <= at < length), and the offset inside it. */
  locate(at: number): { index: number; offset: number } {
    const nodes = this.#nodes;
    let k = 1;
    let offset = at;
    while (k < this.#size) {
      const left = (nodes[2 * k] as string).length;
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
    for (k >>= 1; k >= 1; k >>= 1) nodes[k] = (nodes[2 * k] as string) + (nodes[2 * k + 1] as string);
  }

  /** Start offsets of every block. */
  starts(): number[] {
    const out = new Array<number>(this.#count);
    let at = 0;
    for (let i = 0; i < this.#count; i++) {
      out[i] = at;
      at += this.leaf(i).length;
    }
    return out;
  }
}

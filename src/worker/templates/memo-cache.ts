// The texts of a compiled template set's `{{#memo key}}` blocks, and the blocks themselves. A memo
// block's text depends only on its key object and the set's constants (@root.values, @root.paths:
// memo-check.ts proves it when the set compiles), so the block can be run again on its own, for
// another key, outside a render: `rerender` gives the text a whole render would put in the
// block's place for that key. The endpoint lane (render/endpoint-lane.ts) uses it to re-render
// one backend's section without rendering the rest of the config.

/** A memo block's compiled body: its text for a key, with the data frame the helper gives it. */
export type MemoBlock = (key: unknown, options: { data: unknown }) => string;

/** The block's text for one key object, as a render leaves it in the output. */
export interface MemoText {
  /** The memo block's ID: `<template>#<n>` (memo-check.ts), the template being where the block is written. */
  readonly id: string;
  readonly before: string;
  readonly after: string;
}

export class MemoCache {
  /** Text of each block by key object; entries die with their key objects. */
  readonly #texts = new Map<string, WeakMap<object, string>>();
  /** The compiled body of each block, recorded at its first run. */
  readonly #blocks = new Map<string, MemoBlock>();

  /** The cached texts of block `id` (created empty on first use). */
  texts(id: string): WeakMap<object, string> {
    let texts = this.#texts.get(id);
    if (texts === undefined) {
      texts = new WeakMap();
      this.#texts.set(id, texts);
    }
    return texts;
  }

  /** Remembers the body of block `id`; the same block always has the same body. */
  record(id: string, block: MemoBlock): void {
    if (!this.#blocks.has(id)) this.#blocks.set(id, block);
  }

  /**
   * Every block that holds a text for `key`, with that text and the text of the same block for
   * `next` (run now, and cached under `next`). `data` is the data frame the memo helper gives a
   * block (its scope and @root). Empty when no block rendered `key` (nothing known to re-render).
   */
  rerender(key: object, next: object, data: unknown): MemoText[] {
    const out: MemoText[] = [];
    for (const [id, texts] of this.#texts) {
      const before = texts.get(key);
      const block = this.#blocks.get(id);
      if (before === undefined || block === undefined) continue;
      const after = block(next, { data });
      texts.set(next, after);
      out.push({ id, before, after });
    }
    return out;
  }
}

// The texts of a compiled template set's `{{#memo key}}` blocks, and the blocks themselves. A memo
// block's text depends only on its key object and the set's constants (@root.values, @root.paths:
// memo-check.ts proves it when the set compiles), so the block can be run again on its own, for
// another key, outside a render: `rerender` gives the text a whole render would put in the
// block's place for that key. The endpoint lane (render/endpoint-lane.ts) uses it to re-render
// one backend's section without rendering the rest of the config.
import { endsOf, splicedEnds } from './end-offsets.js';
import { keptEndsSince } from '../store/list-replacements.js';
import { TextRope, type TextView } from './text-rope.js';

/** A memo block's compiled body: its text for a key, with the data frame the helper gives it. */
export type MemoBlock = (key: unknown, options: { data: unknown }) => string;

/** The block's text for one key object, as a render leaves it in the output. */
export interface MemoText {
  /** The memo block's ID: `<template>#<n>` (memo-check.ts), the template being where the block is written. */
  readonly id: string;
  readonly before: string;
  readonly after: string;
}

/** The latest list a keyed loop rendered: its text and where each element's text ends in it (end-offsets.ts). */
export interface LastList {
  readonly list: readonly unknown[];
  readonly text: string;
  readonly ends: ArrayLike<number>;
  /** A large text's chunks (text-rope.ts), whose `text` it is: a splice edits them, not a copy of the text. */
  readonly rope?: TextRope | undefined;
}

/** A keyed loop's text this long or longer is kept as a rope. */
export const ROPE_MIN = 262_144;

/**
 * A keyed loop's text spliced from its latest: the first `prefix` and last `suffix` characters of
 * both are the same. The views read the texts (their ropes, for large ones) without flattening them.
 */
export interface SplicedText {
  readonly before: string;
  readonly after: string;
  readonly prefix: number;
  readonly suffix: number;
  readonly beforeView: TextView;
  readonly afterView: TextView;
}

/** A splice's new text, and how many characters at its start (`prefix`) and end (`suffix`) it kept from the latest. */
interface Splice extends LastList {
  readonly kept?: { readonly prefix: number; readonly suffix: number };
}

/** A keyed loop whose list differs from its latest in more than this share of elements renders every element. */
const SPLICE_SHARE = 0.25;

export class MemoCache {
  /** Text of each block by key object; entries die with their key objects. */
  readonly #texts = new Map<string, WeakMap<object, string>>();
  /** The latest list of each keyed loop (`memoEach`), by block ID. */
  readonly #lists = new Map<string, LastList>();
  /** The compiled body of each block, recorded at its first run. */
  readonly #blocks = new Map<string, MemoBlock>();
  /** The keyed loops that spliced a new text in the current render, by block ID. */
  #splices = new Map<string, SplicedText>();

  /** Called as a render starts: forgets the splices of the one before (and the texts they hold). */
  beginRender(): void {
    if (this.#splices.size > 0) this.#splices = new Map();
  }

  /** The texts keyed loops spliced in this render, with the ends each kept; forgotten once taken. */
  takeSplices(): SplicedText[] {
    const out = [...this.#splices.values()];
    this.beginRender();
    return out;
  }

  /** The cached texts of block `id` (created empty on first use). */
  texts(id: string): WeakMap<object, string> {
    let texts = this.#texts.get(id);
    if (texts === undefined) {
      texts = new WeakMap();
      this.#texts.set(id, texts);
    }
    return texts;
  }

  /**
   * The text of keyed loop `id` over `list`: the texts of its elements joined, `element` giving
   * one (cached per element object by the caller). The elements at the start and at the end that
   * are the very elements of the loop's latest list keep their text, cut out of the latest text,
   * since the same element always gives the same text; only the others are asked for.
   */
  keyedText(id: string, list: readonly unknown[], element: (value: unknown) => string, cached?: WeakMap<object, string>): string {
    const last = this.#lists.get(id);
    if (last !== undefined && last.list === list) return last.text;
    // A splice edits the latest ends in place: cut short by a throw, the next text is joined whole.
    this.#lists.delete(id);
    let out: Splice | undefined = last === undefined ? undefined : spliced(last, list, element);
    if (out?.kept !== undefined && last !== undefined) {
      this.#splices.set(id, { before: last.text, after: out.text, ...out.kept, beforeView: last.rope ?? last.text, afterView: out.rope ?? out.text });
    }
    if (out === undefined) {
      const parts = list.map(element);
      // join() builds one flat string.
      const text = parts.join('');
      out = { list, text, ends: endsOf(parts.map((part) => part.length)), rope: ropeFor(text) };
      if (cached !== undefined) cutFrom(out, parts, cached);
    }
    this.#lists.set(id, out);
    return out.text;
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

/**
 * `list`'s text from `last`'s, when they share all but a few elements at the ends; undefined
 * otherwise. The new ends are those of `last` edited in place (end-offsets.ts): `last` is not
 * to be read again once a new text is given. Exported for its tests.
 */
export function spliced(last: LastList, list: readonly unknown[], element: (value: unknown) => string): Splice | undefined {
  const before = last.list;
  const n = list.length;
  const m = before.length;
  // The elements kept at the start and at the end: as the list records them (list-replacements.ts),
  // else found element by element.
  const kept = keptEndsSince(list, before);
  let prefix = kept?.prefix ?? 0;
  let suffix = kept?.suffix ?? 0;
  if (kept === undefined) {
    while (prefix < n && prefix < m && list[prefix] === before[prefix]) prefix++;
    while (suffix < n - prefix && suffix < m - prefix && list[n - 1 - suffix] === before[m - 1 - suffix]) suffix++;
  }
  const added = n - prefix - suffix;
  const removed = m - prefix - suffix;
  if (added + removed > SPLICE_SHARE * Math.max(n, m) + 2) return undefined;
  const start = prefix === 0 ? 0 : (last.ends[prefix - 1] as number);
  const oldEnd = prefix + removed === 0 ? 0 : (last.ends[prefix + removed - 1] as number);
  const parts: string[] = [];
  const midEnds: number[] = [];
  let at = start;
  for (let i = prefix; i < prefix + added; i++) {
    const text = element(list[i]);
    parts.push(text);
    midEnds.push((at += text.length));
  }
  const shift = at - oldEnd;
  // The same text as the latest, known from the pieces: the latest's very string, so that every
  // later reader (validator, checksum, diff) compares it by identity, not character by character.
  const view: TextView = last.rope ?? last.text;
  if (shift === 0 && added === removed && sameTexts(view, last.ends, prefix, parts)) return { list, text: last.text, ends: last.ends, rope: last.rope };
  const ends = splicedEnds(last.ends, prefix, removed, midEnds, shift);
  const keptText = { prefix: start, suffix: last.text.length - oldEnd };
  if (last.rope !== undefined) {
    // The chunks around the change are made again, the rest shared: no copy of the whole text.
    const rope = last.rope.splice(start, oldEnd, parts.join(''));
    return { list, text: rope.text, ends, rope, kept: keptText };
  }
  const text = last.text.slice(0, start) + parts.join('') + last.text.slice(oldEnd);
  // One flat string, as join() gives: whoever reads it next reads it whole.
  void Number(text);
  return { list, text, ends, rope: ropeFor(text), kept: keptText };
}

/** The rope of a flat loop text that is long enough to be kept as one (ROPE_MIN). */
function ropeFor(text: string): TextRope | undefined {
  return text.length >= ROPE_MIN ? TextRope.of(text) : undefined;
}

/** Whether `parts` are the texts the latest text (`view`, element `ends`) has for its elements from `from` on (as many as `parts`), compared one by one. */
function sameTexts(view: TextView, ends: ArrayLike<number>, from: number, parts: readonly string[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    const start = from + i === 0 ? 0 : (ends[from + i - 1] as number);
    const end = ends[from + i] as number;
    const part = parts[i] as string;
    if (part.length !== end - start || view.slice(start, end) !== part) return false;
  }
  return true;
}

/**
 * Each element's cached text (the very string `parts` has for it) becomes a slice of the joined
 * text: V8 holds a slice as a reference into its parent (a few dozen bytes) where the element's
 * own string held a second copy of the characters. Only after a join of every element, whose
 * text the cache holds anyway as the latest list's. A splice leaves the kept elements' texts as
 * they are: slices of an earlier joined text then keep that text alive, which costs what their
 * own copies did; the added elements keep their own strings, so no splice pins its text.
 */
function cutFrom(list: LastList, parts: readonly string[], cached: WeakMap<object, string>): void {
  const { text, ends } = list;
  for (let i = 0; i < parts.length; i++) {
    const value = list.list[i];
    if (value === null || typeof value !== 'object' || cached.get(value) !== parts[i]) continue;
    cached.set(value, text.slice(i === 0 ? 0 : (ends[i - 1] as number), ends[i] as number));
  }
}

// The digest of a rendered text, combined from the digests of its blocks (the text up to and
// including each terminator: a blank line, "\n\n", for the config; "\n" for a line-digested file),
// so that a render that changed a few sections hashes only those: blocks are hashed one by one,
// the block digests in groups of GROUP, and the group digests once more. Kept between renders,
// the digest of a new text re-hashes the blocks around the change (found by comparing the new
// text with the previous one 64 KiB at a time, or given by the caller) and the groups holding
// them. The result depends only on the text: the same text gives the same digest whether it was
// hashed in one go or changed into.
//
// `edit` is the endpoint lane's way in: it takes edits of the current text, re-hashes only the
// blocks they touch, and gives the new text as a rope over the blocks (block-rope.ts, made over
// the last text `digest` took, at no cost up front), so no step copies the text or walks its
// blocks: O(edited blocks · log blocks), and the group digests joined once (32 bytes per 128
// blocks). An edit that makes or joins blocks takes `digest`'s way instead. `find` gives where
// the block that starts with a text is, from an index of the blocks' keys (their text up to
// `keyEnd`) built on first use per `digest`ed text. Back in `digest`, the rope is let go, with
// the texts its blocks were cut from.
import type { TextEdit } from '../protocol.js';
import type { TextView } from '../templates/text-rope.js';
import { BlockRope } from './block-rope.js';
import { DigestGroups, GROUP } from './digest-groups.js';
import { applyEdits, commonPrefix, commonSuffix, sortedEdits } from './text-window.js';
import { lowerBound } from '../store/sorted-search.js';
import { sha256, sha256Latin1 } from './sha256.js';

export class ConfigDigest {
  readonly #terminator: string;
  readonly #keyEnd: string;
  #text: string | undefined;
  #hex = '';
  /** Start offset of each block; block i ends where block i + 1 starts (the last at the end). Stale while #rope is set. */
  #starts: number[] = [];
  /** Block digests, 32 bytes each (digest-groups.ts): a config has a block per backend, a map one per line. */
  #blocks = new DigestGroups();
  /** Group digests as 32-character latin1 strings (one byte a character). */
  #groups: string[] = [];
  /** The blocks of #text, once an edit or a find asked for them; its text is #text. */
  #rope: BlockRope | undefined;
  /** The first block of each key's hash (keyHash), for `find`: a hash costs nothing to hold, a key string a slice per block. */
  #keys: Map<number, number> | undefined;

  /** `terminator` ends a block; `keyEnd` ends a block's key (see `find`). */
  constructor(terminator = '\n\n', keyEnd = '\n') {
    if (terminator.length === 0 || keyEnd.length === 0) throw new TypeError(`ConfigDigest: a terminator and a keyEnd of at least one character were expected, got ${JSON.stringify(terminator)} and ${JSON.stringify(keyEnd)}`);
    this.#terminator = terminator;
    this.#keyEnd = keyEnd;
  }

  /** The text last digested or edited into. */
  get text(): string | undefined {
    return this.#text;
  }

  /**
   * The digest of `text` (hex). `prefix` and `suffix` may say how much of it is known to be the
   * same as the previous text at its start and end (lengths); otherwise they are measured. Given
   * them, the texts are not compared (that would walk the common prefix): the blocks between
   * them are hashed again, to the same digest should the texts be the same.
   */
  digest(text: string, known?: { readonly prefix: number; readonly suffix: number }, views?: { readonly before: TextView; readonly after: TextView }): string {
    const previous = this.#text;
    if (known === undefined && previous === text) return this.#hex;
    const keys = this.#keys;
    this.#dropRope();
    if (previous === undefined || previous.length === 0) this.#rebuild(text);
    else {
      const prefix = known?.prefix ?? commonPrefix(previous, text);
      const suffix = known?.suffix ?? commonSuffix(previous, text, Math.min(previous.length, text.length) - prefix);
      // The key index holds while every block keeps its place and key: a render that changed a few sections keeps it.
      // Views, when given, read the previous and new texts without flattening them (a spliced map's ropes).
      if (this.#update(views?.before ?? previous, views?.after ?? text, prefix, suffix)) this.#keys = keys;
    }
    this.#text = text;
    this.#hex = this.#combined();
    return this.#hex;
  }

  /**
   * Where a block of the current text starts with `needle` (a block whose key is the needle's,
   * the first such), or -1 when none is known to: the caller then searches the text itself.
   */
  find(needle: string): number {
    const rope = this.#ropeOf();
    if (rope === undefined) return -1;
    const keys = (this.#keys ??= this.#keyIndex(rope));
    const key = this.#keyOf(needle);
    let index = keys.get(keyHash(key, 0, key.length));
    if (index === undefined) return -1;
    // Another key of the same hash came first: the first block of this key, if any, is further on.
    while (index < rope.count && this.#keyOf(rope.leaf(index)) !== key) index++;
    if (index === rope.count) return -1;
    let text = rope.leaf(index);
    for (let next = index + 1; text.length < needle.length && next < rope.count; next++) text += rope.leaf(next);
    return text.startsWith(needle) ? rope.start(index) : -1;
  }

  /** The first block of each key's hash. It runs once per base. */
  #keyIndex(rope: BlockRope): Map<number, number> {
    const keys = new Map<number, number>();
    for (let i = 0; i < rope.count; i++) {
      const { text, from, to } = rope.span(i);
      const end = text.indexOf(this.#keyEnd, from);
      const hash = keyHash(text, from, end < 0 || end > to ? to : end);
      if (!keys.has(hash)) keys.set(hash, i);
    }
    return keys;
  }

  /**
   * The current text with `edits` (sorted, apart, in its offsets) applied, and its digest; the
   * same as `digest` of that text. Edits that keep the blocks apart (each block still ends at its
   * first terminator, none made or joined) re-hash only their blocks; others take `digest`'s way.
   * Undefined when there is no current text or an edit is out of range.
   */
  edit(unsorted: readonly TextEdit[]): { text: string; digest: string } | undefined {
    const previous = this.#text;
    if (previous === undefined) return undefined;
    if (unsorted.length === 0) return { text: previous, digest: this.#hex };
    const edits = sortedEdits(unsorted);
    const planned = this.#plan(edits);
    if (planned === undefined) {
      const text = applyEdits(previous, edits);
      if (text === undefined) return undefined;
      const first = edits[0] as TextEdit;
      const last = edits[edits.length - 1] as TextEdit;
      return { text, digest: this.digest(text, { prefix: first.at, suffix: previous.length - (last.at + last.remove) }) };
    }
    const rope = planned.rope;
    const digests = new Map<number, string>();
    for (const { index, blocks } of planned.replacements) {
      for (let i = 0; i < blocks.length; i++) {
        const block = blocks[i] as string;
        const old = rope.leaf(index + i);
        if (old === block) continue;
        // A block whose key changed leaves the key index behind: it is built again on next use.
        if (this.#keys !== undefined && this.#keyOf(old) !== this.#keyOf(block)) this.#keys = undefined;
        rope.replace(index + i, block);
        digests.set(index + i, blockDigest(block));
      }
    }
    for (const g of this.#blocks.assign(digests)) this.#groups[g] = groupDigest(this.#blocks, g);
    this.#text = rope.text;
    this.#hex = this.#combined();
    return { text: this.#text, digest: this.#hex };
  }

  /** Each edit's new blocks, when every edit keeps the block count of the blocks it touches and no two touch the same block. */
  #plan(edits: readonly TextEdit[]): { rope: BlockRope; replacements: { index: number; blocks: string[] }[] } | undefined {
    const rope = this.#ropeOf();
    if (rope === undefined) return undefined;
    const length = rope.text.length;
    const replacements: { index: number; blocks: string[] }[] = [];
    let after = -1;
    for (const edit of edits) {
      // Anything else (an edit at the very end, or out of range) goes `digest`'s way, which checks it.
      if (!Number.isInteger(edit.at) || !Number.isInteger(edit.remove) || edit.remove < 0 || edit.at < 0 || edit.at + edit.remove > length || edit.at >= length || typeof edit.text !== 'string') return undefined;
      const first = rope.locate(edit.at);
      const last = edit.remove === 0 ? first : rope.locate(edit.at + edit.remove - 1);
      if (first.index <= after) return undefined;
      const head = rope.leaf(first.index);
      const tail = rope.leaf(last.index);
      const endOffset = edit.remove === 0 ? first.offset : last.offset + 1;
      const span = head.slice(0, first.offset) + edit.text + tail.slice(endOffset);
      const blocks = this.#splitSpan(span, last.index === rope.count - 1);
      if (blocks === undefined || blocks.length !== last.index - first.index + 1) return undefined;
      replacements.push({ index: first.index, blocks });
      after = last.index;
    }
    return { rope, replacements };
  }

  /** `span` as blocks; undefined when its last block would run into the next one (it must end with a terminator unless it is the text's end). */
  #splitSpan(span: string, atEnd: boolean): string[] | undefined {
    const blocks: string[] = [];
    const t = this.#terminator;
    let at = 0;
    while (at < span.length) {
      const found = span.indexOf(t, at);
      if (found < 0) {
        if (!atEnd) return undefined;
        blocks.push(span.slice(at));
        break;
      }
      blocks.push(span.slice(at, found + t.length));
      at = found + t.length;
    }
    return blocks;
  }

  #keyOf(text: string): string {
    const end = text.indexOf(this.#keyEnd);
    return end < 0 ? text : text.slice(0, end);
  }

  /** The blocks of the current text as a rope, made from #starts on first use. */
  #ropeOf(): BlockRope | undefined {
    const text = this.#text;
    if (text === undefined || text.length === 0) return undefined;
    if (this.#rope === undefined) {
      this.#rope = new BlockRope(text, this.#starts);
      this.#starts = [];
    }
    return this.#rope;
  }

  /** Back to block starts (for `digest`'s way): the rope's blocks pin the texts they were cut from. */
  #dropRope(): void {
    if (this.#rope === undefined) return;
    this.#starts = this.#rope.starts();
    this.#rope = undefined;
    this.#keys = undefined;
  }

  #combined(): string {
    return sha256Latin1(this.#groups.join(''), 'hex');
  }

  #rebuild(text: string): void {
    const { starts, blocks } = split(text, 0, text.length, this.#terminator, () => false);
    this.#starts = starts;
    this.#blocks = DigestGroups.of(blocks);
    this.#groups = [];
    for (let g = 0; g < this.#blocks.groups; g++) this.#groups.push(groupDigest(this.#blocks, g));
  }

  /** `text` is the previous text but for [prefix, length - suffix). True when the blocks kept their number, and the re-split ones their keys. */
  #update(previous: TextView, text: TextView, prefix: number, suffix: number): boolean {
    const starts = this.#starts;
    const shift = text.length - previous.length;
    // The block holding the first change: every block before it ends inside the common prefix.
    const first = Math.max(0, upperBound(starts, prefix) - 1);
    const suffixStart = text.length - suffix;
    const t = this.#terminator.length;
    // Blocks are split afresh from there until a block ends where an old one ended, its
    // terminator wholly inside the common suffix: from there on the old blocks hold.
    let resume = starts.length;
    const fresh = split(text, starts[first] as number, text.length, this.#terminator, (end) => {
      if (end - t < suffixStart) return false;
      const old = end - shift;
      const at = lowerBound(starts, old, (item, key) => item - key);
      if (at < starts.length && starts[at] === old) {
        resume = at;
        return true;
      }
      return false;
    });
    const replaced = resume - first;
    const oldEnd = resume < starts.length ? (starts[resume] as number) : previous.length;
    // The block starts this digest alone holds, edited in place: the re-split ones replaced, those after shifted.
    const froms = starts.slice(first, resume);
    if (fresh.starts.length === replaced) for (let i = 0; i < replaced; i++) starts[first + i] = fresh.starts[i] as number;
    else starts.splice(first, replaced, ...fresh.starts);
    if (shift !== 0) for (let i = first + fresh.starts.length; i < starts.length; i++) starts[i] = (starts[i] as number) + shift;
    const blocks = this.#blocks;
    blocks.splice(first, replaced, fresh.blocks);
    const lastGroup = fresh.blocks.length === replaced ? Math.floor((first + Math.max(0, replaced - 1)) / GROUP) : Math.ceil(blocks.length / GROUP) - 1;
    const groups = this.#groups;
    groups.length = Math.min(groups.length, Math.ceil(blocks.length / GROUP));
    for (let g = Math.floor(first / GROUP); g <= lastGroup; g++) groups[g] = groupDigest(blocks, g);
    if (fresh.blocks.length !== replaced) return false;
    const newEnd = oldEnd + shift;
    for (let i = 0; i < replaced; i++) {
      const from = froms[i] as number;
      const to = i + 1 < replaced ? (froms[i + 1] as number) : oldEnd;
      const freshFrom = fresh.starts[i] as number;
      const freshTo = i + 1 < replaced ? (fresh.starts[i + 1] as number) : newEnd;
      if (this.#keyIn(previous, from, to) !== this.#keyIn(text, freshFrom, freshTo)) return false;
    }
    return true;
  }

  /** The key of the block text[from, to). */
  #keyIn(text: TextView, from: number, to: number): string {
    const end = text.indexOf(this.#keyEnd, from);
    return text.slice(from, end < 0 || end > to ? to : end);
  }
}

/**
 * Blocks of text[from, to): their starts and digests. `stop(end)` is asked at each block end
 * (after a terminator); true ends the split there.
 */
function split(text: TextView, from: number, to: number, terminator: string, stop: (end: number) => boolean): { starts: number[]; blocks: string[] } {
  const starts: number[] = [];
  const blocks: string[] = [];
  let at = from;
  while (at < to) {
    const found = text.indexOf(terminator, at);
    const end = found < 0 || found + terminator.length > to ? to : found + terminator.length;
    starts.push(at);
    blocks.push(blockDigest(text.slice(at, end)));
    at = end;
    if (end === to || stop(end)) break;
  }
  return { starts, blocks };
}

/** The 32-bit FNV-1a hash of text[from, to), a small integer V8 holds unboxed. */
function keyHash(text: string, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash | 0;
}

function blockDigest(text: string): string {
  return sha256(text, 'binary');
}

function groupDigest(blocks: DigestGroups, group: number): string {
  return sha256Latin1(blocks.groupText(group), 'binary');
}

/** The first index whose value is above `value`. */
function upperBound(sorted: readonly number[], value: number): number {
  return lowerBound(sorted, value, (item, key) => (item <= key ? -1 : 1));
}

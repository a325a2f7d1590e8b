// The digest of a rendered config, combined from the digests of its blocks (the text up to and
// including each blank line, "\n\n"), so that a render that changed a few sections hashes only
// those: blocks are hashed one by one, the block digests in groups of GROUP, and the group digests
// once more. Kept between renders, the digest of a new text re-hashes the blocks around the change
// (found by comparing the new text with the previous one 64 KiB at a time, or given by the
// caller) and the groups holding them. The result depends only on the text: the same text gives
// the same digest whether it was hashed in one go or changed into.
import { createHash } from 'node:crypto';
import { commonPrefix, commonSuffix } from './text-window.js';

/** Block digests per group digest. */
const GROUP = 128;
const TERMINATOR = '\n\n';

export class ConfigDigest {
  #text: string | undefined;
  /** Start offset of each block; block i ends where block i + 1 starts (the last at the end). */
  #starts: number[] = [];
  /**
   * Block and group digests as 32-character latin1 strings (one byte a character): a string of
   * 32 bytes costs 48, a Buffer of them about 200, and a config has a block per backend.
   */
  #blocks: string[] = [];
  #groups: string[] = [];

  /**
   * The digest of `text` (hex). `prefix` and `suffix` may say how much of it is known to be the
   * same as the previous text at its start and end (lengths); otherwise they are measured.
   */
  digest(text: string, known?: { readonly prefix: number; readonly suffix: number }): string {
    const previous = this.#text;
    if (previous === undefined || previous.length === 0) this.#rebuild(text);
    else if (previous !== text) {
      const prefix = known?.prefix ?? commonPrefix(previous, text);
      const suffix = known?.suffix ?? commonSuffix(previous, text, Math.min(previous.length, text.length) - prefix);
      this.#update(previous, text, prefix, suffix);
    }
    this.#text = text;
    return createHash('sha256').update(this.#groups.join(''), 'latin1').digest('hex');
  }

  #rebuild(text: string): void {
    const { starts, blocks } = split(text, 0, text.length, () => false);
    this.#starts = starts;
    this.#blocks = blocks;
    this.#groups = [];
    for (let g = 0; g * GROUP < blocks.length; g++) this.#groups.push(groupDigest(blocks, g));
  }

  /** `text` is the previous text but for [prefix, length - suffix). */
  #update(previous: string, text: string, prefix: number, suffix: number): void {
    const starts = this.#starts;
    const shift = text.length - previous.length;
    // The block holding the first change: every block before it ends inside the common prefix.
    const first = Math.max(0, upperBound(starts, prefix) - 1);
    const suffixStart = text.length - suffix;
    // Blocks are split afresh from there until a block ends where an old one ended, its
    // terminator wholly inside the common suffix: from there on the old blocks hold.
    let resume = starts.length;
    const fresh = split(text, starts[first] as number, text.length, (end) => {
      if (end - 2 < suffixStart) return false;
      const old = end - shift;
      const at = lowerBound(starts, old);
      if (at < starts.length && starts[at] === old) {
        resume = at;
        return true;
      }
      return false;
    });
    const replaced = resume - first;
    const tailStarts = starts.slice(resume).map((start) => start + shift);
    this.#starts = [...starts.slice(0, first), ...fresh.starts, ...tailStarts];
    const blocks = this.#blocks;
    blocks.splice(first, replaced, ...fresh.blocks);
    const lastGroup = fresh.blocks.length === replaced ? Math.floor((first + Math.max(0, replaced - 1)) / GROUP) : Math.ceil(blocks.length / GROUP) - 1;
    const groups = this.#groups;
    groups.length = Math.min(groups.length, Math.ceil(blocks.length / GROUP));
    for (let g = Math.floor(first / GROUP); g <= lastGroup; g++) groups[g] = groupDigest(blocks, g);
  }
}

/**
 * Blocks of text[from, to): their starts and digests. `stop(end)` is asked at each block end
 * (after a terminator); true ends the split there.
 */
function split(text: string, from: number, to: number, stop: (end: number) => boolean): { starts: number[]; blocks: string[] } {
  const starts: number[] = [];
  const blocks: string[] = [];
  let at = from;
  while (at < to) {
    const terminator = text.indexOf(TERMINATOR, at);
    const end = terminator < 0 || terminator + 2 > to ? to : terminator + 2;
    starts.push(at);
    blocks.push(createHash('sha256').update(text.slice(at, end)).digest('binary'));
    at = end;
    if (end === to || stop(end)) break;
  }
  return { starts, blocks };
}

function groupDigest(blocks: readonly string[], group: number): string {
  return createHash('sha256')
    .update(blocks.slice(group * GROUP, (group + 1) * GROUP).join(''), 'latin1')
    .digest('binary');
}

/** The first index whose value is above `value`. */
function upperBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose value is at least `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The block digests of a config digest (config-digest.ts), held as one latin1 string per group of
// GROUP digests: the very text a group digest hashes. A config digest keeps one digest per block
// and a line digest one per line, tens of thousands at 10,000 Ingresses; as an array of
// 32-character strings each cost 48 bytes for the string and 8 for its slot, here 32 in all.
// Changing a digest rewrites its group's text (4 KiB), so the endpoint lane's edits of a few
// blocks stay cheap; a splice that changes the count re-cuts the groups from its first on, as
// the group digests after it are recomputed then anyway.

/** Block digests per group digest. */
export const GROUP = 128;

/** Characters of one digest (SHA-256, one byte a character). */
const SIZE = 32;

const GROUP_CHARS = GROUP * SIZE;

export class DigestGroups {
  /** Group g holds digests g·GROUP … as GROUP·SIZE characters (the last group fewer). */
  #texts: string[] = [];
  #count = 0;

  /** The digests of `blocks`, in order. */
  static of(blocks: readonly string[]): DigestGroups {
    const groups = new DigestGroups();
    for (let g = 0; g * GROUP < blocks.length; g++) groups.#texts.push(blocks.slice(g * GROUP, (g + 1) * GROUP).join(''));
    groups.#count = blocks.length;
    return groups;
  }

  /** The number of digests. */
  get length(): number {
    return this.#count;
  }

  /** The number of groups. */
  get groups(): number {
    return this.#texts.length;
  }

  /** The digests of group `g` joined: what its group digest hashes. */
  groupText(g: number): string {
    return this.#texts[g] as string;
  }

  /** Digest `index`. */
  at(index: number): string {
    const text = this.#texts[Math.floor(index / GROUP)] as string;
    const at = (index % GROUP) * SIZE;
    return text.slice(at, at + SIZE);
  }

  /** Sets digests by index (each below length); each group changed is rewritten once. Returns the groups changed. */
  assign(changes: ReadonlyMap<number, string>): Set<number> {
    const byGroup = new Map<number, number[]>();
    for (const index of changes.keys()) {
      const g = Math.floor(index / GROUP);
      const list = byGroup.get(g);
      if (list === undefined) byGroup.set(g, [index]);
      else list.push(index);
    }
    for (const [g, indices] of byGroup) {
      indices.sort((a, b) => a - b);
      const old = this.#texts[g] as string;
      let text = '';
      let at = 0;
      for (const index of indices) {
        const from = (index - g * GROUP) * SIZE;
        text += old.slice(at, from) + (changes.get(index) as string);
        at = from + SIZE;
      }
      this.#texts[g] = flatOf(text + old.slice(at));
    }
    return new Set(byGroup.keys());
  }

  /**
   * Replaces the `remove` digests at `start` with `inserted`, as Array.splice would. Returns the
   * first and last group whose text changed (last < first: none).
   */
  splice(start: number, remove: number, inserted: readonly string[]): { first: number; last: number } {
    const count = this.#count - remove + inserted.length;
    const first = Math.floor(start / GROUP);
    // The same count: only the groups of the replaced digests change; otherwise every one after them moves.
    const end = inserted.length === remove ? Math.floor((start + Math.max(remove, 1) - 1) / GROUP) : this.#texts.length - 1;
    const old = this.#texts.slice(first, end + 1).join('');
    const from = (start - first * GROUP) * SIZE;
    const text = old.slice(0, from) + inserted.join('') + old.slice(from + remove * SIZE);
    const cut: string[] = [];
    for (let at = 0; at < text.length; at += GROUP_CHARS) cut.push(flatOf(text.slice(at, at + GROUP_CHARS)));
    this.#texts.splice(first, end + 1 - first, ...cut);
    this.#texts.length = Math.ceil(count / GROUP);
    this.#count = count;
    return { first, last: first + cut.length - 1 };
  }
}

/**
 * `text` as a string of its own: a slice or concatenation of a group's text would pin the text it
 * was cut from, a second copy of its group. Converting it to a number makes V8 flatten it.
 */
function flatOf(text: string): string {
  if (text.length === 0) return text;
  const own = text.length < 13 ? text : `${text.slice(0, 1)}${text.slice(1)}`;
  void Number(own);
  return own;
}

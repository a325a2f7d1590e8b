// SourceHash: the sha256 (hex) of the leader's config as an agent holds it, which a config patch
// must match. SHA-256 cannot take an edit in the middle of a text, but it can resume: the hash
// state is kept at a line break every STEP characters or so, and the text after a patch is hashed
// from the last kept state before the patch's start (its text up to there is that of the text
// hashed before). An endpoint change then hashes the config from its change to its end, half of
// it on average, instead of all of it; the result is the sha256 of the whole text, as ever.
import { createHash, type Hash } from 'node:crypto';

/** Characters between kept hash states (at the next line break). */
const STEP = 64 * 1024;

interface Mark {
  /** The state after hashing the text up to `at` (never finished: copied first). */
  readonly at: number;
  readonly hash: Hash;
}

export class SourceHash {
  #text: string | undefined;
  #marks: Mark[] = [];

  /**
   * The sha256 of `text`; `base` and `same` may say that its first `same` characters are those of
   * `base`. Resumed only when `base` is the text this object hashed last.
   */
  digest(text: string, base?: string, same = 0): string {
    const resumable = base !== undefined && this.#text !== undefined && base === this.#text;
    let keep = 0;
    if (resumable) while (keep < this.#marks.length && (this.#marks[keep] as Mark).at <= same) keep++;
    if (keep === 0) this.#marks = [{ at: 0, hash: createHash('sha256') }];
    else this.#marks.length = keep;
    const last = this.#marks[this.#marks.length - 1] as Mark;
    const hash = last.hash.copy();
    let at = last.at;
    for (;;) {
      if (at + STEP >= text.length) break;
      const cut = text.indexOf('\n', at + STEP);
      if (cut < 0) break;
      hash.update(text.slice(at, cut + 1));
      at = cut + 1;
      this.#marks.push({ at, hash: hash.copy() });
    }
    hash.update(text.slice(at));
    this.#text = text;
    return hash.digest('hex');
  }
}

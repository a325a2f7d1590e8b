// Which of a build's entries have a log to replay (warnings, rejections: ingress-entry.ts), kept
// between builds. Most entries have none, yet finding the few that do means reading every entry.
// When the entries are the last build's with a few replaced (list-replacements.ts, the quick
// walk's record), only those positions are looked at again; otherwise every entry is.
import { replacedSince } from '../store/list-replacements.js';
import { lowerBound } from '../store/sorted-search.js';

interface Logged {
  readonly log: readonly unknown[];
}

export class LoggedEntries<E extends Logged> {
  #entries: readonly E[] = [];
  /** Positions (ascending) of the entries of `#entries` with a log. */
  #at: number[] = [];

  /** The positions (ascending) of the entries of `entries` whose log is not empty. */
  positions(entries: readonly E[]): readonly number[] {
    if (entries === this.#entries) return this.#at;
    const replaced = replacedSince(entries, this.#entries);
    if (replaced === undefined) {
      this.#at = [];
      for (let i = 0; i < entries.length; i++) if ((entries[i] as E).log.length > 0) this.#at.push(i);
    } else {
      // A new array: the last one was handed out.
      const at = this.#at.slice();
      for (const i of replaced) {
        const index = lowerBound(at, i, byValue);
        const listed = at[index] === i;
        const logged = (entries[i] as E).log.length > 0;
        if (listed && !logged) at.splice(index, 1);
        else if (!listed && logged) at.splice(index, 0, i);
      }
      this.#at = at;
    }
    this.#entries = entries;
    return this.#at;
  }
}

const byValue = (item: number, value: number): number => item - value;

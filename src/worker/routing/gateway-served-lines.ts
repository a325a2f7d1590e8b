// The match line candidates each HTTPRoute serves on its binds, as the route cache last got
// them (gateway-route-cache.ts), kept between builds so a build hands each bind only what it
// gained and lost: a route whose served lines are the same object as before adds nothing to
// the change. A build calls `begin`, `serve` for every route it meets (undefined when the route
// serves nothing: not attached, refused, or no lines), `end`, then reads each bind's `change`
// and, for a bind planned whole, `all` of its candidates in route order.
import type { LineCandidate } from './gateway-lines.js';
import type { BindChange } from './gateway-route-cache.js';
import type { RouteLines } from './gateway-route-entries.js';

const NO_CHANGE: BindChange = Object.freeze({ removed: Object.freeze([]), added: Object.freeze([]) });

export class ServedLines {
  readonly #served = new Map<string, { readonly lines: RouteLines; seen: number }>();
  #changes = new Map<string, { removed: LineCandidate[]; added: LineCandidate[] }>();
  #stamp = 0;
  /** Routes met in this build that serve lines. */
  #met = 0;

  begin(): void {
    this.#stamp++;
    this.#met = 0;
    this.#changes = new Map();
  }

  /** Starts a build that serves only the routes whose lines changed (every other one keeps what it served). */
  beginPatch(): void {
    this.#changes = new Map();
  }

  /** What route `key` serves in this build. */
  serve(key: string, lines: RouteLines | undefined): void {
    const before = this.#served.get(key);
    if (before?.lines !== lines) {
      if (before !== undefined) this.#lose(before.lines);
      if (lines !== undefined) for (const [bind, candidate] of lines.own) this.#changeOf(bind).added.push(candidate);
    }
    if (lines === undefined) {
      this.#served.delete(key);
      return;
    }
    this.#met++;
    if (before?.lines === lines) before.seen = this.#stamp;
    else this.#served.set(key, { lines, seen: this.#stamp });
  }

  /** Drops the routes that served lines in the last build and were not met in this one. */
  end(): void {
    if (this.#served.size === this.#met) return;
    for (const [key, { lines, seen }] of this.#served) {
      if (seen === this.#stamp) continue;
      this.#lose(lines);
      this.#served.delete(key);
    }
  }

  /** What `bind` gained and lost in this build. */
  change(bind: string): BindChange {
    return this.#changes.get(bind) ?? NO_CHANGE;
  }

  /** Every candidate `bind` is served in this build, in the order of `keys` (route order). */
  all(bind: string, keys: Iterable<string>): LineCandidate[] {
    const out: LineCandidate[] = [];
    for (const key of keys) {
      const lines = this.#served.get(key)?.lines;
      if (lines !== undefined) for (const [b, candidate] of lines.own) if (b === bind) out.push(candidate);
    }
    return out;
  }

  /** Forgets every route (the route cache forgets its binds with it). */
  clear(): void {
    this.#served.clear();
  }

  #lose(lines: RouteLines): void {
    for (const [bind, candidate] of lines.own) this.#changeOf(bind).removed.push(candidate);
  }

  #changeOf(bind: string): { removed: LineCandidate[]; added: LineCandidate[] } {
    let change = this.#changes.get(bind);
    if (change === undefined) this.#changes.set(bind, (change = { removed: [], added: [] }));
    return change;
  }
}

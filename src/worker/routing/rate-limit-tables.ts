// The memory HAProxy may give rate limiting, shared by every rate-limited backend. Each such
// backend has a stick-table of its own (one entry per client address, about 200 bytes each on
// HAProxy 2.6: 100,000 entries took 20 MB), and its entries are made by clients: one client
// with many addresses (an IPv6 /64) fills every table a tenant creates. So the tables of all
// backends together hold at most RATE_LIMIT_ENTRIES entries: with more than 10 rate-limited
// backends, each table gets an equal share (a halving step of 100,000, so a share changes
// seldom, and never under MIN_TABLE_SIZE). A full table drops its oldest entries, as HAProxy does.
import type { Backend } from './model.js';
import { recordReplacements, replacedPositions } from '../store/list-replacements.js';

/** Entries of all rate-limit tables together (about 200 MB). */
export const RATE_LIMIT_ENTRIES = 1_000_000;
/** Entries of one table when few backends are rate-limited (the template's default). */
export const MAX_TABLE_SIZE = 100_000;
/** The smallest share a table gets, however many backends are rate-limited. */
export const MIN_TABLE_SIZE = 100;

/** Entries of each table when `count` backends are rate-limited: MAX_TABLE_SIZE halved until the tables fit in `total`. */
export function tableSize(count: number, total = RATE_LIMIT_ENTRIES): number {
  let size = MAX_TABLE_SIZE;
  while (size * count > total && size > MIN_TABLE_SIZE) size = Math.max(MIN_TABLE_SIZE, Math.floor(size / 2));
  return size;
}

/** Lists that differ from the last at more than this share of places are sized whole. */
const CHANGED_SHARE = 0.125;

/**
 * Gives the rate-limited backends of a model their table size (`Backend.rateLimitTableSize`, set
 * only below MAX_TABLE_SIZE). Each backend keeps one copy per size, and an unchanged list comes
 * back as the previous array, so unchanged backends keep their identity (and their memo blocks).
 * A list that differs from the last one at a few places (one Ingress changed) is sized at those
 * places alone while the table size stays: the count of rate-limited backends follows them.
 */
export class RateLimitTables {
  readonly #copies = new WeakMap<Backend, Backend>();
  #last: readonly Backend[] | undefined;
  /** The last list given, with its count of rate-limited backends and their table size. */
  #input: readonly Backend[] | undefined;
  #count = 0;
  #size = MAX_TABLE_SIZE;

  apply(backends: readonly Backend[]): readonly Backend[] {
    const changes = this.#changesOf(backends);
    if (changes !== undefined) return changes;
    let count = 0;
    for (const backend of backends) if (backend.ingressOptions.rateLimit !== undefined) count++;
    const size = tableSize(count);
    let changed = false;
    const sized = backends.map((backend) => {
      const own = this.#own(backend, size);
      if (own !== backend) changed = true;
      return own;
    });
    const result = changed ? sized : backends;
    this.#input = backends;
    this.#count = count;
    this.#size = size;
    const last = this.#last;
    if (last !== undefined && last.length === result.length && result.every((b, i) => b === last[i])) return last;
    this.#last = result;
    return result;
  }

  /** The result for a list that differs from the last at few places under the same table size; undefined otherwise. */
  #changesOf(backends: readonly Backend[]): readonly Backend[] | undefined {
    const input = this.#input;
    const last = this.#last;
    if (input === undefined || last === undefined || input.length !== backends.length || last.length !== backends.length) return undefined;
    // The places replaced since the last list when that is recorded (backend-order.ts), else
    // every place where the two differ.
    const at = replacedPositions(backends, input, CHANGED_SHARE * backends.length + 2);
    if (at.length > CHANGED_SHARE * backends.length + 2) return undefined;
    let count = this.#count;
    for (const i of at) {
      const now = backends[i] as Backend;
      const before = input[i] as Backend;
      count += (now.ingressOptions.rateLimit === undefined ? 0 : 1) - (before.ingressOptions.rateLimit === undefined ? 0 : 1);
    }
    const size = tableSize(count);
    if (size !== this.#size) return undefined;
    let out: Backend[] | undefined;
    for (const i of at) {
      const own = this.#own(backends[i] as Backend, size);
      if (own === last[i]) continue;
      out ??= last.slice();
      out[i] = own;
    }
    this.#input = backends;
    this.#count = count;
    if (out === undefined) return last;
    // The check budget then visits these places alone.
    recordReplacements(out, last, at);
    this.#last = out;
    return out;
  }

  /** The backend with the table size `size` gives it. */
  #own(backend: Backend, size: number): Backend {
    const wanted = backend.ingressOptions.rateLimit === undefined || size === MAX_TABLE_SIZE ? undefined : size;
    return backend.rateLimitTableSize === wanted ? backend : this.#sizedCopy(backend, wanted);
  }

  #sizedCopy(backend: Backend, size: number | undefined): Backend {
    const cached = this.#copies.get(backend);
    if (cached !== undefined && cached.rateLimitTableSize === size) return cached;
    const copy: Backend = { ...backend, rateLimitTableSize: size };
    if (size === undefined) delete (copy as { rateLimitTableSize?: number }).rateLimitTableSize;
    Object.freeze(copy);
    this.#copies.set(backend, copy);
    return copy;
  }
}

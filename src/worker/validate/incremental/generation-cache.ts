// The per-text caches of IncrementalValidator (parsed maps, map entries and issues, PEM
// summaries). Two generations instead of an LRU: a render touches every file it renders, so
// what one call did not use is exactly what can go.

/**
 * A cache by text that keeps only the entries used since the latest begin(): memory follows the
 * latest call, never the history of calls. An entry keeps the key it was made with, so the value
 * (which may hold slices of it) and the key share one string.
 */
export class GenerationCache<V> {
  #previous = new Map<string, { readonly key: string; readonly value: V }>();
  #current = new Map<string, { readonly key: string; readonly value: V }>();

  get size(): number {
    return this.#current.size;
  }

  begin(): void {
    this.#previous = this.#current;
    this.#current = new Map();
  }

  /** Drops what the call did not use. */
  end(): void {
    this.#previous = new Map();
  }

  /** Forgets the entry of `key` (its value no longer describes the text). */
  delete(key: string): void {
    this.#previous.delete(key);
    this.#current.delete(key);
  }

  get(key: string, make: (key: string) => V): V {
    let entry = this.#previous.get(key) ?? this.#current.get(key);
    if (entry === undefined) entry = { key, value: make(key) };
    this.#current.set(entry.key, entry);
    return entry.value;
  }
}

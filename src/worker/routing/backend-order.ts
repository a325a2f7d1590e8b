// The model's backends sorted by name, kept between builds: while the set of names is the same,
// a build puts the recomputed entries' backends in their predecessors' places instead of sorting
// every backend again. A starved entry (slot-budget.ts) serves its backends without servers.
import { sameArray } from './entry-compare.js';
import type { IngressEntry } from './ingress-entry.js';
import type { Backend } from './model.js';

export class BackendOrder {
  #positions = new Map<string, number>();
  /** The server-less copies of a starved entry's backends, kept while the entry lives. */
  readonly #emptied = new WeakMap<IngressEntry, readonly Backend[]>();

  /**
   * Every backend sorted by name. When the set of names is unchanged (`namesChanged` false and a
   * `previous` list), `entries` are only the recomputed ones, whose backends take their
   * predecessors' places; otherwise all are sorted.
   */
  sorted(previous: readonly Backend[] | undefined, entries: readonly IngressEntry[], namesChanged: boolean, starved: ReadonlyMap<IngressEntry, string>): readonly Backend[] {
    if (!namesChanged && previous !== undefined) {
      const backends = previous.slice();
      for (const entry of entries) {
        for (const backend of this.#backendsOf(entry, starved)) {
          const at = this.#positions.get(backend.name) as number;
          if (backends[at] !== backend) backends[at] = backend;
        }
      }
      return sameArray(backends, previous) ? previous : backends;
    }
    const backends = entries.flatMap((e) => this.#backendsOf(e, starved)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#positions = new Map(backends.map((b, i) => [b.name, i]));
    return backends;
  }

  /** An entry's backends as the model serves them: without servers while it is starved. */
  #backendsOf(entry: IngressEntry, starved: ReadonlyMap<IngressEntry, string>): readonly Backend[] {
    if (!starved.has(entry)) return entry.backends;
    let emptied = this.#emptied.get(entry);
    if (emptied === undefined) {
      emptied = entry.backends.map((backend) => Object.freeze({ ...backend, servers: Object.freeze([]) }));
      this.#emptied.set(entry, emptied);
    }
    return emptied;
  }
}

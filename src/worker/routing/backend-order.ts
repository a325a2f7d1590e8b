// The model's backends sorted by name, kept between builds: while the set of names is the same,
// a build puts the recomputed entries' backends in their predecessors' places instead of sorting
// every backend again, and records the places it replaced (list-replacements.ts), so the passes
// after it (rate-limit-tables.ts, check-budget.ts) visit those places alone. A starved entry
// (slot-budget.ts) serves its backends without servers.
import type { IngressEntry } from './ingress-entry.js';
import type { Backend } from './model.js';
import { recordReplacements } from '../store/list-replacements.js';

export class BackendOrder {
  #positions = new Map<string, number>();
  /** The last list given back, which a build with the same names replaces places of. */
  #output: readonly Backend[] | undefined;
  /** The server-less copies of a starved entry's backends, kept while the entry lives. */
  readonly #emptied = new WeakMap<IngressEntry, readonly Backend[]>();

  /**
   * Every backend sorted by name. When the set of names is unchanged (`namesChanged` false and a
   * `previous` list), `entries` are only the recomputed ones, whose backends take their
   * predecessors' places in the list this gave back last (or in `previous` before any), which
   * comes back itself when none differs, else as a copy recorded as replaced at those places;
   * otherwise all are sorted.
   */
  sorted(previous: readonly Backend[] | undefined, entries: readonly IngressEntry[], namesChanged: boolean, starved: ReadonlyMap<IngressEntry, string>): readonly Backend[] {
    const base = this.#output ?? previous;
    if (!namesChanged && previous !== undefined && base !== undefined) {
      let backends: Backend[] | undefined;
      const replaced: number[] = [];
      for (const entry of entries) {
        for (const backend of this.#backendsOf(entry, starved)) {
          const at = this.#positions.get(backend.name) as number;
          if ((backends ?? base)[at] === backend) continue;
          backends ??= base.slice();
          backends[at] = backend;
          replaced.push(at);
        }
      }
      if (backends === undefined) return base;
      recordReplacements(backends, base, replaced);
      this.#output = backends;
      return backends;
    }
    const backends = entries.flatMap((e) => this.#backendsOf(e, starved)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#positions = new Map(backends.map((b, i) => [b.name, i]));
    this.#output = backends;
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

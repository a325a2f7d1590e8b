// Store reads as templates see them: objects rejected by the object guard are left out and
// reported once per render through `warn`; an unknown store reads as empty, so a read never
// throws into a template.
import type { IndexedStore } from './indexed-store.js';
import type { ModelSource } from '../routing/model-source.js';
import { guardObject } from './object-guard.js';
import type { KubeObject } from '../protocol.js';

export class GuardedReader implements ModelSource {
  readonly #lookup: (name: string) => IndexedStore | undefined;
  readonly #warn: (message: string) => void;
  readonly #reported = new Set<string>();
  /** Filtered `list()` results of this render, by store. */
  readonly #lists = new Map<string, readonly KubeObject[]>();

  constructor(lookup: (name: string) => IndexedStore | undefined, warn: (message: string) => void) {
    this.#lookup = lookup;
    this.#warn = warn;
  }

  list(store: string): readonly KubeObject[] {
    let list = this.#lists.get(store);
    if (list === undefined) {
      list = this.#filter(this.#lookup(store)?.list() ?? []);
      this.#lists.set(store, list);
    }
    return list;
  }

  fetch(store: string, keys: readonly string[]): readonly KubeObject[] {
    return this.#filter(this.#lookup(store)?.fetch(keys) ?? []);
  }

  getSingle(store: string, keys: readonly string[]): KubeObject | undefined {
    const found = this.fetch(store, keys);
    return found.length === 1 ? found[0] : undefined;
  }

  store(name: string): IndexedStore | undefined {
    return this.#lookup(name);
  }

  reject(reason: string): void {
    if (this.#reported.has(reason)) return;
    this.#reported.add(reason);
    this.#warn(`rejected ${reason}`);
  }

  #filter(objects: readonly KubeObject[]): KubeObject[] {
    const out: KubeObject[] = [];
    for (const object of objects) {
      const verdict = guardObject(object);
      if (verdict.ok) out.push(object);
      else this.reject(verdict.reason);
    }
    return out;
  }
}

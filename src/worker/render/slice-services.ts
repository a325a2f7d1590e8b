// Which Service each EndpointSlice of a store belongs to (its index values, `namespace/service`
// under the default store definition), kept between renders from the store's change journal: a
// slice that moved to another Service, or was deleted, names the Service it left as well as the
// one it joined. Built from the whole store once, then per changed key.
import type { IndexedStore } from '../store/indexed-store.js';

/** One changed slice: its store key and the Services it belonged to before and after the change. */
export interface SliceChange {
  readonly key: string;
  readonly services: readonly string[];
}

export class SliceServices {
  #store: IndexedStore | undefined;
  #generation = -1;
  readonly #services = new Map<string, string>();

  /**
   * The slices changed since the previous call, or undefined when that is not known (the first
   * call, another store, or a journal that no longer reaches back): everything is taken in afresh.
   */
  observe(store: IndexedStore | undefined): readonly SliceChange[] | undefined {
    if (store === undefined) {
      this.#store = undefined;
      return undefined;
    }
    const keys = store === this.#store ? store.changedSince(this.#generation) : undefined;
    this.#generation = store.generation;
    if (keys === undefined) {
      this.#store = store;
      this.#services.clear();
      for (const key of store.keys()) this.#services.set(key, serviceOf(store, key) as string);
      return undefined;
    }
    const changes: SliceChange[] = [];
    for (const key of new Set(keys)) {
      const before = this.#services.get(key);
      const after = serviceOf(store, key);
      if (after === undefined) this.#services.delete(key);
      else this.#services.set(key, after);
      const services = before === undefined || before === after ? (after === undefined ? [] : [after]) : after === undefined ? [before] : [before, after];
      changes.push({ key, services });
    }
    return changes;
  }
}

function serviceOf(store: IndexedStore, key: string): string | undefined {
  const object = store.get(key);
  return object === undefined ? undefined : store.indexValues(object).join('/');
}

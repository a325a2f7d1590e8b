// The stores as they would be with one reviewed object applied: the replica's guarded reads,
// with the object (its accepted view) in place of what its store holds under its key, or added
// when the store holds nothing there. What the render would compute from the cluster after the
// change, computed from the overlay, is what the review judges. Only the overlaid store differs;
// lookups by index (`fetch`) there match on namespace, or namespace and name, the stores'
// index of the Gateway API kinds.
import type { KubeObject } from '../protocol.js';
import type { ModelSource } from '../routing/model-source.js';
import type { IndexedStore } from '../store/indexed-store.js';
import { objectKey } from '../store/indexed-store.js';

export class OverlaySource implements ModelSource {
  readonly #base: ModelSource;
  readonly #store: string;
  readonly #key: string;
  readonly #object: KubeObject;
  #list: readonly KubeObject[] | undefined;

  constructor(base: ModelSource, store: string, object: KubeObject) {
    this.#base = base;
    this.#store = store;
    this.#key = objectKey(object);
    this.#object = object;
  }

  list(store: string): readonly KubeObject[] {
    if (store !== this.#store) return this.#base.list(store);
    this.#list ??= [...this.#base.list(store).filter((o) => objectKey(o) !== this.#key), this.#object];
    return this.#list;
  }

  fetch(store: string, keys: readonly string[]): readonly KubeObject[] {
    const found = this.#base.fetch(store, keys);
    if (store !== this.#store) return found;
    const kept = found.filter((o) => objectKey(o) !== this.#key);
    const meta = this.#object.metadata;
    const at = [meta.namespace ?? '', meta.name];
    if (keys.every((k, i) => at[i] === k)) kept.push(this.#object);
    return kept;
  }

  getSingle(store: string, keys: readonly string[]): KubeObject | undefined {
    const found = this.fetch(store, keys);
    return found.length === 1 ? found[0] : undefined;
  }

  /** The raw stores, as the replica holds them: change tracking is no business of a review. */
  store(name: string): IndexedStore | undefined {
    return this.#base.store(name);
  }

  reject(reason: string): void {
    this.#base.reject(reason);
  }
}

// HttpResourceStore: the main thread's side of the internal store that carries HTTP resources to
// renders. One object per resource that has content, `{accepted?, pending?}` (see
// HttpResourceObject); every write replaces the object, so it reaches worker replicas as an
// ordinary store delta and the `httpResource` helper reads it like any store.
import type { HttpResourceContent, HttpResourceObject } from '../../worker/templates/http-resource-helper.js';
import { HTTP_RESOURCE_STORE } from '../../worker/templates/template-engine.js';
import type { Store, StoreProvider } from '../stores/store-provider.js';

export { HTTP_RESOURCE_STORE };
export type { HttpResourceContent, HttpResourceObject };

export class HttpResourceStore {
  readonly #stores: StoreProvider;
  readonly #store: Store;

  /**
   * Defines the internal store in `stores` (idempotent). Do it before the engine starts, so the
   * first full sync of each worker replica already describes the store.
   */
  constructor(stores: StoreProvider) {
    this.#stores = stores;
    this.#store = stores.define({ name: HTTP_RESOURCE_STORE, indexBy: ['metadata.name'], kind: 'HttpResource', apiVersion: 'haptic-reconciler/v1' });
  }

  get(name: string): HttpResourceObject | undefined {
    return this.#store.get(name) as HttpResourceObject | undefined;
  }

  /** Makes `content` the resource's pending content; returns the store version that holds it. */
  offer(name: string, content: HttpResourceContent): number {
    this.#write(name, this.get(name)?.accepted, content);
    return this.#stores.version;
  }

  /** Pending becomes accepted; returns it (undefined, and nothing written, when none was pending). */
  accept(name: string): HttpResourceContent | undefined {
    const pending = this.get(name)?.pending;
    if (pending !== undefined) this.#write(name, pending, undefined);
    return pending;
  }

  /** Drops the pending content, keeping the accepted one; returns what was dropped. */
  dropPending(name: string): HttpResourceContent | undefined {
    const current = this.get(name);
    if (current?.pending !== undefined) this.#write(name, current.accepted, undefined);
    return current?.pending;
  }

  #write(name: string, accepted: HttpResourceContent | undefined, pending: HttpResourceContent | undefined): void {
    const object: HttpResourceObject = {
      apiVersion: 'haptic-reconciler/v1',
      kind: 'HttpResource',
      metadata: { name },
      ...(accepted === undefined ? {} : { accepted }),
      ...(pending === undefined ? {} : { pending }),
    };
    this.#store.upsert(Object.freeze(object), name);
  }
}

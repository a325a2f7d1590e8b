// What the routing model is built from: guarded store reads (rejected objects never appear),
// plus the raw stores, whose generations and change journals let the builder tell which cached
// Ingress contributions are still valid. The store layer's GuardedReader implements it.
import type { KubeObject } from '../protocol.js';
import type { IndexedStore } from '../store/indexed-store.js';

/** Guarded store reads: rejected objects never appear. */
export interface StoreReader {
  list(store: string): readonly KubeObject[];
  fetch(store: string, keys: readonly string[]): readonly KubeObject[];
  getSingle(store: string, keys: readonly string[]): KubeObject | undefined;
}

/** What the builder reads: guarded store reads plus the raw stores, for change tracking. */
export interface ModelSource extends StoreReader {
  /** The raw store (its generation and change journal), or undefined when it does not exist. */
  store(name: string): IndexedStore | undefined;
  /** Reports an object the guard rejected; the source reports each reason once per render. */
  reject(reason: string): void;
  /** The objects of a store the guard rejected whole, raw as the store holds them (their claims are held, see held-claims.ts). */
  rejected?(store: string): readonly KubeObject[];
  /** What the render gate leaves out of these reads, as a key: equal keys, equal exclusions. Absent means none. */
  readonly exclusionKey?: string;
}

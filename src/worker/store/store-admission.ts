// Admission into a store: the check every object passes on its way into any store (main-thread
// stores and worker replicas alike). The object must have a name to be keyed by; a store with a
// definition stamps its kind and apiVersion on an object that lacks them (Kubernetes LIST items
// carry neither) and refuses an object of another kind. Every admitted object is registered with
// its store, so the object guard chooses its checks by the store the object entered, never by
// the object's own `kind` field. Cheap and synchronous: the spec checks run later, in the worker.
import type { KubeObject } from '../protocol.js';
import { printable, quote } from './log-text.js';

/** The part of a store definition that admission and the guard read. */
export interface StoreKind {
  readonly kind: string;
  readonly apiVersion: string;
}

/**
 * A store as its objects remember it. `definition` is fixed at construction, or adopted once
 * (see IndexedStore.adopt) by a store that was created without one.
 */
export interface StoreIdentity {
  readonly name: string;
  definition: StoreKind | undefined;
}

/** An object a store refused; thrown by `upsert`, with the store and the reason. */
export class StoreRefusal extends TypeError {
  constructor(
    readonly store: string,
    readonly reason: string,
  ) {
    super(`store ${printable(store)} refused an object: ${reason}`);
    this.name = 'StoreRefusal';
  }
}

/** Which store each admitted object entered. Objects are never mutated once stored. */
const entered = new WeakMap<object, StoreIdentity>();

/** The store `object` was admitted into, if any. */
export function storeOf(object: object): StoreIdentity | undefined {
  return entered.get(object);
}

/** Records that `object`, a copy of one the store admitted (same kind and fields), is in `store`. */
export function registerAdmitted<T extends object>(object: T, store: StoreIdentity): T {
  entered.set(object, store);
  return object;
}

/**
 * The object as the store keeps it: the same object, or a copy with the store's kind and
 * apiVersion filled in, registered with the store unless `register` is false (a store that
 * keeps only its text registers the object parsed from it). Throws a StoreRefusal for an object
 * without a name or of another kind.
 */
export function admitObject(object: unknown, store: StoreIdentity, register = true): KubeObject {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    throw new StoreRefusal(store.name, `expected an object, got ${quote(object)}`);
  }
  const candidate = object as Record<string, unknown>;
  const meta = candidate.metadata as Record<string, unknown> | null | undefined;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw new StoreRefusal(store.name, 'metadata is missing');
  if (typeof meta.name !== 'string' || meta.name === '') throw new StoreRefusal(store.name, `metadata.name ${quote(meta.name)} is not a name`);
  if (meta.namespace !== undefined && typeof meta.namespace !== 'string') {
    throw new StoreRefusal(store.name, `metadata.namespace ${quote(meta.namespace)} of ${printable(meta.name)} is not a string`);
  }
  let admitted = object as KubeObject;
  const def = store.definition;
  if (def !== undefined) {
    for (const field of ['kind', 'apiVersion'] as const) {
      const value = candidate[field];
      if (value !== undefined && value !== def[field]) {
        throw new StoreRefusal(store.name, `${field} ${quote(value)} of ${printable(meta.name)} is not the store's ${field} ${quote(def[field])}`);
      }
    }
    if (candidate.kind === undefined || candidate.apiVersion === undefined) {
      admitted = { ...admitted, apiVersion: def.apiVersion, kind: def.kind };
    }
  }
  if (register) entered.set(admitted, store);
  return admitted;
}

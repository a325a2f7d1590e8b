// Every rejection in one store, kept up to date from the store's change journal: a render asks
// for the rejections of all its stores, and pays for the objects that changed since the last
// render, not for the store's size. Each object's rejections come from its cached guard verdict,
// so an unchanged object is never checked again. The list follows the store's key order. Before
// a batch is checked, the annotation checks may prepare for it (one HAProxy run for every new
// regular expression of the batch, say).
import type { KubeObject, Rejection } from '../protocol.js';
import { annotationChecksGeneration, prepareAnnotationChecks } from './annotation-checks.js';
import type { GuardContext } from './guard-context.js';
import { compareKeys, type IndexedStore } from './indexed-store.js';
import { guardObject } from './object-guard.js';

interface StoreRejections {
  readonly context: GuardContext;
  readonly checks: number;
  generation: number;
  /** Rejections by object key; objects without any are absent. */
  readonly byKey: Map<string, readonly Rejection[]>;
  /** The flattened list in key order, rebuilt only after a change. */
  list: readonly Rejection[] | null;
}

const indexes = new WeakMap<IndexedStore, StoreRejections>();
const NONE: readonly Rejection[] = Object.freeze([]);

/** The rejections of every object in `store` under `context`, in key order. */
export function storeRejections(store: IndexedStore, context: GuardContext): readonly Rejection[] {
  let state = indexes.get(store);
  const checks = annotationChecksGeneration();
  const changed = state === undefined || state.context !== context || state.checks !== checks ? undefined : store.changedSince(state.generation);
  if (state === undefined || changed === undefined) {
    state = { context, checks, generation: store.generation, byKey: new Map(), list: null };
    indexes.set(store, state);
    const keys = [...store.keys()];
    prepare(store, keys);
    for (const key of keys) record(state, store, key);
  } else if (changed.length > 0) {
    const keys = [...new Set(changed)];
    prepare(store, keys);
    for (const key of keys) record(state, store, key);
    state.generation = store.generation;
  }
  if (state.list === null) {
    if (state.byKey.size === 0) {
      state.list = NONE;
    } else {
      const keys = [...state.byKey.keys()].sort(compareKeys);
      state.list = Object.freeze(keys.flatMap((key) => state.byKey.get(key) as readonly Rejection[]));
    }
  }
  return state.list;
}

/** Lets the annotation checks batch their work for the objects about to be checked. */
function prepare(store: IndexedStore, keys: readonly string[]): void {
  const kind = store.definition?.kind;
  if (kind === undefined) return;
  const objects: KubeObject[] = [];
  for (const key of keys) {
    const object = store.get(key);
    if (object !== undefined) objects.push(object);
  }
  prepareAnnotationChecks(kind, objects);
}

function record(state: StoreRejections, store: IndexedStore, key: string): void {
  const object = store.get(key);
  const rejections = object === undefined ? NONE : guardObject(object, state.context).rejections;
  const before = state.byKey.get(key);
  if (rejections.length === 0) {
    if (before === undefined) return;
    state.byKey.delete(key);
  } else if (before !== rejections) {
    state.byKey.set(key, rejections);
  } else {
    return;
  }
  state.list = null;
}

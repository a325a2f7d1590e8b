// Store reads on behalf of one Ingress, recorded so its cached contribution can be invalidated:
// every lookup and every object met becomes a dependency key, and guard rejections are logged in
// order next to the Ingress's warnings, to be replayed when the contribution is reused. The key
// formats live here so the builder, mapping store changes back to keys, builds the same strings.
import { flat } from '../store/compact-object.js';
import { objectKey } from '../store/indexed-store.js';
import { guardObject } from '../store/object-guard.js';
import type { KubeObject } from '../protocol.js';
import type { Finding } from './findings.js';
import type { ModelSource, StoreReader } from './model-source.js';

/** Warnings and guard rejections of one Ingress's computation, in the order they happened. */
export type LogEntry = { readonly warn: string; readonly finding?: Finding } | { readonly reject: string };

/** Dependency key of a lookup of `keys` (index values) in `store`. */
export function lookupKey(store: string, keys: readonly string[]): string {
  return `t\0${store}\0${keys.join('\0')}`;
}

/** Dependency key of the object with key `key` in `store`. */
export function objectDepKey(store: string, key: string): string {
  return `o\0${store}\0${key}`;
}

/** Up to this many dependencies are told apart by a look through the list. */
const SMALL_DEPS = 16;

/**
 * Guarded store reads on behalf of one Ingress: records the lookups made (dependency keys) and,
 * in order, the guard rejections met, next to the warnings of the Ingress's computation.
 */
export class RecordedReads implements StoreReader {
  readonly deps: string[] = [];
  readonly log: LogEntry[] = [];
  /**
   * `deps` as a set, once they are more than SMALL_DEPS: one reads object may record many (all
   * HTTPRoutes of a Gateway build), but an Ingress's reads record a handful, which a look
   * through `deps` finds as fast, without a Set per Ingress.
   */
  #seen: Set<string> | undefined;

  constructor(private readonly source: ModelSource) {}

  list(store: string): readonly KubeObject[] {
    return this.source.list(store);
  }

  fetch(store: string, keys: readonly string[]): readonly KubeObject[] {
    return this.read(store, keys, undefined);
  }

  getSingle(store: string, keys: readonly string[]): KubeObject | undefined {
    const found = this.read(store, keys, undefined);
    return found.length === 1 ? found[0] : undefined;
  }

  warn(message: string, finding?: Finding): void {
    this.log.push(finding === undefined ? { warn: message } : { warn: message, finding });
  }

  /** Guarded objects at `keys`; rejections go to `rejections`, or to the log when undefined. */
  read(store: string, keys: readonly string[], rejections: string[] | undefined): KubeObject[] {
    this.#depend(lookupKey(store, keys));
    const found: KubeObject[] = [];
    for (const object of this.source.store(store)?.fetch(keys) ?? []) {
      this.#depend(objectDepKey(store, objectKey(object)));
      const verdict = guardObject(object);
      if (verdict.ok) found.push(object);
      else if (rejections !== undefined) rejections.push(verdict.reason);
      else this.log.push({ reject: verdict.reason });
    }
    return found;
  }

  #depend(dep: string): void {
    if (this.#seen === undefined ? this.deps.includes(dep) : this.#seen.has(dep)) return;
    // Kept as long as the Ingress's entry: one flat string, not the pieces it was joined from.
    const kept = flat(dep);
    this.deps.push(kept);
    if (this.#seen !== undefined) this.#seen.add(kept);
    else if (this.deps.length > SMALL_DEPS) this.#seen = new Set(this.deps);
  }
}

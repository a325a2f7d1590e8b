// Store reads as templates see them: each object through its guard verdict, so rejected objects
// are left out and partly rejected ones appear as their accepted view. Rejections are reported
// once per render through `warn` (escaped) and kept as structured data. A store created without
// a definition adopts the kind its template set declares before anything is read from it; a
// store whose kind contradicts the set is read as empty. An unknown store reads as empty too, so
// a read never throws into a template. Objects the render gate excluded (render-exclusions.ts) are
// left out as well, each as an object rejection with HAProxy's reason.
import type { KubeObject, Rejection } from '../protocol.js';
import type { ModelSource } from '../routing/model-source.js';
import { DEFAULT_CONTEXT, type GuardContext } from './guard-context.js';
import type { IndexedStore } from './indexed-store.js';
import { escapeLogText, printable } from './log-text.js';
import { guardObject, rejectionMessage, type GuardVerdict } from './object-guard.js';
import { guardedList } from './guarded-lists.js';
import { storeRejections } from './rejection-index.js';
import { ExclusionFilter } from './render-exclusions.js';

export class GuardedReader implements ModelSource {
  readonly #lookup: (name: string) => IndexedStore | undefined;
  readonly #warn: (message: string) => void;
  readonly #context: GuardContext;
  /** Messages reported in this render (each once). */
  readonly #reported = new Set<string>();
  readonly #rejections: Rejection[] = [];
  /** Filtered `list()` results of this render, by store. */
  readonly #lists = new Map<string, readonly KubeObject[]>();
  /** Stores checked against the context's definitions in this render: the store, or undefined when refused. */
  readonly #stores = new Map<string, IndexedStore | undefined>();

  readonly #exclusions: ExclusionFilter;

  constructor(
    lookup: (name: string) => IndexedStore | undefined,
    warn: (message: string) => void,
    context: GuardContext = DEFAULT_CONTEXT,
    exclusions: ExclusionFilter = new ExclusionFilter(undefined),
  ) {
    this.#lookup = lookup;
    this.#warn = warn;
    this.#context = context;
    this.#exclusions = exclusions;
  }

  /** What the render gate leaves out of this render's reads, as a key (render-exclusions.ts). */
  get exclusionKey(): string {
    return this.#exclusions.key;
  }

  /** The structured rejections reported so far in this render, in report order. */
  get rejections(): readonly Rejection[] {
    return this.#rejections;
  }

  list(store: string): readonly KubeObject[] {
    let list = this.#lists.get(store);
    if (list === undefined) {
      list = this.#exclusions.empty ? this.#kept(store) : this.#filter(store, this.store(store)?.list() ?? []);
      this.#lists.set(store, list);
    }
    return list;
  }

  fetch(store: string, keys: readonly string[]): readonly KubeObject[] {
    return this.#filter(store, this.store(store)?.fetch(keys) ?? []);
  }

  getSingle(store: string, keys: readonly string[]): KubeObject | undefined {
    const found = this.fetch(store, keys);
    return found.length === 1 ? found[0] : undefined;
  }

  /** The raw store, with its kind settled; undefined when unknown or of a contradicting kind. */
  store(name: string): IndexedStore | undefined {
    if (this.#stores.has(name)) return this.#stores.get(name);
    let store = this.#lookup(name);
    const declared = this.#context.definitions.get(name);
    if (store !== undefined && declared !== undefined) {
      const held = store.adopt(declared);
      if (held.kind !== declared.kind) {
        this.#report(`store ${name} holds ${held.kind} objects, but the template set declares it for ${declared.kind}; none of them are rendered`);
        store = undefined;
      }
    }
    this.#stores.set(name, store);
    return store;
  }

  /** The verdict on an object of one of this render's stores, under this render's policy. */
  verdict(object: KubeObject): GuardVerdict {
    return guardObject(object, this.#context);
  }

  /** Reports a rejection message met elsewhere (the routing model replays them); once per render. */
  reject(reason: string): void {
    this.#report(`rejected ${reason}`);
  }

  /**
   * The objects of a store the guard rejected whole, raw, in key order. Costs what changed in
   * the store since the previous render, plus the rejected objects (see rejection-index.ts).
   */
  rejected(store: string): readonly KubeObject[] {
    const raw = this.store(store);
    if (raw === undefined) return [];
    const found: KubeObject[] = [];
    let last = '';
    for (const rejection of storeRejections(raw, this.#context)) {
      const key = rejection.namespace === '' ? rejection.name : `${rejection.namespace}/${rejection.name}`;
      if (key === last) continue;
      last = key;
      const object = raw.get(key);
      if (object !== undefined && !guardObject(object, this.#context).ok) found.push(object);
    }
    return found;
  }

  /**
   * Reports every rejection in the named stores, store by store in key order, and returns them.
   * Costs what changed in each store since the previous render (see rejection-index.ts).
   */
  collectRejections(stores: readonly string[]): readonly Rejection[] {
    for (const name of stores) {
      const store = this.store(name);
      if (store === undefined) continue;
      for (const rejection of storeRejections(store, this.#context)) this.#add(rejection);
    }
    return this.#rejections;
  }

  /** What #filter gives for the whole store, from the list kept between renders (guarded-lists.ts), and the same rejections reported. */
  #kept(storeName: string): readonly KubeObject[] {
    const store = this.store(storeName);
    if (store === undefined) return [];
    for (const rejection of storeRejections(store, this.#context)) this.#add(rejection);
    return guardedList(store, this.#context);
  }

  #filter(storeName: string, objects: readonly KubeObject[]): KubeObject[] {
    const out: KubeObject[] = [];
    const kind = this.#exclusions.empty ? undefined : (this.#context.definitions.get(storeName)?.kind ?? this.#stores.get(storeName)?.definition?.kind);
    for (const object of objects) {
      const excluded = kind === undefined ? undefined : this.#exclusions.test(kind, object);
      if (excluded !== undefined) {
        if (excluded !== 'namespace') {
          const namespace = object.metadata.namespace;
          this.#add({ kind: printable(kind), namespace: typeof namespace === 'string' ? printable(namespace) : '', name: printable(object.metadata.name), scope: 'object', reason: escapeLogText(excluded.reason) });
        }
        continue;
      }
      const verdict = guardObject(object, this.#context);
      for (const rejection of verdict.rejections) this.#add(rejection);
      if (verdict.ok) out.push(verdict.object);
    }
    return out;
  }

  #add(rejection: Rejection): void {
    if (this.#report(`rejected ${rejectionMessage(rejection)}`)) this.#rejections.push(rejection);
  }

  /** Warns once per message and render; returns whether it was new. */
  #report(message: string): boolean {
    if (this.#reported.has(message)) return false;
    this.#reported.add(message);
    this.#warn(message);
    return true;
  }
}

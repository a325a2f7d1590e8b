// IndexedStore: the objects of one watched resource type, indexed by the fields its store
// definition names (exact and prefix lookups walk a tree of maps; `list()` stays sorted by
// namespace/name through binary-search inserts). Every change bumps the generation and lands in a
// bounded journal, so incremental consumers ask which keys changed. Every object passes
// admission (store-admission.ts) on its way in. Pure and synchronous: main thread and replicas.
import type { KubeObject } from '../protocol.js';
import { flat, fromDormantText, toDormantText } from './compact-object.js';
import { DormantKeys } from './dormant-keys.js';
import { IndexTree } from './index-tree.js';
import { admitObject, registerAdmitted, type StoreIdentity, type StoreKind } from './store-admission.js';
import { lowerBound } from './sorted-search.js';

export { StoreRefusal, type StoreKind } from './store-admission.js';

/** The primary key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(object: KubeObject): string {
  const ns = object.metadata.namespace;
  return ns === undefined || ns === '' ? object.metadata.name : `${ns}/${object.metadata.name}`;
}

/**
 * Splits an index path on unescaped dots: `metadata.labels.kubernetes\.io/service-name` becomes
 * `['metadata', 'labels', 'kubernetes.io/service-name']`.
 */
export function parseFieldPath(path: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < path.length; i++) {
    const ch = path[i];
    if (ch === '\\' && path[i + 1] === '.') {
      current += '.';
      i++;
    } else if (ch === '.') {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  if (parts.some((p) => p === '')) throw new TypeError(`index path ${JSON.stringify(path)} has an empty segment`);
  return parts;
}

/** The index value of a field: its string form, or '' when it is missing or not a scalar. */
function fieldValue(object: unknown, path: readonly string[]): string {
  let value: unknown = object;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return '';
    value = (value as Record<string, unknown>)[part];
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

/** The change journal keeps at least this many keys (and at most twice the store's size beyond that). */
const JOURNAL_MIN = 4096;

/**
 * How a store holds an object: the object, or (in a dormant store, until something reads it) the
 * JSON text of its compact form (compact-object.ts), which costs a third as much. No admitted
 * object is a string, so the two never mix up.
 */
type Held = KubeObject | string;

export interface IndexedStoreOptions {
  /**
   * Hold plain-JSON objects as text until they are first read (get, list, fetch), then as the
   * compact object parsed from it: a worker replica that never renders (a spare) holds each
   * object as text, and no index tree, one that renders pays the parse once per object version.
   * @default false
   */
  readonly dormant?: boolean;
}

export class IndexedStore {
  readonly name: string;
  readonly indexBy: readonly string[];
  /** What the objects of this store remember as their store (see store-admission.ts). */
  readonly #identity: StoreIdentity;
  readonly #paths: readonly (readonly string[])[];
  readonly #byKey = new Map<string, Held>();
  /** The index tree; a dormant store builds it on its first lookup (a spare that never renders needs none), null until then. */
  #index: IndexTree | null;
  readonly #dormant: boolean;
  /** The property-name codes of this store's texts (a dormant store's only). */
  readonly #keys = new DormantKeys();
  /** Every key, sorted by compareKeys; kept sorted on each change (null until first needed). */
  #order: string[] | null = null;
  /** The objects in `#order`; rebuilt lazily after a change. */
  #sorted: KubeObject[] | null = null;
  /** Bumped by every change. */
  #generation = 0;
  /** Keys changed by generations `#journalStart + 1 ...`, oldest first (bounded). */
  #journal: string[] = [];
  #journalStart = 0;

  /**
   * `definition` is the kind and apiVersion of the objects the store holds: it stamps them on
   * objects that lack them, refuses other kinds, and decides which checks the guard applies.
   * A store without one admits any named object, and the guard renders none of them until a
   * template set names the store's kind (see `adopt`).
   */
  constructor(name: string, indexBy: readonly string[] = ['metadata.namespace', 'metadata.name'], definition?: StoreKind, options: IndexedStoreOptions = {}) {
    if (indexBy.length === 0) throw new TypeError(`store ${name}: indexBy must name at least one field`);
    this.name = name;
    this.indexBy = indexBy;
    this.#paths = indexBy.map(parseFieldPath);
    this.#dormant = options.dormant === true;
    this.#index = this.#dormant ? null : new IndexTree(indexBy.length);
    this.#identity = { name, definition: definition === undefined ? undefined : { kind: definition.kind, apiVersion: definition.apiVersion } };
  }

  /** The kind and apiVersion this store holds, when it has a definition. */
  get definition(): StoreKind | undefined {
    return this.#identity.definition;
  }

  /**
   * Gives a store created without a definition the one a template set declares for it. Only
   * once: a store with a definition keeps its own, and the answer says which one is in force.
   * Objects already admitted keep their fields; the guard refuses those of another kind.
   */
  adopt(definition: StoreKind): StoreKind {
    this.#identity.definition ??= { kind: definition.kind, apiVersion: definition.apiVersion };
    return this.#identity.definition;
  }

  /** The object as this store would keep it; throws a StoreRefusal if the store refuses it. */
  admit(object: KubeObject): KubeObject {
    return admitObject(object, this.#identity);
  }

  get size(): number {
    return this.#byKey.size;
  }

  /** Bumped once per change; compare with a remembered value to see whether anything changed. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * The keys changed after `generation` (repeats possible, oldest first), or undefined when the
   * journal no longer reaches back that far: the caller must then treat everything as changed.
   */
  changedSince(generation: number): readonly string[] | undefined {
    if (generation < this.#journalStart || generation > this.#generation) return undefined;
    return this.#journal.slice(generation - this.#journalStart);
  }

  /** The index values of `object` under this store's indexBy, as `fetch` would match them. */
  indexValues(object: KubeObject): string[] {
    return this.#paths.map((path) => fieldValue(object, path));
  }

  /**
   * Admits, then inserts or replaces; returns whether the object is new. Throws a StoreRefusal
   * (and changes nothing) when the store refuses the object.
   */
  upsert(raw: KubeObject, key?: string): boolean {
    // A dormant store registers the object only when it holds it: the one its text stands for is registered when it is parsed.
    const object = admitObject(raw, this.#identity, !this.#dormant);
    key = flat(key ?? objectKey(object));
    const previous = this.#byKey.get(key);
    if (previous !== undefined) this.#index?.delete(key, this.indexValues(this.#objectOf(previous)));
    const held: Held = this.#dormant ? (toDormantText(object, this.#identity.definition, this.#keys) ?? registerAdmitted(object, this.#identity)) : object;
    this.#byKey.set(key, held);
    this.#index?.set(key, this.indexValues(object));
    if (previous === undefined && this.#order !== null) this.#order.splice(this.#position(key), 0, key);
    this.#changed(key);
    return previous === undefined;
  }

  /** Removes by primary key; returns whether something was removed. */
  delete(key: string): boolean {
    const previous = this.#byKey.get(key);
    if (previous === undefined) return false;
    this.#byKey.delete(key);
    this.#index?.delete(key, this.indexValues(this.#objectOf(previous)));
    if (this.#order !== null) this.#order.splice(this.#position(key), 1);
    this.#changed(key);
    return true;
  }

  clear(): void {
    for (const key of this.#byKey.keys()) this.#changed(key);
    this.#byKey.clear();
    this.#index?.clear();
    this.#order = null;
  }

  get(key: string): KubeObject | undefined {
    const held = this.#byKey.get(key);
    return held === undefined ? undefined : this.#awake(key, held);
  }

  /** The primary keys held, in no particular order. */
  keys(): IterableIterator<string> {
    return this.#byKey.keys();
  }

  /** Every object, sorted by namespace/name. The array is shared: do not mutate it. */
  list(): readonly KubeObject[] {
    if (this.#sorted === null) {
      this.#order ??= [...this.#byKey.keys()].sort(compareKeys);
      this.#sorted = this.#order.map((k) => this.#awake(k, this.#byKey.get(k) as Held));
    }
    return this.#sorted;
  }

  /**
   * Objects whose index values equal `keys`. Fewer keys than index fields is a prefix lookup.
   * Results are sorted by namespace/name.
   */
  fetch(keys: readonly string[]): KubeObject[] {
    const found = this.#tree().find(keys);
    if (found.length > 1) found.sort(compareKeys);
    return found.map((key) => this.#awake(key, this.#byKey.get(key) as Held));
  }

  /** The single object at `keys`, or undefined when there is none or more than one. */
  getSingle(keys: readonly string[]): KubeObject | undefined {
    const found = this.fetch(keys);
    return found.length === 1 ? found[0] : undefined;
  }

  /** The index tree, built from every object held (each one parsed for good) the first time a dormant store is asked. */
  #tree(): IndexTree {
    if (this.#index !== null) return this.#index;
    const tree = new IndexTree(this.indexBy.length);
    for (const [key, held] of this.#byKey) tree.set(key, this.indexValues(this.#awake(key, held)));
    this.#index = tree;
    return tree;
  }

  /** The object a held entry stands for, parsed afresh when it is text (for its index values). */
  #objectOf(held: Held): KubeObject {
    return typeof held === 'string' ? fromDormantText(held, this.#identity.definition, this.#keys) : held;
  }

  /**
   * The object `held` stands for. Text is parsed once, into the object held from then on (so
   * its identity, by which the guard caches verdicts, stays the same until the key changes).
   */
  #awake(key: string, held: Held): KubeObject {
    if (typeof held !== 'string') return held;
    const object = registerAdmitted(fromDormantText(held, this.#identity.definition, this.#keys), this.#identity);
    this.#byKey.set(key, object);
    return object;
  }

  /** Where `key` is, or would be inserted, in `#order` (binary search). */
  #position(key: string): number {
    return lowerBound(this.#order as string[], key, compareKeys);
  }

  #changed(key: string): void {
    this.#sorted = null;
    this.#generation++;
    this.#journal.push(key);
    // Bounded: past the limit the older half is dropped, and readers that far behind rebuild.
    if (this.#journal.length > Math.max(JOURNAL_MIN, 2 * this.#byKey.size)) {
      const drop = this.#journal.length >> 1;
      this.#journal = this.#journal.slice(drop);
      this.#journalStart += drop;
    }
  }
}


/** Orders `namespace/name` keys by namespace, then name (plain code-unit order, stable across locales). */
export function compareKeys(a: string, b: string): number {
  const ia = a.indexOf('/');
  const ib = b.indexOf('/');
  const nsA = ia < 0 ? '' : a.slice(0, ia);
  const nsB = ib < 0 ? '' : b.slice(0, ib);
  if (nsA !== nsB) return nsA < nsB ? -1 : 1;
  const nameA = a.slice(ia + 1);
  const nameB = b.slice(ib + 1);
  return nameA < nameB ? -1 : nameA > nameB ? 1 : 0;
}

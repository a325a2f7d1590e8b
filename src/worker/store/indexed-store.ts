// IndexedStore: the objects of one watched resource type, indexed by the fields its store
// definition names (exact and prefix lookups walk a tree of maps; `list()` stays sorted by
// namespace/name through binary-search inserts). Every change bumps the generation and lands in a
// bounded journal, so incremental consumers ask which keys changed. Every object passes
// admission (store-admission.ts) on its way in. Pure and synchronous: main thread and replicas.
import type { KubeObject } from '../protocol.js';
import { admitObject, type StoreIdentity, type StoreKind } from './store-admission.js';

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
 * A leaf of the index tree: the objects of one combination of index values by key. Most leaves
 * hold a single object (an index by namespace and name always does), so a single one is held as
 * a `[key, object]` pair: a Map costs about six times as much.
 */
type Leaf = Map<string, KubeObject> | readonly [key: string, object: KubeObject];

/** A node of the index tree. Leaves (depth = number of index fields) hold objects by key. */
type IndexNode = Map<string, IndexNode | Leaf>;

export class IndexedStore {
  readonly name: string;
  readonly indexBy: readonly string[];
  /** What the objects of this store remember as their store (see store-admission.ts). */
  readonly #identity: StoreIdentity;
  readonly #paths: readonly (readonly string[])[];
  readonly #byKey = new Map<string, KubeObject>();
  readonly #index: IndexNode = new Map();
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
  constructor(name: string, indexBy: readonly string[] = ['metadata.namespace', 'metadata.name'], definition?: StoreKind) {
    if (indexBy.length === 0) throw new TypeError(`store ${name}: indexBy must name at least one field`);
    this.name = name;
    this.indexBy = indexBy;
    this.#paths = indexBy.map(parseFieldPath);
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
    const object = this.admit(raw);
    key ??= objectKey(object);
    const previous = this.#byKey.get(key);
    if (previous !== undefined) this.#unindex(key, previous);
    this.#byKey.set(key, object);
    this.#indexObject(key, object);
    if (previous === undefined && this.#order !== null) this.#order.splice(this.#position(key), 0, key);
    this.#changed(key);
    return previous === undefined;
  }

  /** Removes by primary key; returns whether something was removed. */
  delete(key: string): boolean {
    const previous = this.#byKey.get(key);
    if (previous === undefined) return false;
    this.#byKey.delete(key);
    this.#unindex(key, previous);
    if (this.#order !== null) this.#order.splice(this.#position(key), 1);
    this.#changed(key);
    return true;
  }

  clear(): void {
    for (const key of this.#byKey.keys()) this.#changed(key);
    this.#byKey.clear();
    this.#index.clear();
    this.#order = null;
  }

  get(key: string): KubeObject | undefined {
    return this.#byKey.get(key);
  }

  /** The primary keys held, in no particular order. */
  keys(): IterableIterator<string> {
    return this.#byKey.keys();
  }

  /** Every object, sorted by namespace/name. The array is shared: do not mutate it. */
  list(): readonly KubeObject[] {
    if (this.#sorted === null) {
      this.#order ??= [...this.#byKey.keys()].sort(compareKeys);
      this.#sorted = this.#order.map((k) => this.#byKey.get(k) as KubeObject);
    }
    return this.#sorted;
  }

  /**
   * Objects whose index values equal `keys`. Fewer keys than index fields is a prefix lookup.
   * Results are sorted by namespace/name.
   */
  fetch(keys: readonly string[]): KubeObject[] {
    if (keys.length > this.#paths.length) return [];
    let node: IndexNode | Leaf | undefined = this.#index;
    for (const key of keys) {
      node = (node as IndexNode).get(String(key));
      if (node === undefined) return [];
    }
    const found: [string, KubeObject][] = [];
    collect(node, this.#paths.length - keys.length, found);
    found.sort((a, b) => compareKeys(a[0], b[0]));
    return found.map(([, o]) => o);
  }

  /** The single object at `keys`, or undefined when there is none or more than one. */
  getSingle(keys: readonly string[]): KubeObject | undefined {
    const found = this.fetch(keys);
    return found.length === 1 ? found[0] : undefined;
  }

  /** Where `key` is, or would be inserted, in `#order` (binary search). */
  #position(key: string): number {
    const order = this.#order as string[];
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(order[mid] as string, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
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

  #indexObject(key: string, object: KubeObject): void {
    let node: IndexNode = this.#index;
    const last = this.#paths.length - 1;
    for (let depth = 0; depth < last; depth++) {
      const value = fieldValue(object, this.#paths[depth] as readonly string[]);
      let child = node.get(value) as IndexNode | undefined;
      if (child === undefined) {
        child = new Map();
        node.set(value, child);
      }
      node = child;
    }
    const leafValue = fieldValue(object, this.#paths[last] as readonly string[]);
    const leaf = node.get(leafValue) as Leaf | undefined;
    if (leaf instanceof Map) leaf.set(key, object);
    else if (leaf === undefined || leaf[0] === key) node.set(leafValue, [key, object]);
    else node.set(leafValue, new Map([leaf, [key, object]]));
  }

  #unindex(key: string, object: KubeObject): void {
    const trail: [IndexNode, string][] = [];
    let node: IndexNode = this.#index;
    for (let depth = 0; depth < this.#paths.length; depth++) {
      const value = fieldValue(object, this.#paths[depth] as readonly string[]);
      trail.push([node, value]);
      const child = node.get(value);
      if (child === undefined) return;
      node = child as IndexNode;
    }
    const leaf = node as unknown as Leaf;
    const [holder, leafValue] = trail[trail.length - 1] as [IndexNode, string];
    if (leaf instanceof Map) {
      leaf.delete(key);
      if (leaf.size === 1) holder.set(leafValue, leaf.entries().next().value as [string, KubeObject]);
      if (leaf.size > 0) return;
    } else if (leaf[0] !== key) {
      return;
    }
    holder.delete(leafValue);
    // Prune empty branches so a churning store does not accumulate empty maps.
    for (let i = trail.length - 2; i >= 0; i--) {
      const [parent, value] = trail[i] as [IndexNode, string];
      const child = parent.get(value) as IndexNode;
      if (child.size > 0) break;
      parent.delete(value);
    }
  }
}

function collect(node: IndexNode | Leaf, depthLeft: number, out: [string, KubeObject][]): void {
  if (depthLeft === 0) {
    const leaf = node as Leaf;
    if (leaf instanceof Map) for (const entry of leaf) out.push(entry);
    else out.push([leaf[0], leaf[1]]);
    return;
  }
  for (const child of (node as IndexNode).values()) collect(child, depthLeft - 1, out);
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

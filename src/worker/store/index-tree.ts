// The index tree of an IndexedStore: one level of maps per index field, down to leaves that
// hold the entries of one combination of index values by primary key. Most leaves hold a single
// entry (an index by namespace and name always does), so a single one is held as a `[key, value]`
// pair: a Map costs about six times as much. Empty branches are pruned, so churn leaves nothing.

/** A leaf: the entries of one combination of index values, by key. */
type Leaf<V> = Map<string, V> | readonly [key: string, value: V];

type IndexNode<V> = Map<string, IndexNode<V> | Leaf<V>>;

export class IndexTree<V> {
  readonly #depth: number;
  readonly #root: IndexNode<V> = new Map();

  /** `depth`: the number of index fields, at least 1. */
  constructor(depth: number) {
    this.#depth = depth;
  }

  /** Puts `value` under `key` at `values` (one per index field), replacing what `key` held there. */
  set(key: string, values: readonly string[], value: V): void {
    let node = this.#root;
    const last = this.#depth - 1;
    for (let depth = 0; depth < last; depth++) {
      const at = values[depth] as string;
      let child = node.get(at) as IndexNode<V> | undefined;
      if (child === undefined) {
        child = new Map();
        node.set(at, child);
      }
      node = child;
    }
    const at = values[last] as string;
    const leaf = node.get(at) as Leaf<V> | undefined;
    if (leaf instanceof Map) leaf.set(key, value);
    else if (leaf === undefined || leaf[0] === key) node.set(at, [key, value]);
    else node.set(at, new Map([leaf, [key, value]]));
  }

  /** Removes `key` from the leaf at `values`, pruning branches left empty. */
  delete(key: string, values: readonly string[]): void {
    const trail: [IndexNode<V>, string][] = [];
    let node: IndexNode<V> | Leaf<V> = this.#root;
    for (let depth = 0; depth < this.#depth; depth++) {
      const at = values[depth] as string;
      trail.push([node as IndexNode<V>, at]);
      const child: IndexNode<V> | Leaf<V> | undefined = (node as IndexNode<V>).get(at);
      if (child === undefined) return;
      node = child;
    }
    const leaf = node as Leaf<V>;
    const [holder, at] = trail[trail.length - 1] as [IndexNode<V>, string];
    if (leaf instanceof Map) {
      leaf.delete(key);
      if (leaf.size === 1) holder.set(at, leaf.entries().next().value as [string, V]);
      if (leaf.size > 0) return;
    } else if (leaf[0] !== key) {
      return;
    }
    holder.delete(at);
    for (let i = trail.length - 2; i >= 0; i--) {
      const [parent, value] = trail[i] as [IndexNode<V>, string];
      if ((parent.get(value) as IndexNode<V>).size > 0) break;
      parent.delete(value);
    }
  }

  /** The entries whose first index values equal `prefix` (all of them, or fewer: a prefix lookup), unsorted. */
  find(prefix: readonly string[]): [string, V][] {
    if (prefix.length > this.#depth) return [];
    let node: IndexNode<V> | Leaf<V> | undefined = this.#root;
    for (const value of prefix) {
      node = (node as IndexNode<V>).get(String(value));
      if (node === undefined) return [];
    }
    const found: [string, V][] = [];
    collect(node, this.#depth - prefix.length, found);
    return found;
  }

  clear(): void {
    this.#root.clear();
  }
}

function collect<V>(node: IndexNode<V> | Leaf<V>, depthLeft: number, out: [string, V][]): void {
  if (depthLeft === 0) {
    const leaf = node as Leaf<V>;
    if (leaf instanceof Map) for (const entry of leaf) out.push(entry);
    else out.push([leaf[0], leaf[1]]);
    return;
  }
  for (const child of (node as IndexNode<V>).values()) collect(child, depthLeft - 1, out);
}

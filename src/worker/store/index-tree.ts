// The index tree of an IndexedStore: one level of maps per index field, down to leaves that
// hold the primary keys of one combination of index values. The tree holds keys only; the store
// finds the objects by key. Most leaves hold a single key (an index by namespace and name always
// does), so a single one is held as the key string itself: a Set, or even a `[key, value]` pair,
// costs an allocation per entry. Empty branches are pruned, so churn leaves nothing.

/** A leaf: the keys of one combination of index values. */
type Leaf = Set<string> | string;

type IndexNode = Map<string, IndexNode | Leaf>;

export class IndexTree {
  readonly #depth: number;
  readonly #root: IndexNode = new Map();

  /** `depth`: the number of index fields, at least 1. */
  constructor(depth: number) {
    this.#depth = depth;
  }

  /** Files `key` at `values` (one per index field). */
  set(key: string, values: readonly string[]): void {
    let node = this.#root;
    const last = this.#depth - 1;
    for (let depth = 0; depth < last; depth++) {
      const at = values[depth] as string;
      let child = node.get(at) as IndexNode | undefined;
      if (child === undefined) {
        child = new Map();
        node.set(at, child);
      }
      node = child;
    }
    const at = values[last] as string;
    const leaf = node.get(at) as Leaf | undefined;
    if (leaf === undefined || leaf === key) node.set(at, key);
    else if (typeof leaf === 'string') node.set(at, new Set([leaf, key]));
    else leaf.add(key);
  }

  /** Removes `key` from the leaf at `values`, pruning branches left empty. */
  delete(key: string, values: readonly string[]): void {
    const trail: [IndexNode, string][] = [];
    let node: IndexNode | Leaf = this.#root;
    for (let depth = 0; depth < this.#depth; depth++) {
      const at = values[depth] as string;
      trail.push([node as IndexNode, at]);
      const child: IndexNode | Leaf | undefined = (node as IndexNode).get(at);
      if (child === undefined) return;
      node = child;
    }
    const leaf = node as Leaf;
    const [holder, at] = trail[trail.length - 1] as [IndexNode, string];
    if (typeof leaf !== 'string') {
      leaf.delete(key);
      if (leaf.size === 1) holder.set(at, leaf.values().next().value as string);
      if (leaf.size > 0) return;
    } else if (leaf !== key) {
      return;
    }
    holder.delete(at);
    for (let i = trail.length - 2; i >= 0; i--) {
      const [parent, value] = trail[i] as [IndexNode, string];
      if ((parent.get(value) as IndexNode).size > 0) break;
      parent.delete(value);
    }
  }

  /** The keys whose first index values equal `prefix` (all of them, or fewer: a prefix lookup), unsorted. */
  find(prefix: readonly string[]): string[] {
    if (prefix.length > this.#depth) return [];
    let node: IndexNode | Leaf | undefined = this.#root;
    for (const value of prefix) {
      node = (node as IndexNode).get(String(value));
      if (node === undefined) return [];
    }
    const found: string[] = [];
    collect(node, this.#depth - prefix.length, found);
    return found;
  }

  clear(): void {
    this.#root.clear();
  }
}

function collect(node: IndexNode | Leaf, depthLeft: number, out: string[]): void {
  if (depthLeft === 0) {
    const leaf = node as Leaf;
    if (typeof leaf === 'string') out.push(leaf);
    else for (const key of leaf) out.push(key);
    return;
  }
  for (const child of (node as IndexNode).values()) collect(child, depthLeft - 1, out);
}

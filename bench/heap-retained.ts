// Retained sizes in a heap snapshot's graph, by group (constructor name): what the heap would
// lose if every instance of the group went away, that is the size reachable from the root minus
// the size still reachable when the group's nodes are cut out. One graph walk per group, over the
// strong edges only (weak edges retain nothing), so it is kept to few groups.
export interface HeapGraph {
  readonly nodeCount: number;
  readonly sizes: Float64Array;
  /** Outgoing edges per node; node n's edges follow those of nodes 0 … n-1. */
  readonly edgeCounts: Uint32Array;
  readonly edgeTypes: Uint8Array;
  /** Target node index of each edge. */
  readonly edgeTo: Uint32Array;
  /** The edge type index of weak edges (-1: none). */
  readonly weakEdge: number;
}

/** Size reachable from node 0 without entering a node for which `cut` is 1. */
function reachableBytes(graph: HeapGraph, firstEdge: Uint32Array, cut: Uint8Array | undefined): number {
  const seen = new Uint8Array(graph.nodeCount);
  const stack = new Uint32Array(graph.nodeCount);
  let top = 0;
  stack[top++] = 0;
  seen[0] = 1;
  let bytes = 0;
  while (top > 0) {
    const node = stack[--top] as number;
    bytes += graph.sizes[node] as number;
    const end = (firstEdge[node] as number) + (graph.edgeCounts[node] as number);
    for (let e = firstEdge[node] as number; e < end; e++) {
      if (graph.edgeTypes[e] === graph.weakEdge) continue;
      const to = graph.edgeTo[e] as number;
      if (seen[to] === 1 || (cut !== undefined && cut[to] === 1)) continue;
      seen[to] = 1;
      stack[top++] = to;
    }
  }
  return bytes;
}

/** The retained size of each of `groups` (names as `groupOf` gives them). */
export function retainedByGroup(graph: HeapGraph, groupOf: (node: number) => string, groups: ReadonlySet<string>): Map<string, number> {
  const firstEdge = new Uint32Array(graph.nodeCount);
  for (let n = 1; n < graph.nodeCount; n++) firstEdge[n] = (firstEdge[n - 1] as number) + (graph.edgeCounts[n - 1] as number);
  const members = new Map<string, number[]>();
  for (let n = 0; n < graph.nodeCount; n++) {
    const group = groupOf(n);
    if (!groups.has(group)) continue;
    const list = members.get(group);
    if (list === undefined) members.set(group, [n]);
    else list.push(n);
  }
  const all = reachableBytes(graph, firstEdge, undefined);
  const out = new Map<string, number>();
  const cut = new Uint8Array(graph.nodeCount);
  for (const [group, nodes] of members) {
    for (const n of nodes) cut[n] = 1;
    out.set(group, all - reachableBytes(graph, firstEdge, cut));
    for (const n of nodes) cut[n] = 0;
  }
  return out;
}

// Summary of a V8 heap snapshot by constructor, like the DevTools "Summary" view: the objects and
// their self size per constructor name (plain objects by their constructor, strings, arrays, code
// and the like by their node type), largest first. The file is read as a stream and never parsed
// whole: a snapshot of a large worker is bigger than the longest string V8 allows, so this walks
// the `nodes` numbers into typed arrays, skips the edges, and decodes only the strings that name
// a constructor.
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { retainedByGroup, type HeapGraph } from './heap-retained.js';

export interface ConstructorSize {
  readonly constructor: string;
  readonly count: number;
  readonly selfBytes: number;
  /** What the heap would lose without every instance of it (computed for few-instance constructors only). */
  readonly retainedBytes: number | null;
}

export interface HeapSummary {
  readonly nodes: number;
  /** The sum of every node's self size: the live heap the snapshot saw. */
  readonly totalBytes: number;
  /** Largest self size first. */
  readonly byConstructor: readonly ConstructorSize[];
  /** Constructors with at most MAX_RETAINED_INSTANCES instances, largest retained size first. */
  readonly byRetained: readonly ConstructorSize[];
}

/** Retained sizes are computed for constructors with at most this many instances (caches, builders, engines). */
const MAX_RETAINED_INSTANCES = 64;

interface Meta {
  readonly node_fields: readonly string[];
  readonly node_types: readonly [readonly string[], ...unknown[]];
  readonly edge_fields: readonly string[];
  readonly edge_types: readonly [readonly string[], ...unknown[]];
}

/** Node types grouped under their own name (the rest under `(type)`). */
const NAMED_TYPES = new Set(['object', 'native']);

const NODES_KEY = '"nodes":[';
const STRINGS_KEY = '"strings":[';
const EDGES_KEY = '"edges":[';

/** A parsed snapshot: its graph and each node's group (constructor name, or `(type)`). */
export interface ParsedHeap {
  readonly graph: HeapGraph;
  groupOf(node: number): string;
}

/** Reads the snapshot at `path` and sums self sizes by constructor, with retained sizes of the few-instance ones; `top` rows are kept. */
export async function summarizeHeapSnapshot(path: string, top = 25): Promise<HeapSummary> {
  const { graph, groupOf } = await readHeapGraph(path);
  const groups = new Map<string, { count: number; selfBytes: number }>();
  let totalBytes = 0;
  for (let n = 0; n < graph.nodeCount; n++) {
    const name = groupOf(n);
    const size = graph.sizes[n] as number;
    totalBytes += size;
    const group = groups.get(name);
    if (group === undefined) groups.set(name, { count: 1, selfBytes: size });
    else {
      group.count++;
      group.selfBytes += size;
    }
  }
  const retained = retainedByGroup(graph, groupOf, new Set([...groups].filter(([name, g]) => g.count <= MAX_RETAINED_INSTANCES && !name.startsWith('(')).map(([name]) => name)));
  const byConstructor = [...groups]
    .map(([constructor, g]) => ({ constructor, count: g.count, selfBytes: g.selfBytes, retainedBytes: retained.get(constructor) ?? null }))
    .sort((a, b) => b.selfBytes - a.selfBytes)
    .slice(0, top);
  const byRetained = [...retained]
    .map(([constructor, retainedBytes]) => ({ constructor, count: groups.get(constructor)?.count ?? 0, selfBytes: groups.get(constructor)?.selfBytes ?? 0, retainedBytes }))
    .sort((a, b) => b.retainedBytes - a.retainedBytes)
    .slice(0, top);
  return { nodes: graph.nodeCount, totalBytes, byConstructor, byRetained };
}

/** Reads the snapshot at `path` into a graph of typed arrays, as a stream. */
export async function readHeapGraph(path: string): Promise<ParsedHeap> {
  const decoder = new StringDecoder('utf8');
  let phase: 'header' | 'nodes' | 'seek-edges' | 'edges' | 'skip' | 'strings' | 'done' = 'header';
  let pending = '';
  let fields = 0;
  let typeAt = 0;
  let nameAt = 0;
  let sizeAt = 0;
  let typeNames: readonly string[] = [];
  let types = new Uint8Array(0);
  let names = new Uint32Array(0);
  let sizes = new Float64Array(0);
  let edgeCounts = new Uint32Array(0);
  let edgeCountAt = 0;
  let edgeFields = 0;
  let edgeTypeAt = 0;
  let edgeToAt = 0;
  let edgeTypes = new Uint8Array(0);
  let edgeTo = new Uint32Array(0);
  let edgeTypeNames: readonly string[] = [];
  let edgePosition = 0;
  let value = 0;
  let inNumber = false;
  let position = 0;
  // Strings: which indices name a constructor, and the decoded ones.
  let wanted = new Set<number>();
  const decoded = new Map<number, string>();
  let stringIndex = 0;
  let inString = false;
  let escaped = false;
  let current: string[] | null = null;

  const startNodes = (header: string): void => {
    const parsed = JSON.parse(`${header.replace(/,\s*$/, '')}}`) as { snapshot: { meta: Meta; node_count: number; edge_count: number } };
    const meta = parsed.snapshot.meta;
    fields = meta.node_fields.length;
    typeAt = meta.node_fields.indexOf('type');
    nameAt = meta.node_fields.indexOf('name');
    sizeAt = meta.node_fields.indexOf('self_size');
    if (typeAt < 0 || nameAt < 0 || sizeAt < 0) throw new Error(`${path}: the snapshot's node_fields lack type, name or self_size`);
    typeNames = meta.node_types[0];
    edgeCountAt = meta.node_fields.indexOf('edge_count');
    edgeFields = meta.edge_fields.length;
    edgeTypeAt = meta.edge_fields.indexOf('type');
    edgeToAt = meta.edge_fields.indexOf('to_node');
    edgeTypeNames = meta.edge_types[0];
    const count = parsed.snapshot.node_count;
    types = new Uint8Array(count);
    names = new Uint32Array(count);
    sizes = new Float64Array(count);
    edgeCounts = new Uint32Array(count);
    edgeTypes = new Uint8Array(parsed.snapshot.edge_count);
    edgeTo = new Uint32Array(parsed.snapshot.edge_count);
  };

  const storeNumber = (): void => {
    const node = Math.floor(position / fields);
    const field = position % fields;
    if (field === typeAt) types[node] = value;
    else if (field === nameAt) names[node] = value;
    else if (field === sizeAt) sizes[node] = value;
    else if (field === edgeCountAt) edgeCounts[node] = value;
    position++;
    value = 0;
    inNumber = false;
  };

  /** Parses numbers from `text` into `store`; returns the offset past the closing `]`, or -1. */
  const readNumbers = (text: string, store: () => void): number => {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 48 && c <= 57) {
        value = value * 10 + (c - 48);
        inNumber = true;
      } else {
        if (inNumber) store();
        if (c === 93) return i + 1;
      }
    }
    return -1;
  };
  const readNodes = (text: string): number => readNumbers(text, storeNumber);

  const finishNodes = (): void => {
    wanted = new Set();
    const nodeCount = Math.floor(position / fields);
    for (let n = 0; n < nodeCount; n++) if (NAMED_TYPES.has(typeNames[types[n] as number] ?? '')) wanted.add(names[n] as number);
  };

  const storeEdgeNumber = (): void => {
    const edge = Math.floor(edgePosition / edgeFields);
    const field = edgePosition % edgeFields;
    if (field === edgeTypeAt) edgeTypes[edge] = value;
    else if (field === edgeToAt) edgeTo[edge] = value / fields;
    edgePosition++;
    value = 0;
    inNumber = false;
  };

  const readEdges = (text: string): number => readNumbers(text, storeEdgeNumber);

  /** Walks the strings array; returns true at its closing `]`. */
  const readStrings = (text: string): boolean => {
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (!inString) {
        if (c === 34) {
          inString = true;
          start = i;
          current = wanted.has(stringIndex) ? [] : null;
        } else if (c === 93) {
          return true;
        }
        continue;
      }
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) {
        if (current !== null) {
          current.push(text.slice(start, i + 1));
          decoded.set(stringIndex, JSON.parse(current.join('')) as string);
        }
        inString = false;
        current = null;
        stringIndex++;
      }
    }
    if (inString && current !== null) current.push(text.slice(start));
    return false;
  };

  const feed = (chunk: string): void => {
    let text = pending + chunk;
    pending = '';
    while (text.length > 0) {
      if (phase === 'header') {
        const at = text.indexOf(NODES_KEY);
        if (at < 0) {
          pending = text;
          return;
        }
        startNodes(text.slice(0, at));
        phase = 'nodes';
        text = text.slice(at + NODES_KEY.length);
      } else if (phase === 'nodes') {
        const end = readNodes(text);
        if (end < 0) return;
        finishNodes();
        phase = 'seek-edges';
        text = text.slice(end);
      } else if (phase === 'seek-edges') {
        const at = text.indexOf(EDGES_KEY);
        if (at < 0) {
          pending = text.slice(-EDGES_KEY.length);
          return;
        }
        phase = 'edges';
        text = text.slice(at + EDGES_KEY.length);
      } else if (phase === 'edges') {
        const end = readEdges(text);
        if (end < 0) return;
        phase = 'skip';
        text = text.slice(end);
      } else if (phase === 'skip') {
        const at = text.indexOf(STRINGS_KEY);
        if (at < 0) {
          // Keep a tail: the key may straddle two chunks.
          pending = text.slice(-STRINGS_KEY.length);
          return;
        }
        phase = 'strings';
        text = text.slice(at + STRINGS_KEY.length);
      } else if (phase === 'strings') {
        if (readStrings(text)) phase = 'done';
        return;
      } else {
        return;
      }
    }
  };

  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) feed(decoder.write(chunk as Buffer));
  feed(decoder.end());
  if ((phase as string) !== 'done') throw new Error(`${path}: the heap snapshot ended early (in its ${phase} section)`);

  const nodeCount = Math.floor(position / fields);
  const graph: HeapGraph = { nodeCount, sizes, edgeCounts, edgeTypes, edgeTo, weakEdge: edgeTypeNames.indexOf('weak') };
  const groupOf = (n: number): string => {
    const type = typeNames[types[n] as number] ?? 'unknown';
    return NAMED_TYPES.has(type) ? (decoded.get(names[n] as number) ?? '(unnamed)') : `(${type})`;
  };
  return { graph, groupOf };
}

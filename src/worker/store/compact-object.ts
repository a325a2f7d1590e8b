// The compact form in which a worker replica holds an object: its JSON text until a render reads
// it, then the object V8's JSON parser builds from that text. An object arrives from the main
// thread through structured clone, whose deserialised objects reserve room for properties they
// never get and whose strings are all fresh copies: about 1.2 KiB per synthetic Ingress, Service
// or EndpointSlice. Parsed from JSON, each object is sized to its own properties and the parser
// shares its short strings (namespaces, ports, label keys and values, path types) across
// objects: about half the size, with the same fields and values; the text is smaller still, and
// smaller again with its property names as one-character codes of its store (dormant-keys.ts).
// Only plain JSON data is rebuilt (what the Kubernetes API and manifests give); anything else
// (a Date, a Map, a non-finite number, an undefined field, a shared or cyclic reference, a tree
// deeper than MAX_DEPTH) is kept exactly as it arrived.
// The watcher already drops what no template reads (`metadata.managedFields`, kubectl's
// last-applied copy); the replica drops them as well, for objects an embedder put in the stores
// directly. Nothing else is dropped: template sets are the embedder's and may read any field.
import type { KubeObject } from '../protocol.js';
import type { DormantKeys } from './dormant-keys.js';
import type { StoreKind } from './store-admission.js';

/** Deeper trees are kept as they arrived (the JSON round trip would recurse that deep). */
const MAX_DEPTH = 64;

/** Annotations no template reads; the object guard ignores them too (metadata-check.ts). */
const UNREAD_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The JSON text of the object's compact form, or undefined when the object is not plain JSON
 * data (it is then held as it is). Parsing the text gives the compact object.
 */
export function compactText(object: KubeObject): string | undefined {
  // Admission refuses what is not an object with metadata, and says why: leave that to it.
  const meta = (object as { metadata?: unknown } | null)?.metadata;
  if (typeof object !== 'object' || object === null || typeof meta !== 'object' || meta === null) return undefined;
  if (!isPlainJson(object, 0, new Set())) return undefined;
  return flat(JSON.stringify(withoutUnreadMetadata(object)));
}

/**
 * `text` as one flat string. V8 builds long strings (JSON.stringify's output, `${a}/${b}`) as
 * trees of pieces, about twice the size of the text; reading a character flattens the tree into
 * one string, and the garbage collector then drops the pieces.
 */
export function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}

/** The object without managedFields and the last-applied annotation (a shallow copy when it had them). */
function withoutUnreadMetadata(object: KubeObject): KubeObject {
  const meta = object.metadata as Record<string, unknown>;
  const annotations = meta.annotations as Record<string, unknown> | null | undefined;
  const lastApplied = annotations !== null && typeof annotations === 'object' && Object.prototype.hasOwnProperty.call(annotations, UNREAD_ANNOTATION);
  if (!('managedFields' in meta) && !lastApplied) return object;
  const metadata: Record<string, unknown> = { ...meta };
  delete metadata.managedFields;
  if (lastApplied) {
    const kept = { ...annotations };
    delete kept[UNREAD_ANNOTATION];
    metadata.annotations = kept;
  }
  return { ...object, metadata } as KubeObject;
}

/** Strings, finite numbers, booleans, null, arrays and prototype-plain objects, as a tree. */
function isPlainJson(value: unknown, depth: number, seen: Set<object>): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= MAX_DEPTH || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value) || !isPlainJson(value[i], depth + 1, seen)) return false;
    }
    return true;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) {
    if (!isPlainJson((value as Record<string, unknown>)[key], depth + 1, seen)) return false;
  }
  return true;
}

/** Marks a text held without the kind and apiVersion its store stamps on every object. */
const STAMPED = '\u0001';

/**
 * The text a dormant store holds for `object`: its compact text, without the leading
 * `{"apiVersion":…,"kind":…,` when those are the store's own (`definition`), as every object of
 * a store with a definition has them, and with its property names as the store's codes
 * (`keys`, dormant-keys.ts). `fromDormantText` gives the object back, fields in order.
 */
export function toDormantText(object: KubeObject, definition: StoreKind | undefined, keys: DormantKeys): string | undefined {
  const text = compactText(object);
  if (text === undefined) return text;
  if (definition === undefined) return flat(keys.encode(text));
  const prefix = stampPrefix(definition);
  return text.startsWith(prefix) && text.length > prefix.length + 1 ? flat(STAMPED + keys.encode(text.slice(prefix.length))) : flat(keys.encode(text));
}

/**
 * The object a dormant store's text stands for (see toDormantText). A stamped object's kind and
 * apiVersion are the store's own strings, equal to the ones parsed: the parser would give each
 * object its own copy of a string longer than a few characters (`networking.k8s.io/v1`).
 */
export function fromDormantText(text: string, definition: StoreKind | undefined, keys: DormantKeys): KubeObject {
  if (!text.startsWith(STAMPED) || definition === undefined) return JSON.parse(keys.decode(text)) as KubeObject;
  const object = JSON.parse(stampPrefix(definition) + keys.decode(text.slice(STAMPED.length))) as { apiVersion: string; kind: string };
  object.apiVersion = definition.apiVersion;
  object.kind = definition.kind;
  return object as unknown as KubeObject;
}

function stampPrefix(definition: StoreKind): string {
  return `{"apiVersion":${JSON.stringify(definition.apiVersion)},"kind":${JSON.stringify(definition.kind)},`;
}

// Reads the annotations of one Ingress or Service into canonical names: of one name set under
// several prefixes (or as a name and its alias), `haproxy.org/` wins over `haproxy.com/` over
// `ingress.kubernetes.io/` and the name over its alias. Unknown names, refused names (config
// snippets) and names that do not apply to the object's kind become warnings, in key order.
// Cached per object, so every build of the same object gives the same values and warnings.
import type { KubeObject } from '../../protocol.js';
import { ANNOTATION_PREFIXES, lookupAnnotation, type AnnotationSpec, type AnnotationTarget } from './registry.js';

export interface AnnotationRead {
  /** Canonical name -> the value of the key that wins. */
  readonly values: ReadonlyMap<string, string>;
  /** The winning key of each canonical name, for messages. */
  readonly keys: ReadonlyMap<string, string>;
  /** Warnings, without the object's name. */
  readonly warnings: readonly string[];
}

const EMPTY: AnnotationRead = Object.freeze({ values: new Map(), keys: new Map(), warnings: Object.freeze([]) });
const cache: Record<AnnotationTarget, WeakMap<object, AnnotationRead>> = { Ingress: new WeakMap(), Service: new WeakMap() };

/** The annotations of `object` read as a `kind`. */
export function readAnnotations(object: KubeObject, kind: AnnotationTarget): AnnotationRead {
  const annotations = object.metadata?.annotations;
  if (annotations === undefined || annotations === null || typeof annotations !== 'object') return EMPTY;
  let read = cache[kind].get(annotations);
  if (read === undefined) {
    read = computeRead(annotations as Readonly<Record<string, unknown>>, kind);
    cache[kind].set(annotations, read);
  }
  return read;
}

function computeRead(annotations: Readonly<Record<string, unknown>>, kind: AnnotationTarget): AnnotationRead {
  const candidates = new Map<string, { key: string; value: string; rank: number }[]>();
  const warnings: string[] = [];
  for (const key of Object.keys(annotations).sort()) {
    const value = annotations[key];
    const found = lookupAnnotation(key);
    if (found === undefined || typeof value !== 'string') continue;
    if (found.kind === 'unknown') {
      warnings.push(`annotation ${key} is not a supported annotation; ignored`);
    } else if (found.kind === 'refused') {
      warnings.push(`annotation ${key} is refused: ${found.reason}; the ${kind} is served without it`);
    } else if (!found.spec.appliesTo.includes(kind)) {
      warnings.push(`annotation ${key} applies to ${found.spec.appliesTo.join(' and ')} objects only; ignored on a ${kind}`);
    } else {
      const list = candidates.get(found.spec.name) ?? [];
      list.push({ key, value, rank: rank(found.spec, found.prefix, found.name) });
      candidates.set(found.spec.name, list);
    }
  }
  const values = new Map<string, string>();
  const keys = new Map<string, string>();
  for (const [name, list] of [...candidates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    list.sort((a, b) => a.rank - b.rank);
    const winner = list[0] as { key: string; value: string };
    values.set(name, winner.value);
    keys.set(name, winner.key);
    for (const other of list.slice(1)) {
      if (other.value !== winner.value) warnings.push(`annotation ${other.key} is ignored: ${winner.key} sets ${name} too, and wins`);
    }
  }
  // Most objects carry no annotation the controller reads: they share one empty read (two Maps and an array each would cost about 0.4 KiB per object).
  if (values.size === 0 && warnings.length === 0) return EMPTY;
  return Object.freeze({ values, keys, warnings: Object.freeze(warnings) });
}

/** Lower ranks win: prefix order first, then the name before its aliases. */
function rank(spec: AnnotationSpec, prefix: string, name: string): number {
  return ANNOTATION_PREFIXES.indexOf(prefix) * 2 + (name === spec.name ? 0 : 1);
}

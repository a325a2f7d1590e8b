// The render gate's exclusions as the guarded reader applies them: an object HAProxy refused is
// left out of renders while it stays at the version refused (an object rejection whose reason is
// HAProxy's message), and a trial render leaves out whole namespaces. `objectVersion` is the one
// definition of "the object changed" on both sides of the thread boundary.
import { createHash } from 'node:crypto';
import type { Exclusion, KubeObject, RenderExclusions } from '../protocol.js';

const versions = new WeakMap<object, string>();

/**
 * The object's `metadata.resourceVersion`, or (for objects that have none, such as manifests
 * read from files) a digest of its content. Cached per object: stored objects are never mutated.
 */
export function objectVersion(object: KubeObject): string {
  const rv = object.metadata.resourceVersion;
  if (typeof rv === 'string' && rv !== '') return rv;
  let version = versions.get(object);
  if (version === undefined) {
    version = `sha256:${createHash('sha256').update(JSON.stringify(object)).digest('hex').slice(0, 32)}`;
    versions.set(object, version);
  }
  return version;
}

/** The key an exclusion is filed under: `Kind namespace/name`. */
export function exclusionKey(kind: string, namespace: string, name: string): string {
  return `${kind} ${namespace}/${name}`;
}

/** A render's exclusions, indexed for the reader's per-object test. */
export class ExclusionFilter {
  readonly #objects = new Map<string, Exclusion>();
  readonly #namespaces: ReadonlySet<string>;
  /** What the filter leaves out, as one string: equal filters have equal keys. */
  readonly key: string;

  constructor(exclusions: RenderExclusions | undefined) {
    for (const exclusion of exclusions?.objects ?? []) this.#objects.set(exclusionKey(exclusion.kind, exclusion.namespace, exclusion.name), exclusion);
    this.#namespaces = new Set(exclusions?.namespaces ?? []);
    const objects = [...this.#objects.entries()].map(([key, exclusion]) => `${key}@${exclusion.version}`).sort();
    this.key = JSON.stringify([objects, [...this.#namespaces].sort()]);
  }

  get empty(): boolean {
    return this.#objects.size === 0 && this.#namespaces.size === 0;
  }

  /**
   * Whether the object (of a store of `kind`) is left out: `'namespace'` for a trial render, its
   * exclusion when it is still at the version refused, or undefined.
   */
  test(kind: string, object: KubeObject): Exclusion | 'namespace' | undefined {
    const namespace = typeof object.metadata.namespace === 'string' ? object.metadata.namespace : '';
    if (this.#namespaces.has(namespace)) return 'namespace';
    if (this.#objects.size === 0) return undefined;
    const exclusion = this.#objects.get(exclusionKey(kind, namespace, object.metadata.name));
    return exclusion !== undefined && exclusion.version === objectVersion(object) ? exclusion : undefined;
  }
}

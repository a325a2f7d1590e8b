// The `{{httpResource "name"}}` helper's body: a template set's HTTP resource, read from the
// internal store the main thread's HttpResourceFetcher keeps (it reaches worker replicas as an
// ordinary store delta). New content is pending until a render that uses it validates, so a
// render reads the pending content when there is one, else the accepted one, else ''.
import type { KubeObject } from '../protocol.js';
import type { ModelSource } from '../routing/model-source.js';

/**
 * The internal store of HTTP resources, indexed by `metadata.name`. The `haptic:` prefix keeps
 * it apart from the template set's own stores (named after watched resources).
 */
export const HTTP_RESOURCE_STORE = 'haptic:http-resources';

/** One version of a resource's content; `checksum` is the SHA-256 (hex) of its UTF-8 bytes. */
export interface HttpResourceContent {
  readonly content: string;
  readonly checksum: string;
}

/** The store object of one declared resource. Stored objects are replaced, never mutated. */
export interface HttpResourceObject extends KubeObject {
  readonly apiVersion: 'haptic-reconciler/v1';
  readonly kind: 'HttpResource';
  /** Content a render has validated. */
  readonly accepted?: HttpResourceContent;
  /** Newer content awaiting the verdict of the first render that uses it. */
  readonly pending?: HttpResourceContent;
}

/**
 * The content a render uses: pending, else accepted, else '' (not fetched yet, or not declared).
 * Reads the raw store: the object guard's checks are for cluster objects, and a resource name
 * (letters, digits, `-_.`) need not be a DNS name.
 */
export function httpResourceContent(reader: Pick<ModelSource, 'store'>, name: string): string {
  const object = reader.store(HTTP_RESOURCE_STORE)?.get(name) as HttpResourceObject | undefined;
  return object?.pending?.content ?? object?.accepted?.content ?? '';
}

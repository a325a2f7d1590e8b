// Which Ingresses a render serves: those of one of our classes (see ingress-class.ts) that the
// object guard did not reject as a whole. The leader publishes load-balancer addresses in the
// status of exactly these. Guarded reads are cached per render, so this costs one pass over the
// Ingress keys.
import { objectKey } from '../store/indexed-store.js';
import { acceptsClass, classPolicy } from './ingress-class.js';
import type { ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';

/** `namespace/name` of every served Ingress, sorted; undefined when there is no Ingress store. */
export function servedIngresses(source: ModelSource, options: ModelOptions): readonly string[] | undefined {
  if (source.store(options.stores.ingresses) === undefined) return undefined;
  const policy = classPolicy(source, options);
  const keys: string[] = [];
  // list() is sorted by namespace/name.
  for (const ingress of source.list(options.stores.ingresses)) if (acceptsClass(ingress, policy)) keys.push(objectKey(ingress));
  return keys;
}

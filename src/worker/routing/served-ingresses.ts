// Which Ingresses a render serves: those of one of our classes (see ingress-class.ts) that the
// object guard did not reject as a whole. The leader publishes load-balancer addresses in the
// status of exactly these. The list is kept per Ingress store and computed again only when the
// store, the class policy, the guard context or the annotation checks changed, so an unchanged
// cluster costs a lookup per render (and the same frozen list).
import { annotationChecksGeneration } from '../store/annotation-checks.js';
import { activeGuardContext, type GuardContext } from '../store/guard-context.js';
import { objectKey, type IndexedStore } from '../store/indexed-store.js';
import { acceptsClass, classPolicy } from './ingress-class.js';
import type { ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';

interface Cached {
  readonly generation: number;
  readonly policy: string;
  readonly context: GuardContext;
  readonly checks: number;
  readonly keys: readonly string[];
}

const cache = new WeakMap<IndexedStore, Cached>();

/** `namespace/name` of every served Ingress, sorted; undefined when there is no Ingress store. */
export function servedIngresses(source: ModelSource, options: ModelOptions): readonly string[] | undefined {
  const store = source.store(options.stores.ingresses);
  if (store === undefined) return undefined;
  const policy = classPolicy(source, options);
  const context = activeGuardContext();
  const checks = annotationChecksGeneration();
  const known = cache.get(store);
  if (known !== undefined && known.generation === store.generation && known.policy === policy.key && known.context === context && known.checks === checks) return known.keys;
  const keys: string[] = [];
  // list() is sorted by namespace/name.
  for (const ingress of source.list(options.stores.ingresses)) if (acceptsClass(ingress, policy)) keys.push(objectKey(ingress));
  const frozen = Object.freeze(keys);
  cache.set(store, { generation: store.generation, policy: policy.key, context, checks, keys: frozen });
  return frozen;
}

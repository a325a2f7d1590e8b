// Which Ingresses a render serves: those of one of our classes (see ingress-class.ts) that the
// object guard did not reject as a whole. The leader publishes load-balancer addresses in the
// status of exactly these. The list is kept per Ingress store and computed again only when the
// store, the class policy, the guard context, the annotation checks or the render gate's
// exclusions changed, so an unchanged cluster costs a lookup per render (and the same frozen
// list); after a store change the Ingresses of the last list keep their decision (found by
// identity), and only the changed ones are decided.
import { annotationChecksGeneration } from '../store/annotation-checks.js';
import { flat } from '../store/compact-object.js';
import { activeGuardContext, type GuardContext } from '../store/guard-context.js';
import { compareKeys, objectKey, type IndexedStore } from '../store/indexed-store.js';
import type { KubeObject } from '../protocol.js';
import { ListReuse } from './list-reuse.js';
import { acceptsClass, classPolicy } from './ingress-class.js';
import type { ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';

interface Cached {
  readonly generation: number;
  readonly policy: string;
  readonly context: GuardContext;
  readonly checks: number;
  /** The render gate's exclusions the list was read under (render-exclusions.ts). */
  readonly exclusions: string;
  readonly keys: readonly string[];
  /** Each Ingress of the list the keys came from, with its key if served (list-reuse.ts). */
  readonly decided: ListReuse<KubeObject, string | null>;
}

const cache = new WeakMap<IndexedStore, Cached>();

/** Replaced objects looked at one by one at most; past this the whole list is decided again. */
const QUICK_LIMIT = 64;

/** An Ingress's key if it is served, else null: one flat string, kept with the list (a template literal's tree of pieces is twice its size). */
function decisionOf(ingress: KubeObject, policy: ReturnType<typeof classPolicy>): string | null {
  return acceptsClass(ingress, policy) ? flat(objectKey(ingress)) : null;
}

/** `namespace/name` of every served Ingress, sorted; undefined when there is no Ingress store. */
export function servedIngresses(source: ModelSource, options: ModelOptions): readonly string[] | undefined {
  const store = source.store(options.stores.ingresses);
  if (store === undefined) return undefined;
  const policy = classPolicy(source, options);
  const context = activeGuardContext();
  const checks = annotationChecksGeneration();
  const exclusions = source.exclusionKey ?? '';
  const known = cache.get(store);
  const same = known !== undefined && known.policy === policy.key && known.context === context && known.checks === checks && known.exclusions === exclusions;
  if (same && known.generation === store.generation) return known.keys;
  // The Ingresses of the last list keep their decision: only the changed ones are looked at.
  const decided = same ? known.decided : new ListReuse<KubeObject, string | null>((a, b) => compareKeys(objectKey(a), objectKey(b)));
  const list = source.list(options.stores.ingresses);
  if (same) {
    // The last list with a few objects replaced by objects of the same key, each decided as its
    // predecessor: the same keys, without a walk over every Ingress.
    const at = decided.replaced(list, QUICK_LIMIT);
    const was = decided.remembered;
    if (at !== undefined && at.every((i) => decisionOf(list[i] as KubeObject, policy) === was[i])) {
      decided.remember(list, was);
      cache.set(store, { ...known, generation: store.generation });
      return known.keys;
    }
  }
  const before = decided.take(list);
  const decisions = new Array<string | null>(list.length);
  const keys: string[] = [];
  // list() is sorted by namespace/name.
  for (let i = 0; i < list.length; i++) {
    let key = before[i];
    if (key === undefined) {
      key = decisionOf(list[i] as KubeObject, policy);
    }
    decisions[i] = key;
    if (key !== null) keys.push(key);
  }
  decided.remember(list, decisions);
  const frozen = Object.freeze(keys);
  cache.set(store, { generation: store.generation, policy: policy.key, context, checks, exclusions, keys: frozen, decided });
  return frozen;
}

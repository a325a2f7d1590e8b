// Checks values from cluster objects before they reach a template (Handlebars runs `noEscape`, so
// a newline in a host would inject directives). Checks are chosen by the kind of the store the
// object entered, never by its `kind` field; an object no store admitted is never accepted. A
// verdict is the accepted view (the object itself, or a frozen copy without its bad parts) plus
// structured rejections, or the object's rejection; cached per object identity and guard policy.
import type { KubeObject, Rejection, RejectionCode, RejectionScope } from '../protocol.js';
import { annotationChecksGeneration } from './annotation-checks.js';
import { checkEndpointSlice } from './endpoint-slice-check.js';
import { checkGateway, checkGatewayClass, checkNamespace, checkReferenceGrant } from './gateway-check.js';
import { checkHttpRoute } from './httproute-check.js';
import type { KindOutcome, Problem } from './field-rules.js';
import { activeGuardContext, type GuardContext, type GuardPolicy } from './guard-context.js';
import { checkIngress } from './ingress-check.js';
import { escapeLogText, printable, quote } from './log-text.js';
import { checkMetadata } from './metadata-check.js';
import { checkSecret } from './secret-check.js';
import { checkService } from './service-check.js';
import { storeOf } from './store-admission.js';
import type { TlsMaterial } from './tls-material.js';

export { registerAnnotationCheck, type AnnotationCheck } from './annotation-checks.js';
export { VALUE_LIMITS, type ValueLimit } from './value-limits.js';
export { escapeLogText } from './log-text.js';
export { exclusionKey, objectVersion } from './render-exclusions.js';

export type GuardVerdict =
  | { readonly ok: true; readonly kind: string; readonly object: KubeObject; readonly rejections: readonly Rejection[] }
  /** `reason` is the whole message: `Kind namespace/name: why`. */
  | { readonly ok: false; readonly kind: string; readonly reason: string; readonly rejections: readonly Rejection[] };

const NO_REJECTIONS: readonly Rejection[] = Object.freeze([]);

/**
 * Verdicts by policy, then by the kind checked as ('' for the generic checks alone), then by
 * object (raw objects and their views alike): the verdict itself is the value, with no record
 * around it, one per stored object.
 */
let verdicts = new WeakMap<GuardPolicy, Map<string, WeakMap<object, GuardVerdict>>>();
let verdictsGeneration = annotationChecksGeneration();
/** The checked certificate and key of each accepted TLS Secret view. */
const tlsMaterials = new WeakMap<object, TlsMaterial>();

/**
 * The verdict on an object of a store, checked as the kind of the store it entered (see
 * store-admission.ts) under the context's policy; a store without a kind gets the generic checks
 * alone. An object no store admitted is never accepted. Cached per object identity: stored
 * objects are never mutated.
 */
export function guardObject(object: KubeObject, context: GuardContext = activeGuardContext()): GuardVerdict {
  const store = storeOf(object);
  if (store === undefined) {
    // Not a stored object: one of the views handed out, or something that never entered a store.
    for (const cache of cachesFor(context.policy).values()) {
      const cached = cache.get(object);
      if (cached !== undefined) return cached;
    }
    const kind = labelOf(undefined, object);
    const only = rejection(kind, object, { scope: 'object', reason: 'was not admitted by a store, so it was never checked' });
    return { ok: false, kind, reason: rejectionMessage(only), rejections: [only] };
  }
  return checkObjectAs(object, store.definition?.kind, context);
}

/**
 * The verdict on an object checked as `kind` (undefined: the generic checks alone), whatever
 * store (if any) holds it. Cached likewise.
 */
export function checkObjectAs(object: KubeObject, kind: string | undefined, context: GuardContext = activeGuardContext()): GuardVerdict {
  const caches = cachesFor(context.policy);
  const checkedAs = kind ?? '';
  let cache = caches.get(checkedAs);
  if (cache === undefined) {
    cache = new WeakMap();
    caches.set(checkedAs, cache);
  }
  const cached = cache.get(object);
  if (cached !== undefined) return cached;
  const verdict = computeVerdict(object, kind, context.policy);
  cache.set(object, verdict);
  if (verdict.ok && verdict.object !== object) cache.set(verdict.object, verdict);
  return verdict;
}

/** The accepted view of an object, or undefined when it is rejected. Views map to themselves. */
export function acceptedView(object: KubeObject, context?: GuardContext): KubeObject | undefined {
  const verdict = guardObject(object, context);
  return verdict.ok ? verdict.object : undefined;
}

/** The checked certificate and key of an accepted TLS Secret (or its view). */
export function tlsMaterialOf(secret: KubeObject, context?: GuardContext): TlsMaterial | undefined {
  const view = acceptedView(secret, context);
  return view === undefined ? undefined : tlsMaterials.get(view);
}

/**
 * `Kind namespace/name`, printable (escaped) in every case. The kind is the kind of the object's
 * store; only for a store without one is it the object's own, as a label.
 */
export function describe(object: KubeObject): string {
  const store = storeOf(object);
  // The model describes each object several times (owners, warnings): a stored object's text is
  // kept, for as long as the object lives in the same store (stored objects are never mutated).
  const known = store === undefined ? undefined : descriptions.get(object);
  if (known !== undefined && known.store === store) return known.text;
  const text = describeAs(labelOf(store?.definition?.kind, object), object);
  if (store !== undefined) descriptions.set(object, { store, text });
  return text;
}

const descriptions = new WeakMap<object, { readonly store: object; readonly text: string }>();

/** The message of a rejection, as it appears in warnings: `Kind namespace/name: reason`. */
export function rejectionMessage(r: Rejection): string {
  return `${r.kind} ${r.namespace === '' ? r.name : `${r.namespace}/${r.name}`}: ${r.reason}`;
}

function describeAs(kind: string, object: KubeObject): string {
  const meta = object.metadata as Record<string, unknown> | undefined;
  const name = meta?.name === undefined ? '(unnamed)' : printable(meta.name);
  return `${printable(kind)} ${typeof meta?.namespace === 'string' && meta.namespace !== '' ? `${printable(meta.namespace)}/${name}` : name}`;
}

function labelOf(kind: string | undefined, object: KubeObject): string {
  return kind ?? (typeof object.kind === 'string' && object.kind !== '' ? object.kind : 'object');
}

function cachesFor(policy: GuardPolicy): Map<string, WeakMap<object, GuardVerdict>> {
  if (verdictsGeneration !== annotationChecksGeneration()) {
    verdicts = new WeakMap();
    verdictsGeneration = annotationChecksGeneration();
  }
  let cache = verdicts.get(policy);
  if (cache === undefined) {
    cache = new Map();
    verdicts.set(policy, cache);
  }
  return cache;
}

type KindCheck = (object: KubeObject, policy: GuardPolicy) => KindOutcome & { readonly material?: TlsMaterial };

/** The kinds the guard checks field by field; all but CLUSTER_KINDS are namespaced. */
const KIND_CHECKS: Readonly<Record<string, KindCheck>> = {
  Ingress: checkIngress,
  Service: checkService,
  EndpointSlice: checkEndpointSlice,
  Secret: checkSecret,
  GatewayClass: checkGatewayClass,
  Gateway: checkGateway,
  HTTPRoute: checkHttpRoute,
  ReferenceGrant: checkReferenceGrant,
  Namespace: checkNamespace,
};
const CLUSTER_KINDS = new Set(['GatewayClass', 'Namespace']);

function computeVerdict(object: KubeObject, checkAs: string | undefined, policy: GuardPolicy): GuardVerdict {
  const kind = labelOf(checkAs, object);
  if (checkAs !== undefined && object.kind !== undefined && object.kind !== checkAs) {
    return refusal(kind, object, { scope: 'object', reason: `kind ${quote(object.kind)} is not the kind of its store (${kind})` });
  }
  let meta;
  let outcome;
  try {
    const check = checkAs !== undefined && Object.hasOwn(KIND_CHECKS, checkAs) ? KIND_CHECKS[checkAs] : undefined;
    meta = checkMetadata(object, checkAs ?? '', check !== undefined && !CLUSTER_KINDS.has(checkAs as string));
    if ('rejected' in meta) return refusal(kind, object, meta.rejected);
    outcome = check?.(object, policy) ?? { dropped: [] };
  } catch (error) {
    // The checks handle every shape; a throw is a bug, and it still costs only this object.
    return refusal(kind, object, { scope: 'object', reason: `could not be checked (${error instanceof Error ? error.message : String(error)})` });
  }
  const dropped: Rejection[] = [];
  for (const problem of meta.dropped) dropped.push(rejection(kind, object, problem));
  if ('rejected' in outcome) return refusal(kind, object, outcome.rejected, dropped);
  for (const problem of outcome.dropped) dropped.push(rejection(kind, object, problem));
  let view = object;
  if (outcome.patch !== undefined || meta.metadata !== object.metadata) {
    const copy: Record<string, unknown> = { ...object, metadata: meta.metadata };
    if (checkAs !== undefined) copy.kind = checkAs;
    for (const [field, value] of Object.entries(outcome.patch ?? {})) {
      if (value === undefined) delete copy[field];
      else copy[field] = value;
    }
    view = Object.freeze(copy) as KubeObject;
  }
  if (outcome.material !== undefined) tlsMaterials.set(view, outcome.material);
  return { ok: true, kind, object: view, rejections: dropped.length === 0 ? NO_REJECTIONS : Object.freeze(dropped) };
}

/** The verdict refusing the object for `problem`, after the rejections `before` (parts left out first). */
function refusal(kind: string, object: KubeObject, problem: Problem, before: readonly Rejection[] = []): GuardVerdict {
  const final = rejection(kind, object, problem);
  const all = [...before, problem.scope === 'object' ? final : Object.freeze({ ...final, wholeObject: true as const })];
  return { ok: false, kind, reason: rejectionMessage(all[all.length - 1] as Rejection), rejections: Object.freeze(all) };
}

function rejection(kind: string, object: KubeObject, problem: { readonly scope: RejectionScope; readonly reason: string }): Rejection {
  const meta = object.metadata as Record<string, unknown> | undefined;
  return Object.freeze({
    kind: printable(kind),
    namespace: typeof meta?.namespace === 'string' ? printable(meta.namespace) : '',
    name: meta?.name === undefined ? '(unnamed)' : printable(meta.name),
    scope: problem.scope,
    reason: escapeLogText(problem.reason),
  });
}

/**
 * The stable reason of a rejection, as its Kubernetes Event and an admission denial name it: the
 * routing model's findings carry their `code`; the object checks' rejections take it from what
 * they cost (their scope), and a TLS Secret the checks refuse is a broken TLS entry for every
 * Ingress that names it.
 */
export function reasonCodeOf(rejection: Pick<Rejection, 'kind' | 'scope' | 'code'>): RejectionCode {
  if (rejection.code !== undefined) return rejection.code;
  switch (rejection.scope) {
    case 'annotation':
      return 'InvalidAnnotation';
    case 'tls':
      return 'InvalidTLS';
    case 'endpoint':
      return 'EndpointRefused';
    case 'object':
    case 'path':
      return rejection.kind === 'Secret' ? 'InvalidTLS' : 'Rejected';
    default: {
      const never: never = rejection.scope;
      return never;
    }
  }
}

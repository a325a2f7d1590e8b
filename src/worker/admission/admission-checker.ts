// The admission checks of the validating webhook: an Ingress, TLS Secret, HTTPRoute or Gateway is
// admitted and checked as its store would (store-admission.ts, object-guard.ts), then an Ingress
// is computed as the routing model would (ingress-entry.ts, against a replica of the stores kept
// current with the deltas render workers get) and its routes are put to the owners of their hosts
// (see ownership-index.ts); an HTTPRoute or Gateway is judged in an overlay of the replica (see
// gateway-review.ts). Pure and synchronous: the admission worker runs it off the main thread.
// It never runs `haproxy -c`: nothing tenant-written reaches HAProxy here.
import type { KubeObject, ReplicaSync, ReplicaSyncAck, TemplateSetSource } from '../protocol.js';
import type { AdmissionCheckRequest, AdmissionVerdict } from '../admission-protocol.js';
import { gatewayOptions, type GatewayOptions } from '../routing/gateway-model.js';
import { computeEntry } from '../routing/ingress-entry.js';
import { acceptsClass, classPolicy } from '../routing/ingress-class.js';
import { modelOptions, type ModelOptions } from '../routing/model.js';
import { contextOf, MODEL_STORE_KINDS, withGuardContext, type GuardContext } from '../store/guard-context.js';
import { GuardedReader } from '../store/guarded-reader.js';
import { objectKey } from '../store/indexed-store.js';
import { checkObjectAs } from '../store/object-guard.js';
import { admitObject, StoreRefusal, type StoreIdentity } from '../store/store-admission.js';
import { StoreReplica } from '../store/store-replica.js';
import { gatewayIsOurs, reviewGateway, reviewHttpRoute, routeIsOurs } from './gateway-review.js';
import { OverlaySource } from './overlay-source.js';
import { OwnershipIndex } from './ownership-index.js';
import { allow, ALLOWED, deny, denyRejections } from './verdicts.js';

export { MAX_MESSAGE_CHARS, MAX_WARNINGS, MAX_WARNING_CHARS } from './verdicts.js';

const SECRET_TLS = 'kubernetes.io/tls';

export class AdmissionChecker {
  readonly #options: ModelOptions;
  readonly #gateway: GatewayOptions;
  readonly #context: GuardContext;
  readonly #replica = new StoreReplica();
  readonly #ownership: OwnershipIndex;
  readonly #identities = new Map<string, StoreIdentity>();

  constructor(set: TemplateSetSource) {
    this.#options = modelOptions(set.values);
    this.#gateway = gatewayOptions(set.values);
    this.#context = contextOf(set);
    this.#ownership = new OwnershipIndex(this.#options);
  }

  /** The replica's version. */
  get version(): number {
    return this.#replica.version;
  }

  /**
   * Applies a delta or snapshot, and brings the ownership index along right away: after a full
   * sync that costs a pass over every Ingress, which belongs here, not within a review's deadline.
   */
  sync(sync: ReplicaSync): ReplicaSyncAck {
    const ack = this.#replica.apply(sync);
    withGuardContext(this.#context, () => this.#ownershipOf(this.#reader()));
    return ack;
  }

  /** The verdict on one request; `now` (ms since the epoch) is a new object's creation time. */
  review(request: AdmissionCheckRequest, now: number): AdmissionVerdict {
    return withGuardContext(this.#context, () => {
      switch (request.kind) {
        case 'Secret':
          return this.#secret(request);
        case 'HTTPRoute':
        case 'Gateway':
          return this.#gatewayApi(request, now);
        default:
          return this.#ingress(request, now);
      }
    });
  }

  /** An HTTPRoute or Gateway: not ours (another class, parentRefs elsewhere) is allowed unchecked. */
  #gatewayApi(request: AdmissionCheckRequest, now: number): AdmissionVerdict {
    const route = request.kind === 'HTTPRoute';
    const store = route ? this.#gateway.stores.httpRoutes : this.#gateway.stores.gateways;
    const admitted = this.#admit(request, store, now);
    if ('denied' in admitted) return admitted.denied;
    const reader = this.#reader();
    const ours = route ? routeIsOurs(admitted.object, reader, this.#gateway) : gatewayIsOurs(admitted.object, reader, this.#gateway);
    if (!ours) return ALLOWED;
    const verdict = checkObjectAs(admitted.object, request.kind, this.#context);
    if (verdict.rejections.length > 0) return denyRejections(verdict.rejections);
    if (!verdict.ok) return deny('Rejected', verdict.reason);
    const overlay = new OverlaySource(reader, store, verdict.object);
    return route ? reviewHttpRoute(verdict.object, overlay, this.#options, this.#gateway) : reviewGateway(verdict.object, overlay, this.#gateway);
  }

  #ingress(request: AdmissionCheckRequest, now: number): AdmissionVerdict {
    const stores = this.#options.stores;
    const admitted = this.#admit(request, stores.ingresses, now);
    if ('denied' in admitted) return admitted.denied;
    const reader = this.#reader();
    const classes = classPolicy(reader, this.#options);
    // Another controller's Ingress: none of our business, whatever its annotations say.
    if (!acceptsClass(admitted.object, classes)) return ALLOWED;
    const verdict = checkObjectAs(admitted.object, 'Ingress', this.#context);
    if (verdict.rejections.length > 0) return denyRejections(verdict.rejections);
    if (!verdict.ok) return deny('Rejected', verdict.reason);
    const key = objectKey(verdict.object);
    const entry = computeEntry(reader, this.#options, key, verdict.object, () => undefined);
    const { refusals, conflicts } = this.#ownershipOf(reader).judge(key, entry.routes);
    if (refusals.length > 0) return deny('HostConflict', refusals.join('; '));
    const warnings: string[] = [];
    for (const item of entry.log) warnings.push('warn' in item ? item.warn : `rejected ${item.reject}`);
    // Within its own namespace the oldest Ingress serves a path: a warning, as in the render.
    warnings.push(...conflicts);
    return allow(warnings);
  }

  /** Guarded reads of the replica (warnings are the render's business, not the review's). */
  #reader(): GuardedReader {
    return new GuardedReader((name) => this.#replica.store(name), () => undefined, this.#context);
  }

  /** The ownership index, current with the replica (costs what changed since the last call). */
  #ownershipOf(reader: GuardedReader): OwnershipIndex {
    this.#ownership.refresh(this.#replica.store(this.#options.stores.ingresses), classPolicy(reader, this.#options));
    return this.#ownership;
  }

  #secret(request: AdmissionCheckRequest): AdmissionVerdict {
    const object = request.object as { type?: unknown } | null;
    // Only TLS Secrets become certificates; every other Secret is the cluster's business.
    if (typeof object === 'object' && object !== null && object.type !== SECRET_TLS) return ALLOWED;
    const admitted = this.#admit(request, this.#options.stores.secrets, undefined);
    if ('denied' in admitted) return admitted.denied;
    const verdict = checkObjectAs(admitted.object, 'Secret', this.#context);
    if (verdict.rejections.length > 0) return denyRejections(verdict.rejections);
    return verdict.ok ? ALLOWED : deny('InvalidTLS', verdict.reason);
  }

  /**
   * The object as its store would hold it: with the request's namespace when it names none and,
   * for a new object, a creation time of `now` (the API server sets it after admission; until
   * then the object is the newest claimant). A refusal is the denial.
   */
  #admit(request: AdmissionCheckRequest, store: string, now: number | undefined): { object: KubeObject } | { denied: AdmissionVerdict } {
    const raw = request.object;
    let candidate: unknown = raw;
    if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
      const meta = (raw as { metadata?: unknown }).metadata;
      if (typeof meta === 'object' && meta !== null && !Array.isArray(meta)) {
        const fields = meta as Record<string, unknown>;
        const patch: Record<string, unknown> = {};
        if (fields.namespace === undefined && request.namespace !== '') patch.namespace = request.namespace;
        if (now !== undefined && fields.creationTimestamp === undefined) patch.creationTimestamp = new Date(now).toISOString();
        if (Object.keys(patch).length > 0) candidate = { ...raw, metadata: { ...fields, ...patch } };
      }
    }
    try {
      return { object: admitObject(candidate, this.#identity(store)) };
    } catch (error) {
      if (!(error instanceof StoreRefusal)) throw error;
      return { denied: deny(request.kind === 'Secret' ? 'InvalidTLS' : 'Rejected', `${request.kind}: ${error.reason}`) };
    }
  }

  /** The identity the reviewed objects are admitted under: the replica's store definition. */
  #identity(store: string): StoreIdentity {
    let identity = this.#identities.get(store);
    if (identity === undefined) {
      identity = { name: store, definition: this.#context.definitions.get(store) ?? MODEL_STORE_KINDS.get(store) };
      this.#identities.set(store, identity);
    }
    return identity;
  }
}

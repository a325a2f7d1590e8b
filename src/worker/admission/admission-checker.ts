// The admission checks of the validating webhook: an Ingress or TLS Secret is admitted and checked
// as its store would (store-admission.ts, object-guard.ts), then an Ingress is computed as the
// routing model would (ingress-entry.ts, against a replica of the stores kept current with the
// deltas render workers get) and its routes are put to the owners of their hosts (see
// ownership-index.ts). Pure and synchronous: the admission worker runs it off the main thread.
// It never runs `haproxy -c`: nothing tenant-written reaches HAProxy here.
import type { AdmissionCheckRequest, AdmissionVerdict, KubeObject, Rejection, ReplicaSync, ReplicaSyncAck, TemplateSetSource } from '../protocol.js';
import { computeEntry } from '../routing/ingress-entry.js';
import { acceptsClass, classPolicy } from '../routing/ingress-class.js';
import { modelOptions, type ModelOptions } from '../routing/model.js';
import { contextOf, MODEL_STORE_KINDS, withGuardContext, type GuardContext } from '../store/guard-context.js';
import { GuardedReader } from '../store/guarded-reader.js';
import { objectKey } from '../store/indexed-store.js';
import { escapeLogText } from '../store/log-text.js';
import { checkObjectAs, rejectionMessage } from '../store/object-guard.js';
import { admitObject, StoreRefusal, type StoreIdentity } from '../store/store-admission.js';
import { StoreReplica } from '../store/store-replica.js';
import { reasonCodeOf } from '../store/object-guard.js';
import { OwnershipIndex } from './ownership-index.js';

/** A denial's message is at most this long; the API server shows it to `kubectl apply`. */
export const MAX_MESSAGE_CHARS = 2048;
/** At most this many warnings, each at most this long. */
export const MAX_WARNINGS = 16;
export const MAX_WARNING_CHARS = 512;

const SECRET_TLS = 'kubernetes.io/tls';

export class AdmissionChecker {
  readonly #options: ModelOptions;
  readonly #context: GuardContext;
  readonly #replica = new StoreReplica();
  readonly #ownership: OwnershipIndex;
  readonly #identities = new Map<string, StoreIdentity>();

  constructor(set: TemplateSetSource) {
    this.#options = modelOptions(set.values);
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
    return withGuardContext(this.#context, () => (request.kind === 'Secret' ? this.#secret(request) : this.#ingress(request, now)));
  }

  #ingress(request: AdmissionCheckRequest, now: number): AdmissionVerdict {
    const stores = this.#options.stores;
    const admitted = this.#admit(request, stores.ingresses, now);
    if ('denied' in admitted) return admitted.denied;
    const reader = this.#reader();
    const classes = classPolicy(reader, this.#options);
    // Another controller's Ingress: none of our business, whatever its annotations say.
    if (!acceptsClass(admitted.object, classes)) return { allowed: true, warnings: [] };
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
    return { allowed: true, warnings: capWarnings(warnings) };
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
    if (typeof object === 'object' && object !== null && object.type !== SECRET_TLS) return { allowed: true, warnings: [] };
    const admitted = this.#admit(request, this.#options.stores.secrets, undefined);
    if ('denied' in admitted) return admitted.denied;
    const verdict = checkObjectAs(admitted.object, 'Secret', this.#context);
    if (verdict.rejections.length > 0) return denyRejections(verdict.rejections);
    return verdict.ok ? { allowed: true, warnings: [] } : deny('InvalidTLS', verdict.reason);
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

/** Denied with the first rejection's reason; the message lists them all, as the render reports them. */
function denyRejections(rejections: readonly Rejection[]): AdmissionVerdict {
  const first = rejections[0] as Rejection;
  return deny(reasonCodeOf(first), rejections.map(rejectionMessage).join('; '));
}

function deny(reason: NonNullable<AdmissionVerdict['reason']>, message: string): AdmissionVerdict {
  return { allowed: false, reason, message: cap(escapeLogText(message), MAX_MESSAGE_CHARS), warnings: [] };
}

function capWarnings(warnings: readonly string[]): string[] {
  const unique = [...new Set(warnings)];
  const kept = unique.slice(0, MAX_WARNINGS).map((w) => cap(escapeLogText(w), MAX_WARNING_CHARS));
  if (unique.length > MAX_WARNINGS) kept.push(`and ${unique.length - MAX_WARNINGS} more warnings`);
  return kept;
}

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

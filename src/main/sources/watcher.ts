// ResourceWatcher: sits between a source and one store. It admits each change into the store (a
// refused object is logged and counted, never thrown at the source) and reports what changed as
// `resource.index.updated`, debounced on the leading edge (a window of 0 publishes at the end of
// the synchronous burst). Before the initial list is complete, events carry `isInitialSync: true`.
// Publishes: resource.index.updated
import type { Logger } from 'pino';
import type { KubeObject, StoreDefinition } from '../../worker/protocol.js';
import { objectKey, StoreRefusal } from '../../worker/store/indexed-store.js';
import type { EventBus } from '../bus/event-bus.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import { newEvent, type ChangeStats, type ControllerEvent } from '../events/events.js';
import type { Store } from '../stores/store-provider.js';

/** Annotation kubectl writes with the whole previous object: large, and never read by templates. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Kinds whose `status` the controller writes itself and no template reads: an update that changed
 * only their status (the leader's own status write coming back through the watch) is stored
 * without a `resource.index.updated`, so it never triggers a render.
 */
export const STATUS_WRITTEN_KINDS: ReadonlySet<string> = new Set(['Ingress', 'GatewayClass', 'Gateway', 'HTTPRoute']);

/** The debounce window when the template set names none. */
export const DEFAULT_DEBOUNCE_MS = 100;

/**
 * A store's own check of each object entering it, after admission: the object as stored (it may
 * be a smaller projection), or a StoreRefusal. A refused update also removes the object's older
 * version, so nothing stays stored that the check would now refuse.
 */
export type StoreCheck = (object: KubeObject) => KubeObject;

export interface ResourceWatcherOptions {
  readonly definition: StoreDefinition;
  readonly store: Store;
  readonly check?: StoreCheck;
  readonly bus: EventBus<ControllerEvent>;
  readonly clock: Clock;
  readonly logger: Logger;
}

type Counts = { created: number; modified: number; deleted: number };

export class ResourceWatcher {
  readonly definition: StoreDefinition;
  readonly #store: Store;
  readonly #bus: EventBus<ControllerEvent>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #check: StoreCheck | undefined;
  readonly #windowMs: number;
  #pending: Counts = { created: 0, modified: 0, deleted: 0 };
  /** Open while a window runs: changes in it wait for its end. */
  #window: TimerHandle | undefined;
  #burstQueued = false;
  #synced = false;
  /** Updates dropped because their resourceVersion had not changed. */
  unchanged = 0;
  /** Updates dropped because only the status changed (see STATUS_WRITTEN_KINDS). */
  statusOnly = 0;
  /** Objects the store refused (another kind, no name). */
  refused = 0;

  constructor(options: ResourceWatcherOptions) {
    this.definition = options.definition;
    this.#store = options.store;
    this.#bus = options.bus;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#check = options.check;
    this.#windowMs = options.definition.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  }

  get synced(): boolean {
    return this.#synced;
  }

  get size(): number {
    return this.#store.size;
  }

  upsert(raw: KubeObject): void {
    let object: KubeObject;
    let admitted: KubeObject | undefined;
    try {
      admitted = prepare(this.#store.admit(raw), this.definition);
      object = this.#check === undefined ? admitted : this.#check(admitted);
    } catch (error) {
      if (!(error instanceof StoreRefusal)) throw error;
      this.refused++;
      // pino writes the reason JSON-encoded: object text cannot forge a log line.
      this.#logger.warn({ resource: this.definition.name, reason: error.reason }, 'object refused by its store');
      if (admitted !== undefined) this.delete(objectKey(admitted));
      return;
    }
    const key = objectKey(object);
    const previous = this.#store.get(key);
    const version = object.metadata.resourceVersion;
    // A resync or a relist repeats objects it already delivered: same version, same object.
    if (previous !== undefined && typeof version === 'string' && version !== '' && previous.metadata.resourceVersion === version) {
      this.unchanged++;
      return;
    }
    if (previous !== undefined && STATUS_WRITTEN_KINDS.has(this.definition.kind) && onlyStatusChanged(previous, object)) {
      // Kept, so the store tells the truth about status (a new leader reads it), but announced
      // to nobody: a status change never triggers a render.
      this.#store.upsert(object, key);
      this.statusOnly++;
      return;
    }
    const created = this.#store.upsert(object, key);
    if (created) this.#pending.created++;
    else this.#pending.modified++;
    this.#changed();
  }

  delete(key: string): void {
    if (!this.#store.delete(key)) return;
    this.#pending.deleted++;
    this.#changed();
  }

  /** The initial list is complete: what is pending goes out as the last initial-sync event. */
  markSynced(): void {
    if (this.#synced) return;
    this.#flush();
    this.#synced = true;
  }

  /** Publishes what is pending now and closes any open window (shutdown, tests). */
  close(): void {
    this.#clock.clearTimeout(this.#window);
    this.#window = undefined;
    this.#flush();
  }

  #changed(): void {
    if (this.#windowMs <= 0) {
      if (this.#burstQueued) return;
      this.#burstQueued = true;
      queueMicrotask(() => {
        this.#burstQueued = false;
        this.#flush();
      });
      return;
    }
    if (this.#window !== undefined) return;
    // Leading edge: publish now, then hold everything else until the window ends.
    this.#flush();
    this.#openWindow();
  }

  #openWindow(): void {
    this.#window = this.#clock.setTimeout(() => {
      this.#window = undefined;
      if (this.#flush()) this.#openWindow();
    }, this.#windowMs);
  }

  /** Publishes the pending counts, if any; returns whether it published. */
  #flush(): boolean {
    const counts = this.#pending;
    if (counts.created + counts.modified + counts.deleted === 0) return false;
    this.#pending = { created: 0, modified: 0, deleted: 0 };
    const changeStats: ChangeStats = { ...counts, isInitialSync: !this.#synced };
    this.#bus.publish(newEvent('resource.index.updated', { resourceTypeName: this.definition.name, changeStats }, undefined, this.#clock));
    this.#logger.trace({ resource: this.definition.name, ...changeStats }, 'store updated');
    return true;
  }
}

/**
 * The object as stored: `kind` and `apiVersion` from the store's definition when the source left
 * them out (LIST items carry neither), without `metadata.managedFields` and the last-applied
 * annotation. The source's object is not mutated.
 */
export function prepare(object: KubeObject, definition: Pick<StoreDefinition, 'apiVersion' | 'kind'>): KubeObject {
  const metadata = object.metadata;
  const annotations = metadata?.annotations;
  const strip = metadata !== null && typeof metadata === 'object' && ('managedFields' in metadata || (annotations != null && typeof annotations === 'object' && LAST_APPLIED_ANNOTATION in annotations));
  const needsKind = object.kind === undefined || object.apiVersion === undefined;
  if (!strip && !needsKind) return object;
  const prepared: KubeObject = { ...object, apiVersion: object.apiVersion ?? definition.apiVersion, kind: object.kind ?? definition.kind };
  if (strip) {
    const kept: KubeObject['metadata'] = { ...metadata };
    delete kept.managedFields;
    if (annotations != null && typeof annotations === 'object' && LAST_APPLIED_ANNOTATION in annotations) {
      const others = { ...annotations };
      delete others[LAST_APPLIED_ANNOTATION];
      kept.annotations = others;
    }
    prepared.metadata = kept;
  }
  return prepared;
}

/**
 * Whether `next` differs from `previous` in `status` (and resourceVersion) alone. The generation
 * tells first: the API server bumps it on every spec change, never on status or metadata alone;
 * labels and annotations, which do not bump it, are compared with the rest.
 */
export function onlyStatusChanged(previous: KubeObject, next: KubeObject): boolean {
  // Objects without a generation (manifests, synthetic sources) come from no API server: kept.
  if (typeof next.metadata.generation !== 'number' || previous.metadata.generation !== next.metadata.generation) return false;
  return JSON.stringify(withoutStatus(previous)) === JSON.stringify(withoutStatus(next));
}

function withoutStatus(object: KubeObject): KubeObject {
  return { ...object, status: undefined, metadata: { ...object.metadata, resourceVersion: undefined } };
}

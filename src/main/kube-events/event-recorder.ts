// KubeEventRecorder (leader only): turns the rejections of each render into Kubernetes Events on
// the objects (events.k8s.io/v1). A Warning Event with the stable reason when a rejection appears,
// never one per render; the same rejection coming back within the term updates that Event's
// series (count, lastObservedTime); a Normal `Accepted` Event once an object that had warnings is
// served without them. Paced per object and overall by token buckets; what a bucket refuses is
// dropped and counted. A refused write (403) is warned about once. Followers never write: the
// component runs only in a leadership term (a new term starts from no reported rejections).
// Subscribes (in start, leader-only): template.rendered
// Publishes: nothing (writes Events on the API server)
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Rejection, RejectionCode } from '../../worker/protocol.js';
import type { EventBus } from '../bus/event-bus.js';
import { deferred, type Deferred } from '../core/async.js';
import type { Clock } from '../core/clock.js';
import { TokenBucket } from '../core/token-bucket.js';
import type { ControllerEvent } from '../events/events.js';
import type { StoreProvider } from '../stores/store-provider.js';
import { microTime, type KubeEventApi } from './kube-event-api.js';
import { findingsOf, refKey, type ObjectRef } from './object-findings.js';

export const REPORTING_CONTROLLER = 'haptic-reconciler.io/controller';

export interface KubeEventRecorderOptions {
  readonly bus: EventBus<ControllerEvent>;
  readonly stores: StoreProvider;
  readonly api: KubeEventApi;
  readonly clock: Clock;
  readonly logger: Logger;
  /** This replica, as `reportingInstance`. */
  readonly identity: string;
  /** Events per second over all objects (bursts of 5 s worth). @default 10 */
  readonly eventsPerSecond?: number;
  /** Events per object: a burst of this many, then one a minute. @default 5 */
  readonly perObjectBurst?: number;
}

type Reason = RejectionCode | 'Accepted';

interface Emission {
  readonly ref: ObjectRef;
  readonly type: 'Warning' | 'Normal';
  readonly reason: Reason;
  readonly note: string;
}

interface Series {
  readonly namespace: string;
  readonly name: string;
  count: number;
}

export interface EventRecorderStats {
  readonly created: number;
  readonly patched: number;
  readonly suppressed: number;
  readonly failures: number;
}

export class KubeEventRecorder {
  readonly #options: KubeEventRecorderOptions;
  readonly #logger: Logger;
  #ready: Deferred<void> = deferred<void>();
  /** Reasons reported and still present, by object key (this term). */
  #active = new Map<string, { readonly ref: ObjectRef; readonly reasons: Set<RejectionCode> }>();
  /** The Event of each (object, reason) written this term, for its series. */
  #series = new Map<string, Series>();
  #perObject = new Map<string, TokenBucket>();
  #queue: Emission[] = [];
  #wake: Deferred<void> = deferred<void>();
  #warnedForbidden = false;
  #created = 0;
  #patched = 0;
  #suppressed = 0;
  #failures = 0;

  constructor(options: KubeEventRecorderOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'kube-events' });
  }

  get stats(): EventRecorderStats {
    return { created: this.#created, patched: this.#patched, suppressed: this.#suppressed, failures: this.#failures };
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  async start(term: AbortSignal): Promise<void> {
    this.#active = new Map();
    this.#series = new Map();
    this.#perObject = new Map();
    this.#queue = [];
    const rate = this.#options.eventsPerSecond ?? 10;
    const overall = new TokenBucket(this.#options.clock, { ratePerSecond: rate, burst: Math.max(1, rate * 5) });
    const subscription = this.#options.bus.subscribe('kube-events', { types: ['template.rendered'], leaderOnly: true, bufferSize: 4, merge: () => 'replace' });
    const pump = this.#pump(overall, term);
    this.#ready.resolve();
    try {
      for (;;) {
        const render = await subscription.next(term);
        if (render === undefined) break;
        if (render.rejections !== undefined) this.observe(render.findings === undefined ? render.rejections : [...render.rejections, ...render.findings]);
      }
    } finally {
      subscription.close();
      this.#ready = deferred<void>();
      this.#wake.resolve();
      await pump;
    }
  }

  /** Compares one render's rejections with those reported, and queues the Events that follow. */
  observe(rejections: readonly Rejection[]): void {
    const findings = findingsOf(rejections);
    for (const [key, { ref, byReason }] of findings) {
      let active = this.#active.get(key);
      if (active === undefined) {
        active = { ref, reasons: new Set() };
        this.#active.set(key, active);
      }
      for (const [reason, finding] of byReason) {
        if (active.reasons.has(reason)) continue;
        active.reasons.add(reason);
        this.#enqueue({ ref, type: 'Warning', reason, note: finding.note });
      }
      for (const reason of active.reasons) if (!byReason.has(reason)) active.reasons.delete(reason);
    }
    for (const [key, { ref }] of this.#active) {
      if (findings.has(key)) continue;
      this.#active.delete(key);
      if (this.#objectOf(ref) !== undefined) {
        this.#enqueue({ ref, type: 'Normal', reason: 'Accepted', note: `${key}: served` });
      } else {
        // Gone: nothing to tell, and nothing to keep for it.
        for (const seriesKey of this.#series.keys()) if (seriesKey.startsWith(`${key}\0`)) this.#series.delete(seriesKey);
        this.#perObject.delete(key);
      }
    }
  }

  #enqueue(emission: Emission): void {
    const key = refKey(emission.ref);
    let bucket = this.#perObject.get(key);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.#options.clock, { ratePerSecond: 1 / 60, burst: this.#options.perObjectBurst ?? 5 });
      this.#perObject.set(key, bucket);
    }
    if (!bucket.tryTake()) {
      this.#suppressed++;
      return;
    }
    this.#queue.push(emission);
    this.#wake.resolve();
  }

  async #pump(overall: TokenBucket, term: AbortSignal): Promise<void> {
    while (!term.aborted) {
      const emission = this.#queue.shift();
      if (emission === undefined) {
        this.#wake = deferred<void>();
        if (term.aborted) return;
        await this.#wake.promise;
        continue;
      }
      try {
        await overall.take(term);
        await this.#emit(emission, term);
      } catch (error) {
        if (term.aborted) return;
        this.#failures++;
        this.#logger.warn({ err: error, object: refKey(emission.ref), reason: emission.reason }, 'writing a Kubernetes Event failed; dropped');
      }
    }
  }

  async #emit(emission: Emission, signal: AbortSignal): Promise<void> {
    const { api, clock } = this.#options;
    const key = refKey(emission.ref);
    const seriesKey = `${key}\0${emission.reason}`;
    const now = microTime(clock.now());
    const known = this.#series.get(seriesKey);
    if (known !== undefined) {
      const status = await api.patch(known.namespace, known.name, { series: { count: known.count + 1, lastObservedTime: now }, note: emission.note }, signal);
      if (this.#ok(status, key)) {
        known.count++;
        this.#patched++;
        return;
      }
      if (status !== 404) return;
      // The Event expired meanwhile: a new one follows.
      this.#series.delete(seriesKey);
    }
    const namespace = emission.ref.namespace === '' ? 'default' : emission.ref.namespace;
    const name = `${eventNameBase(emission.ref.name)}.${randomBytes(8).toString('hex')}`;
    const object = this.#objectOf(emission.ref);
    const status = await api.create(
      namespace,
      {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace },
        eventTime: now,
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: this.#options.identity.slice(0, 128),
        action: 'Reconcile',
        type: emission.type,
        reason: emission.reason,
        note: emission.note,
        regarding: {
          kind: emission.ref.kind,
          namespace: emission.ref.namespace === '' ? undefined : emission.ref.namespace,
          name: emission.ref.name,
          ...(object?.apiVersion === undefined ? {} : { apiVersion: object.apiVersion }),
          ...(object?.uid === undefined ? {} : { uid: object.uid }),
        },
      },
      signal,
    );
    if (!this.#ok(status, key)) return;
    this.#created++;
    this.#series.set(seriesKey, { namespace, name, count: 1 });
  }

  #ok(status: number, key: string): boolean {
    if (status >= 200 && status < 300) return true;
    this.#failures++;
    if (status === 403) {
      if (!this.#warnedForbidden) {
        this.#warnedForbidden = true;
        this.#logger.warn({ object: key }, 'the API server refuses Kubernetes Events (403): the controller needs permission to create and patch events (events.k8s.io); Events are dropped');
      }
    } else if (status !== 404) {
      this.#logger.warn({ object: key, status }, 'writing a Kubernetes Event failed; dropped');
    }
    return false;
  }

  /** The object's apiVersion and uid from its store (found by the store's kind), or undefined once gone. */
  #objectOf(ref: ObjectRef): { readonly apiVersion?: string; readonly uid?: string } | undefined {
    const { stores } = this.#options;
    const key = ref.namespace === '' ? ref.name : `${ref.namespace}/${ref.name}`;
    for (const definition of stores.definitions()) {
      if (definition.kind !== ref.kind || !stores.has(definition.name)) continue;
      const object = stores.store(definition.name).get(key);
      if (object === undefined) continue;
      const uid = object.metadata.uid;
      return { apiVersion: object.apiVersion ?? definition.apiVersion, ...(typeof uid === 'string' ? { uid } : {}) };
    }
    return undefined;
  }
}

/** The start of an Event name: the object's name as a DNS subdomain, short enough for a suffix. */
function eventNameBase(name: string): string {
  const base = name.toLowerCase().replace(/[^a-z0-9.-]/g, '-').replace(/^[^a-z0-9]+/, '').slice(0, 200).replace(/[^a-z0-9]+$/, '');
  return base === '' ? 'object' : base;
}

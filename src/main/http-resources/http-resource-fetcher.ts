// HttpResourceFetcher (leader only): keeps the template set's HTTP resources in the internal store
// (HttpResourceStore). It fetches each one at term start and then every refreshIntervalMs, with
// conditional requests. New content is pending until a render that includes it validates
// (accepted) or a reconciliation that may have used it fails (rejected: the accepted content
// stays and the same content is not offered again). A failed fetch keeps what the store has.
// Subscribes (in start, leader-only): http.resource.updated, reconciliation.started,
//   template.rendered, reconciliation.failed. Publishes: http.resource.updated, http.resource.accepted
import type { Logger } from 'pino';
import type { HttpResourceDefinition, TemplateSetSource } from '../../worker/protocol.js';
import type { EventBus } from '../bus/event-bus.js';
import { deferred } from '../core/async.js';
import { sleep, systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import type { Engine, LeaderComponent } from '../engine.js';
import { newEvent, type ControllerEvent, type EventOf } from '../events/events.js';
import type { StoreProvider } from '../stores/store-provider.js';
import { conditionalFetch, MAX_HTTP_RESOURCE_BYTES } from './conditional-fetch.js';
import { HttpResourceStore } from './http-resource-store.js';

export { MAX_HTTP_RESOURCE_BYTES };

export interface HttpResourceFetcherOptions {
  readonly bus: EventBus<ControllerEvent>;
  /** The engine's stores; the constructor defines the internal store in them. */
  readonly stores: StoreProvider;
  /** The template set's `httpResources`. */
  readonly resources: readonly HttpResourceDefinition[];
  /** Refresh timers and fetch timeouts. @default systemClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Bigger content is a failed fetch. @default MAX_HTTP_RESOURCE_BYTES (4 MiB) */
  readonly maxContentBytes?: number;
  /** Called once per rejected content (wire it to `ControllerMetrics.countHttpResourceRejection`). */
  readonly onRejected?: (rejection: HttpResourceRejection) => void;
}

export interface HttpResourceRejection {
  readonly name: string;
  /** The URL as logged: without credentials or query. */
  readonly url: string;
  readonly checksum: string;
  /** The failed reconciliation's message. */
  readonly error: string;
}

export interface HttpResourceFetcherStats {
  readonly fetches: number;
  readonly notModified: number;
  readonly failures: number;
  /** Contents offered as pending. */
  readonly updates: number;
  readonly accepted: number;
  readonly rejected: number;
}

/** What the fetcher knows of one resource beyond the store. */
interface ResourceState {
  readonly definition: HttpResourceDefinition;
  readonly url: string;
  etag: string | undefined;
  lastModified: string | undefined;
  /** The last rejected content: not offered again while the server keeps sending it. */
  rejected: string | undefined;
  /** The pending content's bookkeeping, while the store holds pending content. */
  pending: PendingContent | undefined;
  consecutiveFailures: number;
  lastFailure: string | undefined;
}

interface PendingContent {
  readonly checksum: string;
  readonly bytes: number;
  /** The store version right after the pending upsert: a render at this version or later used it. */
  readonly version: number;
  /** eventId of the http.resource.updated that announced it. */
  readonly marker: string;
  /**
   * True once the marker went through this component's subscription. Only reconciliations
   * started after it can have read the content: one started (and so read its store version)
   * before the upsert may still be queued behind the marker, and its failure says nothing.
   */
  armed: boolean;
  /** Correlation IDs of the reconciliations started since the marker and not yet finished. */
  readonly reconciliations: Set<string>;
}

type Watched = EventOf<'http.resource.updated' | 'reconciliation.started' | 'template.rendered' | 'reconciliation.failed'>;

export class HttpResourceFetcher implements LeaderComponent {
  readonly #bus: EventBus<ControllerEvent>;
  readonly #store: HttpResourceStore;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #maxBytes: number;
  readonly #onRejected: ((rejection: HttpResourceRejection) => void) | undefined;
  readonly #states: readonly ResourceState[];
  readonly #stats = { fetches: 0, notModified: 0, failures: 0, updates: 0, accepted: 0, rejected: 0 };
  #ready = deferred<void>();
  /** Counts `start` calls; a term that ends late must not reset a newer term's readiness. */
  #term = 0;

  constructor(options: HttpResourceFetcherOptions) {
    const max = options.maxContentBytes ?? MAX_HTTP_RESOURCE_BYTES;
    if (!Number.isInteger(max) || max < 1) throw new TypeError(`maxContentBytes must be a positive integer, got ${String(max)}`);
    this.#bus = options.bus;
    this.#store = new HttpResourceStore(options.stores);
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'http-resource-fetcher' });
    this.#maxBytes = max;
    this.#onRejected = options.onRejected;
    this.#states = options.resources.map((definition) => ({
      definition,
      url: displayUrl(definition.url),
      etag: undefined,
      lastModified: undefined,
      rejected: undefined,
      pending: undefined,
      consecutiveFailures: 0,
      lastFailure: undefined,
    }));
  }

  get stats(): HttpResourceFetcherStats {
    return { ...this.#stats };
  }

  /** The internal store's view of the resources (what renders read). */
  get store(): HttpResourceStore {
    return this.#store;
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  /** One leadership term: fetches at once, then on each resource's refresh interval, until `term` aborts. */
  async start(term: AbortSignal): Promise<void> {
    const generation = ++this.#term;
    const subscription = this.#bus.subscribe('http-resource-fetcher', {
      types: ['http.resource.updated', 'reconciliation.started', 'template.rendered', 'reconciliation.failed'],
      leaderOnly: true,
      bufferSize: 1000,
    });
    // Content left pending by an earlier term: every reconciliation of this term reads it.
    for (const state of this.#states) {
      if (state.pending === undefined) continue;
      state.pending.armed = true;
      state.pending.reconciliations.clear();
    }
    this.#ready.resolve();
    const polls = this.#states.map((state) => this.#poll(state, term));
    try {
      for (;;) {
        const event = await subscription.next(term);
        if (event === undefined) break;
        this.#handle(event);
      }
    } finally {
      subscription.close();
      await Promise.allSettled(polls);
      if (generation === this.#term) this.#ready = deferred<void>();
    }
  }

  async #poll(state: ResourceState, term: AbortSignal): Promise<void> {
    while (!term.aborted) {
      await this.#fetch(state, term);
      try {
        // A failure waits the same interval: a broken server is never polled harder.
        await sleep(this.#clock, state.definition.refreshIntervalMs, term);
      } catch {
        return;
      }
    }
  }

  async #fetch(state: ResourceState, term: AbortSignal): Promise<void> {
    const { definition } = state;
    const outcome = await conditionalFetch({
      url: definition.url,
      etag: state.etag,
      lastModified: state.lastModified,
      timeoutMs: definition.timeoutMs,
      maxBytes: this.#maxBytes,
      clock: this.#clock,
      signal: term,
    });
    if (outcome.kind === 'aborted') return;
    this.#stats.fetches++;
    if (outcome.kind === 'failed') {
      this.#fetchFailed(state, outcome.reason);
      return;
    }
    if (state.consecutiveFailures > 0) {
      this.#logger.info({ resource: definition.name, url: state.url, failures: state.consecutiveFailures }, 'HTTP resource reachable again');
      state.consecutiveFailures = 0;
      state.lastFailure = undefined;
    }
    if (outcome.kind === 'not-modified') {
      this.#stats.notModified++;
      return;
    }
    state.etag = outcome.etag;
    state.lastModified = outcome.lastModified;
    this.#received(state, outcome.content, outcome.checksum, outcome.bytes);
  }

  #received(state: ResourceState, content: string, checksum: string, bytes: number): void {
    const name = state.definition.name;
    const current = this.#store.get(name);
    if (checksum === current?.pending?.checksum) return;
    if (checksum === state.rejected) {
      this.#logger.debug({ resource: name, url: state.url, checksum }, 'HTTP resource still serves rejected content; not offered again');
      return;
    }
    // The content changed: a later return to the rejected content is offered again.
    state.rejected = undefined;
    if (checksum === current?.accepted?.checksum) {
      // Back to the accepted content before the pending one was judged.
      if (this.#store.dropPending(name) !== undefined) this.#logger.info({ resource: name, url: state.url, checksum }, 'HTTP resource back to its accepted content');
      state.pending = undefined;
      return;
    }
    const version = this.#store.offer(name, { content, checksum });
    const event = newEvent('http.resource.updated', { url: state.url, checksum, contentSize: bytes }, undefined, this.#clock);
    state.pending = { checksum, bytes, version, marker: event.eventId, armed: false, reconciliations: new Set() };
    this.#stats.updates++;
    this.#logger.info({ resource: name, url: state.url, checksum, bytes, storeVersion: version }, 'HTTP resource changed; new content pending');
    this.#bus.publish(event);
  }

  #fetchFailed(state: ResourceState, reason: string): void {
    this.#stats.failures++;
    state.consecutiveFailures++;
    // The first failure of a run, or a new reason, is a warning; repeats of it are debug lines.
    const repeated = state.consecutiveFailures > 1 && reason === state.lastFailure;
    state.lastFailure = reason;
    const fields = {
      resource: state.definition.name,
      url: state.url,
      error: reason,
      consecutiveFailures: state.consecutiveFailures,
      retryInMs: state.definition.refreshIntervalMs,
    };
    const message = 'fetching HTTP resource failed; renders keep its current content';
    if (repeated) this.#logger.debug(fields, message);
    else this.#logger.warn(fields, message);
  }

  #handle(event: Watched): void {
    switch (event.type) {
      case 'http.resource.updated':
        for (const state of this.#states) if (state.pending?.marker === event.eventId) state.pending.armed = true;
        return;
      case 'reconciliation.started':
        for (const state of this.#states) if (state.pending?.armed === true) state.pending.reconciliations.add(event.correlationId);
        return;
      case 'template.rendered':
        for (const state of this.#states) {
          const pending = state.pending;
          if (pending === undefined) continue;
          pending.reconciliations.delete(event.correlationId);
          if (event.storeVersion >= pending.version) this.#accept(state, pending, event);
        }
        return;
      case 'reconciliation.failed':
        for (const state of this.#states) {
          const pending = state.pending;
          if (pending?.reconciliations.has(event.correlationId) === true) this.#reject(state, pending, event);
        }
        return;
      default: {
        const unexpected: never = event;
        throw new Error(`unexpected event ${JSON.stringify(unexpected)}`);
      }
    }
  }

  #accept(state: ResourceState, pending: PendingContent, rendered: EventOf<'template.rendered'>): void {
    state.pending = undefined;
    this.#store.accept(state.definition.name);
    this.#stats.accepted++;
    this.#logger.info(
      { resource: state.definition.name, url: state.url, checksum: pending.checksum, correlationId: rendered.correlationId, renderId: rendered.renderId },
      'HTTP resource content accepted',
    );
    this.#bus.publish(newEvent('http.resource.accepted', { url: state.url, checksum: pending.checksum, contentSize: pending.bytes }, rendered, this.#clock));
  }

  #reject(state: ResourceState, pending: PendingContent, failed: EventOf<'reconciliation.failed'>): void {
    const name = state.definition.name;
    state.pending = undefined;
    state.rejected = pending.checksum;
    this.#store.dropPending(name);
    this.#stats.rejected++;
    this.#logger.warn(
      { resource: name, url: state.url, checksum: pending.checksum, correlationId: failed.correlationId, phase: failed.phase, error: failed.error },
      'HTTP resource content rejected: the render that used it failed; the previous content stays',
    );
    try {
      this.#onRejected?.({ name, url: state.url, checksum: pending.checksum, error: failed.error });
    } catch (error) {
      this.#logger.error({ err: error }, 'onRejected callback threw');
    }
  }
}

/**
 * Creates the fetcher for a template set that declares `httpResources` and adds it to the
 * engine's leader components (call before `engine.start`); undefined when it declares none.
 * @example attachHttpResources(engine, templateSet, { onRejected: () => metrics.countHttpResourceRejection() })
 */
export function attachHttpResources(
  engine: Pick<Engine, 'bus' | 'stores' | 'clock' | 'logger' | 'addLeaderComponent'>,
  templateSet: Pick<TemplateSetSource, 'httpResources'>,
  options: Pick<HttpResourceFetcherOptions, 'maxContentBytes' | 'onRejected'> = {},
): HttpResourceFetcher | undefined {
  const resources = templateSet.httpResources ?? [];
  if (resources.length === 0) return undefined;
  const fetcher = new HttpResourceFetcher({ bus: engine.bus, stores: engine.stores, clock: engine.clock, logger: engine.logger, resources, ...options });
  engine.addLeaderComponent(fetcher);
  return fetcher;
}

/**
 * A URL as logs and events show it: no user name or password, and the query (often a token)
 * reduced to `?…`. WHATWG URL parsing has percent-encoded everything else, so no control
 * character or newline reaches a log line.
 */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}${url.search === '' ? '' : '?…'}`;
  } catch {
    return '(invalid URL)';
  }
}

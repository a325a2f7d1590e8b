// ResourceInformer: one watched resource kept in step with the API server by client-node's
// ListWatch (list, watch from the list's resourceVersion, relist on 410 Gone with deletes for the
// objects that vanished meanwhile). This adds what ListWatch lacks: it stops for good after any
// other list or watch error, so it is restarted here with a capped jittered backoff; it re-watches
// at once when a watch ends cleanly, so a watch that keeps ending right after it started is paced
// too; and it has no "initial list complete" signal, so `synced` is reported here, once. A
// resource the server does not serve (404: a CustomResourceDefinition such as the Gateway API's
// not installed) counts as synced and empty, with one warning, and is retried with the backoff,
// so a cluster without it still becomes ready and picks it up once it is installed.
import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject, StoreDefinition } from '../../../worker/protocol.js';
import { objectKey } from '../../../worker/store/indexed-store.js';
import { deferred } from '../../core/async.js';
import { sleep, type Clock } from '../../core/clock.js';
import type { SourceSink } from '../source.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { listAll } from './kube-http.js';
import type { ResourceLocation } from './resource-paths.js';

/** A watch that ends cleanly sooner than this after it started counts as ending "at once". */
const SHORT_WATCH_MS = 1_000;
/**
 * The server ends each watch after a random 5 to 10 minutes and it is resumed from its
 * resourceVersion: a connection a middlebox silently dropped is replaced at the latest then.
 */
const WATCH_TIMEOUT_S = { min: 300, spread: 300 };

export interface ResourceInformerOptions {
  readonly kubeConfig: KubeConfig;
  readonly definition: StoreDefinition;
  readonly location: ResourceLocation;
  readonly sink: SourceSink;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly backoff?: BackoffOptions;
  /** Objects per LIST page. @default 500 */
  readonly pageSize?: number;
}

type WatchArgs = Parameters<Watch['watch']>;

export class ResourceInformer {
  readonly #options: ResourceInformerOptions;
  readonly #name: string;
  readonly #backoff: Backoff;
  readonly #logger: Logger;
  readonly #random: () => number;
  /** Watch requests whose `done` has not been called yet, by their abort controller. */
  readonly #open = new Set<{ controller?: AbortController }>();
  readonly #closed = deferred<void>();
  #signal: AbortSignal = new AbortController().signal;
  #listsInFlight = 0;
  /** A list completed and the next watch call follows its application (see #watch). */
  #listApplied = false;
  #synced = false;
  /** A restart is scheduled: further error reports of the same failure are ignored. */
  #restarting = false;
  /** The previous watch ended cleanly right after it started: pace the next one. */
  #endedAtOnce = false;
  #failing = false;
  /** The last list or watch was answered 404 (and warned about once). */
  #missing = false;

  constructor(options: ResourceInformerOptions) {
    this.#options = options;
    this.#name = options.definition.name;
    this.#backoff = new Backoff(options.clock, options.backoff);
    this.#random = options.backoff?.random ?? Math.random;
    this.#logger = options.logger.child({ resource: options.definition.name, path: options.location.collectionPath });
  }

  /** Lists and watches until `signal` aborts; resolves once no request of it is open. */
  async run(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#signal = signal;
    const { definition, location, sink } = this.#options;
    const watch = new PacedWatch(this.#options.kubeConfig, (args, start) => this.#watch(args, start));
    const informer = new ListWatch<KubernetesObject>(location.collectionPath, watch, () => this.#list(), false, definition.labelSelector, definition.fieldSelector);
    // Objects are handed over as ListWatch parsed them; it keeps them in its cache unmodified.
    // A throw inside a ListWatch callback would abort the whole relist and restart it forever,
    // so one object that cannot be taken is reported alone.
    const deliver = (object: KubernetesObject, apply: (object: KubeObject) => void): void => {
      if (signal.aborted) return;
      try {
        apply(object as KubeObject);
      } catch (error) {
        sink.problem(this.#name, `${definition.kind} ${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? '?'} was not taken: ${describe(error)}`);
      }
    };
    const upsert = (object: KubernetesObject): void => deliver(object, (o) => sink.upsert(this.#name, o));
    informer.on('add', upsert);
    informer.on('update', upsert);
    informer.on('delete', (object) => deliver(object, (o) => sink.delete(this.#name, objectKey(o))));
    informer.on('error', (error: unknown) => this.#failed(informer, error));
    const stopped = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.#start(informer);
    await stopped;
    await informer.stop();
    // ListWatch forgets a watch whose request failed before its own call returned (it keeps the
    // older controller), so every open watch is aborted from here, not through `stop` alone.
    for (const entry of this.#open) entry.controller?.abort();
    this.#checkClosed();
    await this.#closed.promise;
  }

  #start(informer: ListWatch<KubernetesObject>): void {
    informer.start().catch((error: unknown) => this.#failed(informer, error));
  }

  async #list(): Promise<KubernetesListObject<KubernetesObject>> {
    const { kubeConfig, location, definition } = this.#options;
    this.#listsInFlight++;
    try {
      const list = await listAll(kubeConfig, location.collectionPath, {
        ...(definition.labelSelector === undefined ? {} : { labelSelector: definition.labelSelector }),
        ...(definition.fieldSelector === undefined ? {} : { fieldSelector: definition.fieldSelector }),
        ...(this.#options.pageSize === undefined ? {} : { pageSize: this.#options.pageSize }),
        signal: this.#signal,
      });
      this.#logger.debug({ objects: list.items.length, resourceVersion: list.metadata.resourceVersion }, 'listed');
      this.#listApplied = true;
      if (this.#missing) {
        this.#missing = false;
        this.#logger.info('the resource is served now');
      }
      return list as KubernetesListObject<KubernetesObject>;
    } finally {
      this.#listsInFlight--;
      this.#checkClosed();
    }
  }

  /**
   * Every watch ListWatch opens passes here. ListWatch applies a list synchronously and then
   * calls watch in the same continuation, so the first call after a list is the moment the
   * initial list is in the sink.
   */
  async #watch([path, query, callback, done]: WatchArgs, start: (...args: WatchArgs) => Promise<AbortController>): Promise<AbortController> {
    const signal = this.#signal;
    if (this.#listApplied) {
      this.#listApplied = false;
      if (!this.#synced && !signal.aborted) {
        this.#synced = true;
        this.#options.sink.synced(this.#name);
      }
    }
    // Never started: ListWatch only keeps the controller to abort it later.
    if (signal.aborted) return new AbortController();
    if (this.#endedAtOnce) {
      this.#endedAtOnce = false;
      const delay = this.#backoff.next();
      this.#logger.debug({ delayMs: delay }, 'the last watch ended right after it started; pacing the next one');
      try {
        await sleep(this.#options.clock, delay, signal);
      } catch {
        return new AbortController();
      }
    }
    const entry: { controller?: AbortController } = {};
    this.#open.add(entry);
    const startedAt = this.#options.clock.monotonic();
    let ended = false;
    const finish = (error: unknown): void => {
      if (ended) return;
      ended = true;
      this.#open.delete(entry);
      // ListWatch follows both a clean end and a 410 with a new watch (after a relist) at once.
      const restartsAtOnce = error == null || statusCode(error) === 410;
      if (restartsAtOnce && this.#options.clock.monotonic() - startedAt < SHORT_WATCH_MS) this.#endedAtOnce = true;
      this.#checkClosed();
      done(error);
    };
    const timeoutSeconds = WATCH_TIMEOUT_S.min + Math.floor(WATCH_TIMEOUT_S.spread * this.#random());
    try {
      entry.controller = await start(path, { ...query, allowWatchBookmarks: true, timeoutSeconds }, callback, finish);
    } catch (error) {
      finish(error);
      return new AbortController();
    }
    if (signal.aborted) entry.controller.abort();
    if (!ended) {
      this.#backoff.connected();
      if (this.#failing) {
        this.#failing = false;
        this.#logger.info('watch re-established');
      }
    }
    return entry.controller;
  }

  /** ListWatch reported an error and stopped: restart it after the backoff. */
  #failed(informer: ListWatch<KubernetesObject>, error: unknown): void {
    // Stopping aborts the open watch, and ListWatch reports that as an error too.
    if (this.#signal.aborted || this.#restarting) return;
    this.#restarting = true;
    this.#failing = true;
    const delay = this.#backoff.next();
    const { definition, location, sink } = this.#options;
    if (statusCode(error) === 404) {
      if (!this.#synced) {
        this.#synced = true;
        sink.synced(this.#name);
      }
      if (!this.#missing) {
        this.#missing = true;
        sink.problem(
          this.#name,
          `${definition.kind}: the API server does not serve ${location.collectionPath} (404; is its CustomResourceDefinition installed?); the store stays empty until it does (retried with a backoff)`,
        );
      }
    } else {
      sink.problem(this.#name, `${definition.kind} list/watch of ${location.collectionPath} failed (${describe(error)}); restarting in ${delay} ms`);
    }
    sleep(this.#options.clock, delay, this.#signal).then(
      () => {
        this.#restarting = false;
        this.#start(informer);
      },
      () => {
        this.#restarting = false;
        this.#checkClosed();
      },
    );
  }

  #checkClosed(): void {
    if (this.#signal.aborted && this.#open.size === 0 && this.#listsInFlight === 0) this.#closed.resolve();
  }
}

/** client-node's Watch with every call routed through the informer (pacing, sync, tracking). */
class PacedWatch extends Watch {
  readonly #route: (args: WatchArgs, start: (...args: WatchArgs) => Promise<AbortController>) => Promise<AbortController>;

  constructor(kubeConfig: KubeConfig, route: (args: WatchArgs, start: (...args: WatchArgs) => Promise<AbortController>) => Promise<AbortController>) {
    super(kubeConfig);
    this.#route = route;
  }

  override watch(...args: WatchArgs): Promise<AbortController> {
    return this.#route(args, (...inner) => super.watch(...inner));
  }
}

function statusCode(error: unknown): unknown {
  return error !== null && typeof error === 'object' ? ((error as { statusCode?: unknown }).statusCode ?? (error as { code?: unknown }).code) : undefined;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const status = statusCode(error);
    return typeof status === 'number' && !error.message.includes(String(status)) ? `${status} ${error.message}` : error.message;
  }
  return String(error);
}

// Watchers: one ResourceWatcher per watched store, behind the SourceSink a source reports to.
// Once every watcher has its initial list, `index.synchronized` is published exactly once, with
// the resource counts: that is the first reconciliation (initial-sync updates trigger nothing).
// Problems a source routes around are logged and counted here.
// Publishes: resource.index.updated (through the watchers), index.synchronized
import type { Logger } from 'pino';
import type { KubeObject, StoreDefinition } from '../../worker/protocol.js';
import type { EventBus } from '../bus/event-bus.js';
import { deferred } from '../core/async.js';
import type { Clock } from '../core/clock.js';
import { newEvent, type ControllerEvent } from '../events/events.js';
import type { StoreProvider } from '../stores/store-provider.js';
import type { SourceSink } from './source.js';
import { ResourceWatcher, type StoreCheck } from './watcher.js';

export interface WatcherSetOptions {
  readonly definitions: readonly StoreDefinition[];
  readonly stores: StoreProvider;
  readonly bus: EventBus<ControllerEvent>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Checks of particular stores, by store name (see StoreCheck). */
  readonly checks?: Readonly<Record<string, StoreCheck>>;
}

export class WatcherSet implements SourceSink {
  readonly #watchers = new Map<string, ResourceWatcher>();
  readonly #bus: EventBus<ControllerEvent>;
  readonly #stores: StoreProvider;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #synchronized = deferred<void>();
  readonly #unknown = new Set<string>();
  #problems = 0;

  constructor(options: WatcherSetOptions) {
    this.#bus = options.bus;
    this.#stores = options.stores;
    this.#clock = options.clock;
    this.#logger = options.logger.child({ component: 'watchers' });
    for (const definition of options.definitions) {
      const store = options.stores.define(definition);
      const check = options.checks?.[definition.name];
      this.#watchers.set(
        definition.name,
        new ResourceWatcher({ definition, store, bus: options.bus, clock: options.clock, logger: this.#logger, ...(check === undefined ? {} : { check }) }),
      );
    }
  }

  /** Resolves once every watcher has its initial list and `index.synchronized` is out. */
  whenSynchronized(): Promise<void> {
    return this.#synchronized.promise;
  }

  get synchronized(): boolean {
    return this.#synchronized.settled;
  }

  /** Problems sources reported (bad manifests, dropped watches). */
  get problems(): number {
    return this.#problems;
  }

  /** Watchers still hydrating, by store name. */
  pending(): string[] {
    return [...this.#watchers.values()].filter((w) => !w.synced).map((w) => w.definition.name);
  }

  upsert(resource: string, object: KubeObject): void {
    this.#watcher(resource)?.upsert(object);
  }

  delete(resource: string, key: string): void {
    this.#watcher(resource)?.delete(key);
  }

  synced(resource: string): void {
    const watcher = this.#watcher(resource);
    if (watcher === undefined || watcher.synced) return;
    watcher.markSynced();
    this.#logger.debug({ resource, objects: watcher.size }, 'initial list complete');
    if (this.#synchronized.settled || this.pending().length > 0) return;
    this.#bus.publish(newEvent('index.synchronized', { resourceCounts: this.#stores.counts() }, undefined, this.#clock));
    this.#synchronized.resolve();
  }

  problem(resource: string | undefined, message: string): void {
    this.#problems++;
    this.#logger.warn({ resource }, message);
  }

  /** Publishes whatever is pending and stops every debounce window. */
  close(): void {
    for (const watcher of this.#watchers.values()) watcher.close();
  }

  #watcher(resource: string): ResourceWatcher | undefined {
    const watcher = this.#watchers.get(resource);
    if (watcher === undefined && !this.#unknown.has(resource)) {
      this.#unknown.add(resource);
      this.#logger.warn({ resource }, 'a source reported a resource no store watches; ignored');
    }
    return watcher;
  }
}

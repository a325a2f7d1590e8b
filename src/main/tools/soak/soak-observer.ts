// The soak's view of the bus (SoakObserver): counts renders and failures, resolves once the
// first render is in, hands each render's store version and each failure to the soak, and
// remembers the last few renders so that a written config can be traced to its store version.
// With HAProxy, it counts deployments by kind and hands each successful one's store version on
// (traced through the render's checksum). Lossy, so observing never causes a critical drop.
// Subscribes: template.rendered, reconciliation.failed, deployment.completed
import type { EventBus, Subscription } from '../../bus/event-bus.js';
import { deferred } from '../../core/async.js';
import type { ControllerEvent, EventOf } from '../../events/events.js';

type ObservedEvent = EventOf<'template.rendered' | 'reconciliation.failed' | 'deployment.completed'>;

export interface SoakObserverHandlers {
  rendered(storeVersion: number): void;
  failed(): void;
  /** A deployment (a reload, or runtime changes) succeeded: HAProxy serves the render of this store version. */
  deployed?(storeVersion: number): void;
}

/** Renders remembered for `versionOf`: the OutputWriter writes the newest, so a few suffice. */
const RECENT_RENDERS = 8;
/** Render checksums remembered for deployments; the Deployer deploys a recent render. */
const RECENT_CHECKSUMS = 256;

export class SoakObserver {
  renders = 0;
  failures = 0;
  lastFailure = '';
  readonly deployments = { reloads: 0, runtime: 0, skipped: 0, failed: 0 };
  lastDeployFailure = '';
  readonly #subscription: Subscription<ObservedEvent>;
  readonly #handlers: SoakObserverHandlers;
  readonly #firstRender = deferred();
  readonly #firstDeploy = deferred();
  /** Render checksum -> store version, oldest first; bounded by RECENT_CHECKSUMS. */
  readonly #checksums = new Map<string, number>();
  /** Newest last; bounded by RECENT_RENDERS. */
  readonly #recent: { readonly config: string; readonly version: number }[] = [];

  constructor(bus: EventBus<ControllerEvent>, handlers: SoakObserverHandlers) {
    this.#handlers = handlers;
    this.#subscription = bus.subscribe('soak-observer', { types: ['template.rendered', 'reconciliation.failed', 'deployment.completed'], lossy: true, bufferSize: 10_000 });
  }

  /** Resolves with the first render; rejects if a reconciliation fails before any render. */
  get firstRender(): Promise<void> {
    return this.#firstRender.promise;
  }

  /** Resolves with the first successful deployment. */
  get firstDeploy(): Promise<void> {
    return this.#firstDeploy.promise;
  }

  /** The store version of a remembered render with this config (the newest such), if any. */
  versionOf(config: string): number | undefined {
    return this.#recent.findLast((render) => render.config === config)?.version;
  }

  /** Counts and hands on every event until `close`. */
  async run(): Promise<void> {
    for await (const event of this.#subscription) {
      switch (event.type) {
        case 'template.rendered':
          this.renders++;
          this.#recent.push({ config: event.haproxyConfig, version: event.storeVersion });
          if (this.#recent.length > RECENT_RENDERS) this.#recent.shift();
          this.#checksums.delete(event.checksum);
          this.#checksums.set(event.checksum, event.storeVersion);
          if (this.#checksums.size > RECENT_CHECKSUMS) this.#checksums.delete(this.#checksums.keys().next().value as string);
          this.#firstRender.resolve();
          this.#handlers.rendered(event.storeVersion);
          break;
        case 'reconciliation.failed':
          this.failures++;
          this.lastFailure = `${event.phase}: ${event.error}`;
          this.#firstRender.reject(new Error(`the initial render failed: ${this.lastFailure}`));
          this.#handlers.failed();
          break;
        case 'deployment.completed':
          this.#deployed(event);
          break;
        default: {
          const unreachable: never = event;
          throw new Error(`unexpected event ${String(unreachable)}`);
        }
      }
    }
  }

  #deployed(event: EventOf<'deployment.completed'>): void {
    if (event.outcome === 'failure') {
      this.deployments.failed++;
      this.lastDeployFailure = event.error ?? event.kind;
      return;
    }
    if (event.kind === 'reload') this.deployments.reloads++;
    else if (event.kind === 'runtime') this.deployments.runtime++;
    else {
      // Nothing was sent to HAProxy: proves nothing about what it serves.
      this.deployments.skipped++;
      return;
    }
    const version = this.#checksums.get(event.checksum);
    if (version === undefined) return;
    this.#firstDeploy.resolve();
    this.#handlers.deployed?.(version);
  }

  close(): void {
    this.#subscription.close();
  }
}

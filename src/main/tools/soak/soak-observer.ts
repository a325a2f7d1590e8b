// The soak's view of the bus (SoakObserver): counts renders and failures, resolves once the
// first render is in, hands each render's store version and each failure to the soak, and
// remembers the last few renders so that a written config can be traced to its store version.
// Lossy, so observing never causes a critical drop.
// Subscribes: template.rendered, reconciliation.failed
import type { EventBus, Subscription } from '../../bus/event-bus.js';
import { deferred } from '../../core/async.js';
import type { ControllerEvent, EventOf } from '../../events/events.js';

type ObservedEvent = EventOf<'template.rendered' | 'reconciliation.failed'>;

export interface SoakObserverHandlers {
  rendered(storeVersion: number): void;
  failed(): void;
}

/** Renders remembered for `versionOf`: the OutputWriter writes the newest, so a few suffice. */
const RECENT_RENDERS = 8;

export class SoakObserver {
  renders = 0;
  failures = 0;
  lastFailure = '';
  readonly #subscription: Subscription<ObservedEvent>;
  readonly #handlers: SoakObserverHandlers;
  readonly #firstRender = deferred();
  /** Newest last; bounded by RECENT_RENDERS. */
  readonly #recent: { readonly config: string; readonly version: number }[] = [];

  constructor(bus: EventBus<ControllerEvent>, handlers: SoakObserverHandlers) {
    this.#handlers = handlers;
    this.#subscription = bus.subscribe('soak-observer', { types: ['template.rendered', 'reconciliation.failed'], lossy: true, bufferSize: 10_000 });
  }

  /** Resolves with the first render; rejects if a reconciliation fails before any render. */
  get firstRender(): Promise<void> {
    return this.#firstRender.promise;
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
          this.#firstRender.resolve();
          this.#handlers.rendered(event.storeVersion);
          break;
        case 'reconciliation.failed':
          this.failures++;
          this.lastFailure = `${event.phase}: ${event.error}`;
          this.#firstRender.reject(new Error(`the initial render failed: ${this.lastFailure}`));
          this.#handlers.failed();
          break;
        default: {
          const unreachable: never = event;
          throw new Error(`unexpected event ${String(unreachable)}`);
        }
      }
    }
  }

  close(): void {
    this.#subscription.close();
  }
}

// The load test's view of the bus (FloodObserver): counts triggers, renders and failures while
// the flood is measured, records render times, resolves once the first render is in and once a
// render covers the flood's last change (freshness). Lossy, so measuring never causes a drop.
// Subscribes: reconciliation.triggered, template.rendered, reconciliation.failed
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import type { EventBus, Subscription } from '../../bus/event-bus.js';
import { deferred } from '../../core/async.js';
import type { ControllerEvent, EventOf } from '../../events/events.js';
import { toMicros } from './units.js';

type ObservedEvent = EventOf<'reconciliation.triggered' | 'template.rendered' | 'reconciliation.failed'>;

/** The load test's view of the bus: counts triggers and renders, and spots the fresh render. */
export class FloodObserver {
  /** Counters and the render histogram only move while this is set (the flood and its settling). */
  counting = false;
  triggers = 0;
  renders = 0;
  failures = 0;
  lastFailure = '';
  /** Microseconds. */
  readonly renderMs: RecordableHistogram = createHistogram();
  readonly #subscription: Subscription<ObservedEvent>;
  readonly #firstRender = deferred();
  readonly #fresh = deferred();
  #freshVersion = Number.POSITIVE_INFINITY;
  #freshAt: number | undefined;

  constructor(bus: EventBus<ControllerEvent>) {
    // Lossy, so measuring can never cause a critical drop; large enough never to drop.
    this.#subscription = bus.subscribe('loadtest-observer', {
      types: ['reconciliation.triggered', 'template.rendered', 'reconciliation.failed'],
      lossy: true,
      bufferSize: 100_000,
    });
  }

  /** Resolves with the first successful render; rejects if the first reconciliation fails. */
  get firstRender(): Promise<void> {
    return this.#firstRender.promise;
  }

  /** Resolves with the first render of `expectVersion`'s version or later. */
  get fresh(): Promise<void> {
    return this.#fresh.promise;
  }

  /** When (performance.now) the fresh render was seen. */
  get freshAt(): number | undefined {
    return this.#freshAt;
  }

  /** Must be called synchronously after the last change, before its render can run. */
  expectVersion(version: number): void {
    this.#freshVersion = version;
  }

  async run(): Promise<void> {
    for await (const event of this.#subscription) this.#see(event);
  }

  close(): void {
    this.#subscription.close();
  }

  #see(event: ObservedEvent): void {
    switch (event.type) {
      case 'reconciliation.triggered':
        if (this.counting) this.triggers++;
        return;
      case 'template.rendered':
        this.#firstRender.resolve();
        if (this.counting) {
          this.renders++;
          this.renderMs.record(toMicros(event.durationMs));
        }
        if (this.#freshAt === undefined && event.storeVersion >= this.#freshVersion) {
          this.#freshAt = performance.now();
          this.#fresh.resolve();
        }
        return;
      case 'reconciliation.failed':
        if (this.counting) this.failures++;
        this.lastFailure = `${event.phase}: ${event.error}`;
        this.#firstRender.reject(new Error(`the initial render failed: ${this.lastFailure}`));
        return;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  }
}


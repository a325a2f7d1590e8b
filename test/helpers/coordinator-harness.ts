// A Coordinator over a real bus and a fake pipeline, with a fake clock, for the Coordinator tests.
// A test file ends the current harness's term after each test with `afterEach(endHarness)`.
import { vi } from 'vitest';
import type { Logger } from 'pino';
import { Coordinator } from '../../src/main/reconcile/coordinator.js';
import { EventBus, type DropInfo } from '../../src/main/bus/event-bus.js';
import type { ControllerEvent, EventOf, EventType } from '../../src/main/events/events.js';
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { waitUntil } from './async.js';
import { FakeClock } from './fake-clock.js';
import { trigger } from './events.js';
import { FakePipeline, pipelineResult } from './fake-pipeline.js';
import { silentLogger } from './loggers.js';

const OUTPUT_TYPES: readonly EventType[] = ['reconciliation.started', 'template.rendered', 'reconciliation.failed', 'reconciliation.completed'];

export interface HarnessOptions {
  readonly logger?: Logger;
  readonly pipeline?: FakePipeline;
  readonly mailboxSize?: number;
  readonly onDrop?: (info: DropInfo) => void;
}

export class Harness {
  readonly bus: EventBus<ControllerEvent>;
  readonly pipeline: FakePipeline;
  readonly storeProvider = new StoreProvider();
  readonly publishSpy;
  readonly clock = new FakeClock();
  readonly coordinator: Coordinator;
  controller = new AbortController();
  running: Promise<void> | undefined;

  constructor(options: HarnessOptions = {}) {
    this.bus = new EventBus<ControllerEvent>({ logger: silentLogger(), ...(options.onDrop === undefined ? {} : { onDrop: options.onDrop }) });
    this.publishSpy = vi.spyOn(this.bus, 'publish');
    this.pipeline = options.pipeline ?? new FakePipeline();
    this.coordinator = new Coordinator({
      eventBus: this.bus,
      pipeline: this.pipeline,
      storeProvider: this.storeProvider,
      logger: options.logger ?? silentLogger(),
      clock: this.clock,
      ...(options.mailboxSize === undefined ? {} : { mailboxSize: options.mailboxSize }),
    });
  }

  /** Everything published on the bus, by anyone. */
  get published(): ControllerEvent[] {
    return this.publishSpy.mock.calls.map(([event]) => event);
  }

  /** What the Coordinator published. */
  get outputs(): ControllerEvent[] {
    return this.published.filter((e) => OUTPUT_TYPES.includes(e.type));
  }

  ofType<T extends EventType>(type: T): EventOf<T>[] {
    return this.published.filter((e): e is EventOf<T> => e.type === type);
  }

  /** Starts the bus and a leadership term, and waits until the Coordinator has subscribed. */
  async startTerm(): Promise<void> {
    this.bus.start();
    this.controller = new AbortController();
    this.running = this.coordinator.start(this.controller.signal);
    await this.coordinator.whenReady();
  }

  async endTerm(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  publish(event: ControllerEvent): number {
    return this.bus.publish(event);
  }

  waitForCompleted(n: number): Promise<void> {
    return waitUntil(() => this.ofType('reconciliation.completed').length >= n, `${n} reconciliation.completed`);
  }

  /** Publishes a trigger, lets the pipeline succeed with `result`, and waits for completion. */
  async render(result: PipelineResult = pipelineResult(), t = trigger()): Promise<PipelineResult> {
    const calls = this.pipeline.callCount;
    const completed = this.ofType('reconciliation.completed').length;
    this.publish(t);
    await this.pipeline.waitForCalls(calls + 1);
    this.pipeline.call(calls).result.resolve(result);
    await this.waitForCompleted(completed + 1);
    return result;
  }

  /** Publishes a trigger and returns the baseline the pipeline was called with (left pending). */
  async nextBaseline(): Promise<unknown> {
    const calls = this.pipeline.callCount;
    this.publish(trigger());
    await this.pipeline.waitForCalls(calls + 1);
    return this.pipeline.call(calls).options?.baseline;
  }
}

let current: Harness | undefined;

export function harness(options: HarnessOptions = {}): Harness {
  current = new Harness(options);
  return current;
}

/** Ends the term of the harness the last test made, and forgets it. */
export async function endHarness(): Promise<void> {
  current?.controller.abort();
  await current?.running;
  current = undefined;
}

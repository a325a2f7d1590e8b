// Engine: assembles the main-thread controller from one options object (the bus, the stores, the
// Reconciler, the Coordinator, the pipeline, the watchers of its sources, an elector and the
// leader-only components) and runs it under one AbortSignal.
// Start-up: the bus starts and the Reconciler subscribes; sources list into the stores through
// the watchers, which publish `index.synchronized` once every initial list is in (without
// sources the stores are the caller's, and the engine publishes it); then the elector campaigns.
// On becoming leader: pause the bus, publish `leader.became`, start the leader-only components
// under a term signal, wait until each has subscribed, start the bus (the `became_leader`
// trigger reaches the Coordinator). On losing it: publish `leader.lost` and abort the term.
import type { Logger } from 'pino';
import type { TemplateSetSource } from '../worker/protocol.js';
import { EventBus, type DropInfo } from './bus/event-bus.js';
import { deferred } from './core/async.js';
import { systemClock, type Clock } from './core/clock.js';
import { StartupError } from './core/errors.js';
import { defaultLogger } from './core/logger.js';
import { newEvent, type ControllerEvent } from './events/events.js';
import { SingleReplicaElector, type Elector } from './leadership/elector.js';
import { InlinePipeline } from './pipeline/inline-pipeline.js';
import type { PipelineExecutor } from './pipeline/pipeline.js';
import { PoolPipeline } from './pipeline/pool/pool-pipeline.js';
import { Coordinator, type CoordinatorOptions } from './reconcile/coordinator.js';
import { Reconciler } from './reconcile/reconciler.js';
import type { Source } from './sources/source.js';
import { WatcherSet } from './sources/watcher-set.js';
import type { StoreCheck } from './sources/watcher.js';
import { StoreProvider } from './stores/store-provider.js';

/** A component that runs on the leader only, one term at a time (the Coordinator is one). */
export interface LeaderComponent {
  /** Subscribes (leader-only) and works until `term` aborts; a fresh call is a fresh term. */
  start(term: AbortSignal): Promise<void>;
  /** Resolves once the running term has subscribed. */
  whenReady(): Promise<void>;
  /** False until the component has done what makes the leader ready (a first config written). */
  readonly ready?: boolean;
}

export interface EngineOptions {
  readonly templateSet: TemplateSetSource;
  /**
   * The executor: `'pool'` renders on worker threads (the product), `'inline'` on the main thread
   * (baseline and tests), or any PipelineExecutor the caller owns.
   * @default 'pool'
   */
  readonly pipeline?: 'pool' | 'inline' | PipelineExecutor;
  /** Worker threads of a `'pool'` pipeline. @default min(2, cores) */
  readonly threads?: number;
  /** A `'pool'` render running longer fails and its worker is replaced. @default 30000 */
  readonly renderTimeoutMs?: number;
  /**
   * Where objects come from. With sources, watchers fill the stores; without, the stores are the
   * caller's to fill before `start` (and to announce changes on the bus).
   */
  readonly sources?: readonly Source[];
  /** Stores to reconcile; by default, empty stores for the template set's watched resources. */
  readonly stores?: StoreProvider;
  /** A store's own check of the objects its source delivers, by store name (with sources). */
  readonly storeChecks?: Readonly<Record<string, StoreCheck>>;
  /** @default a SingleReplicaElector: always the leader */
  readonly elector?: Elector;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** The objects the render gate takes out of renders (gate/object-exclusions.ts). @default none */
  readonly exclusions?: CoordinatorOptions['exclusions'];
  /** Passed to the bus. @default 1000 */
  readonly preStartBufferSize?: number;
  readonly onDrop?: (info: DropInfo) => void;
}

export interface Readiness {
  /** Every watcher has its initial list. */
  readonly synchronized: boolean;
  readonly leader: boolean;
  readonly ready: boolean;
}

/** What `/healthz` reports: false once a component the engine runs has stopped for good. */
export interface Liveness {
  readonly alive: boolean;
  /** Component → why it stopped, for the components that did. */
  readonly stopped?: Readonly<Record<string, string>>;
}

export class Engine {
  readonly bus: EventBus<ControllerEvent>;
  readonly stores: StoreProvider;
  readonly reconciler: Reconciler;
  readonly coordinator: Coordinator;
  readonly pipeline: PipelineExecutor;
  readonly elector: Elector;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Set when the engine has sources. */
  readonly watchers: WatcherSet | undefined;
  readonly #sources: readonly Source[];
  /** The watched resources, as the template set declares them. */
  readonly #definitions: TemplateSetSource['stores'];
  readonly #leaderComponents: LeaderComponent[];
  /** The pipeline the engine created, and so destroys in `close`. */
  readonly #ownedPool: PoolPipeline | undefined;
  #started = deferred<void>();
  #running = false;
  #ran = false;
  #synchronized = false;
  /** Components that ended or failed while the engine ran on, by name (see `liveness`). */
  readonly #stopped = new Map<string, string>();
  /** Aborted once the running `start` is stopping. */
  #stopSignal: AbortSignal | undefined;
  /** The current leadership term, while leading. */
  #term: { readonly controller: AbortController; readonly done: Promise<unknown> } | undefined;
  /** The last term ended: its leader components' start promises, settled once they stopped. */
  #endingTerm: Promise<unknown> = Promise.resolve();

  /** Creates the pipeline (a pool waits for its workers) and wires the components. */
  static async create(options: EngineOptions): Promise<Engine> {
    const logger = options.logger ?? defaultLogger();
    const clock = options.clock ?? systemClock;
    const choice = options.pipeline ?? 'pool';
    let pipeline: PipelineExecutor;
    let owned: PoolPipeline | undefined;
    if (choice === 'pool') {
      owned = await PoolPipeline.create({
        templateSet: options.templateSet,
        logger,
        clock,
        ...(options.threads === undefined ? {} : { threads: options.threads }),
        ...(options.renderTimeoutMs === undefined ? {} : { renderTimeoutMs: options.renderTimeoutMs }),
      });
      pipeline = owned;
    } else if (choice === 'inline') {
      pipeline = new InlinePipeline({ templateSet: options.templateSet });
    } else {
      pipeline = choice;
    }
    return new Engine(options, pipeline, owned, logger, clock);
  }

  private constructor(options: EngineOptions, pipeline: PipelineExecutor, owned: PoolPipeline | undefined, logger: Logger, clock: Clock) {
    this.logger = logger;
    this.clock = clock;
    this.pipeline = pipeline;
    this.#ownedPool = owned;
    this.elector = options.elector ?? new SingleReplicaElector();
    this.stores = options.stores ?? new StoreProvider(options.templateSet.stores);
    this.bus = new EventBus<ControllerEvent>({
      logger,
      ...(options.preStartBufferSize === undefined ? {} : { preStartBufferSize: options.preStartBufferSize }),
      ...(options.onDrop === undefined ? {} : { onDrop: options.onDrop }),
    });
    this.reconciler = new Reconciler(this.bus, logger, clock);
    this.coordinator = new Coordinator({
      eventBus: this.bus,
      pipeline,
      storeProvider: this.stores,
      logger,
      clock,
      ...(options.exclusions === undefined ? {} : { exclusions: options.exclusions }),
    });
    this.#leaderComponents = [this.coordinator];
    this.#sources = options.sources ?? [];
    this.#definitions = options.templateSet.stores;
    this.watchers =
      this.#sources.length === 0
        ? undefined
        : new WatcherSet({ definitions: options.templateSet.stores, stores: this.stores, bus: this.bus, clock, logger, ...(options.storeChecks === undefined ? {} : { checks: options.storeChecks }) });
  }

  /** The worker pool, when the engine created one (`pipeline: 'pool'`). */
  get pool(): PoolPipeline | undefined {
    return this.#ownedPool;
  }

  /** True once the running `start` is stopping for good (not merely handing leadership over). */
  get stopping(): boolean {
    return this.#stopSignal?.aborted ?? false;
  }

  get isLeader(): boolean {
    return this.#term !== undefined;
  }

  /** What `/readyz` reports: synchronized, and on the leader every leader component ready. */
  readiness(): Readiness {
    const leader = this.isLeader;
    const componentsReady = this.#leaderComponents.every((c) => c.ready !== false);
    return { synchronized: this.#synchronized, leader, ready: this.#synchronized && (!leader || componentsReady) };
  }

  /**
   * What `/healthz` reports: not alive once the engine's run has ended, or once a source, the
   * Reconciler or a leader component stopped (or failed) while the engine kept running.
   */
  liveness(): Liveness {
    const stopped = new Map(this.#stopped);
    if (this.#ran && !this.#running) stopped.set('engine', 'the engine has stopped');
    return stopped.size === 0 ? { alive: true } : { alive: false, stopped: Object.fromEntries(stopped) };
  }

  /** Adds a leader-only component (render gate, deployer, output writer). Call before `start`. */
  addLeaderComponent(component: LeaderComponent): void {
    if (this.#running) throw new Error('leader components must be added before the engine starts');
    this.#leaderComponents.push(component);
  }

  /**
   * Runs the controller until `signal` aborts, then resolves once every component has stopped.
   * Rejects when a source cannot work at all (after stopping everything else).
   */
  async start(signal: AbortSignal): Promise<void> {
    // The Reconciler subscribes once, in its constructor, and unsubscribes when its run ends: an
    // engine therefore runs once. Create a new one to run again.
    if (this.#running || this.#ran) throw new Error(this.#running ? 'the engine is already running' : 'an engine runs once; create a new one');
    this.#running = true;
    this.#ran = true;
    // Aborted by the caller, or by a source that failed for good.
    const stop = new AbortController();
    this.#stopSignal = stop.signal;
    const onAbort = (): void => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) stop.abort(signal.reason);
    let fatal: unknown;
    const running: Promise<unknown>[] = [];
    try {
      this.bus.start();
      running.push(this.reconciler.start(stop.signal).then(() => this.#endedEarly('reconciler', stop.signal)));
      const watchers = this.watchers;
      if (stop.signal.aborted) {
        // Stopped before it began: nothing to list, nothing to announce.
      } else if (watchers === undefined) {
        this.bus.publish(newEvent('index.synchronized', { resourceCounts: this.stores.counts() }, undefined, this.clock));
      } else {
        for (const source of this.#sources) {
          running.push(
            source.run(this.#definitions, watchers, stop.signal).then(() => this.#endedEarly(`source ${source.kind}`, stop.signal), (error: unknown) => {
              fatal ??= error;
              // A StartupError says all in one line; anything else is a bug worth its stack.
              this.logger.error({ ...(error instanceof StartupError ? { reason: error.message } : { err: error }), source: source.kind }, 'source failed');
              stop.abort(error);
            }),
          );
        }
        await Promise.race([watchers.whenSynchronized(), aborted(stop.signal)]);
      }
      if (!stop.signal.aborted) {
        this.#synchronized = true;
        running.push(
          this.elector.run({ onBecameLeader: () => this.#becomeLeader(), onLostLeadership: (reason) => this.#loseLeadership(reason) }, stop.signal),
        );
        this.#started.resolve();
      }
      await Promise.all(running);
      // Stopped: wait for the leader components too (the elector may have ended the term
      // already), so nothing writes after start resolves.
      await this.#loseLeadership('stopping');
      await this.#endingTerm;
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.watchers?.close();
      this.#running = false;
      this.#synchronized = false;
      this.#started = deferred<void>();
    }
    if (fatal !== undefined) throw fatal;
  }

  /** Resolves once the running `start` has every initial list and has begun campaigning. */
  whenStarted(): Promise<void> {
    return this.#started.promise;
  }

  /** Destroys the pipeline if the engine created it. Call after `start` has resolved. */
  async close(): Promise<void> {
    await this.#ownedPool?.destroy();
  }

  #becomeLeader(): void {
    if (this.#term !== undefined) return;
    const controller = new AbortController();
    // Buffer everything until every leader component has subscribed, so none misses the
    // `became_leader` trigger or an event published meanwhile.
    this.bus.pause();
    this.bus.publish(newEvent('leader.became', { identity: this.elector.identity }, undefined, this.clock));
    const components = [...this.#leaderComponents];
    // The previous term's components finish first (a deployment in flight, a write): two terms of
    // one component never overlap, so an ending term cannot undo what the new one set up.
    const started = this.#endingTerm.then(() =>
      controller.signal.aborted
        ? []
        : components.map((c) =>
            c.start(controller.signal).catch((error: unknown) => {
              if (!controller.signal.aborted) this.#componentStopped(c.constructor.name, `failed: ${(error as Error).message}`);
              throw error;
            }),
          ),
    );
    const done = started.then((runs) => Promise.allSettled(runs));
    this.#term = { controller, done };
    this.logger.info({ identity: this.elector.identity }, 'became leader');
    void started.then(() => Promise.race([Promise.all(components.map((c) => c.whenReady())), aborted(controller.signal)])).then(() => this.bus.start());
  }

  /** A component whose run is meant to last until `signal` aborts returned before it did. */
  #endedEarly(component: string, signal: AbortSignal): void {
    if (!signal.aborted) this.#componentStopped(component, 'ended while the engine was running');
  }

  #componentStopped(component: string, reason: string): void {
    if (this.#stopped.has(component)) return;
    this.#stopped.set(component, reason);
    this.logger.error({ component, reason }, 'a component stopped for good; /healthz fails');
  }

  /** Ends the term; resolves once its leader components have stopped (a write in progress finishes). */
  #loseLeadership(reason: string): Promise<unknown> {
    const term = this.#term;
    if (term === undefined) return Promise.resolve();
    this.#term = undefined;
    this.bus.publish(newEvent('leader.lost', { identity: this.elector.identity, reason }, undefined, this.clock));
    this.logger.info({ identity: this.elector.identity, reason }, 'leadership lost');
    term.controller.abort(new Error(`leadership lost: ${reason}`));
    this.#endingTerm = term.done;
    return term.done;
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

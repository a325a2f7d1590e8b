// Deployer (leader only): brings every HAProxy instance to the newest render: slot and map changes
// at once through the Runtime API, anything else by a paced reload of a render the gate did not
// refuse. One InstanceDeployer per DeployTarget applies the rules (see instance-deployer.ts): the
// single local HAProxy of `run --haproxy` is a fleet of one, the agents of `run --agents` are
// many. Every instance gets the same renders and verdicts, so runtime changes reach all at once,
// reloads are paced per instance, and the gate's refusal holds reloads on every one; instances
// never wait for each other (a remote target bounds its own concurrency and time). The fleet's
// instance set may change during a term (`setTargets`, for discovered Pods): a joining instance
// replays the term's renders and verdicts (RenderReplay) and so gets a full sync of the newest
// render the gate did not refuse; a leaving one gets nothing more and is no longer counted.
// Instances that run the same base share one diff of each new render, and one runtime view of it
// (SharedDiffs): the main thread does that work once, not once per instance, before the sends.
// Subscribes (in start, leader-only): template.rendered, rendergate.completed,
//   drift.prevention.triggered; resource.index.updated through EndpointLatency
// Publishes: deployment.completed, one per instance outcome, in the correlation of what caused it
//   (in fleet mode with the instances' states counted in `fleet`)
import type { Logger } from 'pino';
import type { EventBus } from '../bus/event-bus.js';
import { deferred } from '../core/async.js';
import { every, systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import { newEvent, type ControllerEvent, type EventFields } from '../events/events.js';
import type { DiffOptions } from './config-diff.js';
import type { DeployTarget } from './deploy-target.js';
import { endpointLatencyFor, type EndpointLatency } from './endpoint-latency.js';
import { InstanceDeployer, type DeployerInput, type InstanceState, type RetryOptions } from './instance-deployer.js';
import { RenderReplay } from './render-replay.js';
import { RuntimeRound } from './runtime-round.js';
import { SharedDiffs } from './shared-diffs.js';

export type { InstanceState, RetryOptions } from './instance-deployer.js';

export interface DeployerOptions {
  readonly bus: EventBus<ControllerEvent>;
  /** One HAProxy (`run --haproxy`). Give this or `targets`. */
  readonly target?: DeployTarget;
  /**
   * A fleet (`run --agents`): one instance per target, each `deployment.completed` carries `fleet`.
   * May be empty when `setTargets` fills it later (`run --haproxy-pods`).
   */
  readonly targets?: readonly DeployTarget[];
  /** @default systemClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Least time from the end of one reload to the start of the next, per instance. @default 2000 */
  readonly minDeploymentIntervalMs?: number;
  /**
   * The maps directory the config names (`outputPathsIn(out).mapsDir`): runtime operations name
   * a map by its absolute path. @default '/etc/haproxy/maps'
   */
  readonly mapsDir?: string;
  /** Further diff settings (runtime files, versioned map threshold). */
  readonly diff?: Omit<DiffOptions, 'mapsDir'>;
  /**
   * Reload only a render the gate has judged and not refused. Turn off only without a RenderGate
   * (HAProxy's own reload check is then the only one). @default true
   */
  readonly awaitGateVerdict?: boolean;
  /**
   * How long a reload waits for the gate's verdict on its own render when renders keep replacing
   * it; past that it deploys the newest render that passed meanwhile. @default 10000
   */
  readonly verdictWaitLimitMs?: number;
  /** Retry a failed deployment of an instance with capped, jittered backoff (fleet mode). @default none */
  readonly retry?: RetryOptions;
  /**
   * How often each instance's own report of what it runs is compared with what the term believes
   * (`currentChecksum`); a mismatch gets the whole render again. @default 5000 with `targets`, else off
   */
  readonly probeIntervalMs?: number;
  /** Receives the endpoint-change-to-applied latency, to the last instance that applied it, in seconds. */
  readonly onEndpointChangeApplied?: (seconds: number) => void;
  /** The store provider's version now (`() => engine.stores.version`); needed for the latency. */
  readonly storeVersion?: () => number;
  /** Receives the instances' states counted afresh whenever `setTargets` changed the fleet. */
  readonly onFleetChanged?: (counts: FleetCounts) => void;
  /** The store whose updates are endpoint changes. @default 'endpointslices' */
  readonly endpointStore?: string;
}

/** Events kept for an instance still reading its target's checksum; beyond it the oldest render goes. */
const MAX_WAITING = 256;

export type FleetCounts = Readonly<Record<InstanceState, number>>;

/** One instance of a changing fleet: a stable id (e.g. `namespace/name@podIP`) and its target. */
export interface FleetMember {
  readonly id: string;
  readonly target: DeployTarget;
}

/** The running term, while `start` runs. */
interface Term {
  readonly signal: AbortSignal;
  /** Instances still reading what their target runs, with the events waiting for them. */
  readonly waiting: Map<InstanceDeployer, DeployerInput[]>;
  readonly reads: Set<Promise<void>>;
}

export class Deployer {
  readonly #bus: EventBus<ControllerEvent>;
  readonly #clock: Clock;
  readonly #latency: EndpointLatency | undefined;
  /** By id: `String(index)` for the targets given at construction, the member id after `setTargets`. */
  readonly #instances = new Map<string, InstanceDeployer>();
  readonly #fleet: boolean;
  readonly #probeIntervalMs: number | undefined;
  readonly #create: (target: DeployTarget, id: string) => InstanceDeployer;
  readonly #replay = new RenderReplay();
  /** Instances on the same base share one diff of each new render. */
  readonly #diffs: SharedDiffs;
  readonly #logger: Logger;
  readonly #onFleetChanged: ((counts: FleetCounts) => void) | undefined;
  #term: Term | undefined;
  /** The newest store version each instance applied (this term). */
  readonly #applied = new Map<InstanceDeployer, number>();
  /** Instances whose probe is still waiting for an answer: never two at once. */
  readonly #probing = new Set<InstanceDeployer>();
  #ready = deferred<void>();

  constructor(options: DeployerOptions) {
    this.#bus = options.bus;
    this.#clock = options.clock ?? systemClock;
    const logger = (options.logger ?? defaultLogger()).child({ component: 'deployer' });
    this.#logger = logger;
    this.#onFleetChanged = options.onFleetChanged;
    const minDeploymentIntervalMs = options.minDeploymentIntervalMs ?? 2000;
    if (!Number.isFinite(minDeploymentIntervalMs) || minDeploymentIntervalMs < 0) {
      throw new TypeError(`minDeploymentIntervalMs must be a non-negative number, got ${String(options.minDeploymentIntervalMs)}`);
    }
    const targets = options.targets ?? (options.target === undefined ? [] : [options.target]);
    if ((options.target === undefined) === (options.targets === undefined)) throw new TypeError('a Deployer needs either target or targets');
    this.#fleet = options.targets !== undefined;
    this.#probeIntervalMs = options.probeIntervalMs ?? (this.#fleet ? 5000 : undefined);
    const diff: DiffOptions = { ...options.diff, ...(options.mapsDir === undefined ? {} : { mapsDir: options.mapsDir }) };
    const diffs = new SharedDiffs(diff);
    const round = new RuntimeRound(this.#clock);
    this.#diffs = diffs;
    this.#create = (target, id) => {
      const instance: InstanceDeployer = new InstanceDeployer({
        target,
        clock: this.#clock,
        logger: this.#fleet ? logger.child({ instance: id }) : logger,
        minDeploymentIntervalMs,
        diff,
        diffs,
        awaitGateVerdict: options.awaitGateVerdict ?? true,
        verdictWaitLimitMs: options.verdictWaitLimitMs ?? 10_000,
        publish: (fields, cause) => this.#publish(fields, cause),
        onApplied: (storeVersion) => this.#onApplied(instance, storeVersion),
        ...(options.retry === undefined ? {} : { retry: options.retry }),
        round,
      });
      return instance;
    };
    for (const [index, target] of targets.entries()) this.#instances.set(String(index), this.#create(target, String(index)));
    this.#latency = endpointLatencyFor(options, this.#clock);
  }

  /** True once a deployment succeeded on some instance (in this or an earlier term). */
  get ready(): boolean {
    for (const instance of this.#instances.values()) if (instance.ready) return true;
    return false;
  }

  /** The checksum of what the first instance runs, as far as this term knows. */
  get deployedChecksum(): string | undefined {
    return this.#first()?.deployedChecksum;
  }

  /** True while renders are held behind a refused one. */
  get latched(): boolean {
    return this.#first()?.latched ?? false;
  }

  /** How many instances stand where. */
  get fleetCounts(): FleetCounts {
    const counts: Record<InstanceState, number> = { in_sync: 0, behind: 0, unreachable: 0, fenced: 0 };
    for (const instance of this.#instances.values()) counts[instance.state]++;
    return counts;
  }

  /** The ids of the instances deployed to now. */
  get instanceIds(): readonly string[] {
    return [...this.#instances.keys()];
  }

  /**
   * Makes the fleet exactly `members`, keyed by id (a fleet Deployer only). An id not seen before
   * becomes an instance; during a term it first reads what its target runs, then gets the newest
   * render the gate did not refuse, in full. An id no longer listed gets no more deployments (one
   * in flight finishes) and is no longer counted. The target of an id already known is kept.
   */
  setTargets(members: readonly FleetMember[]): void {
    if (!this.#fleet) throw new TypeError('setTargets needs a fleet Deployer (targets, not target)');
    const wanted = new Map<string, DeployTarget>();
    for (const member of members) {
      if (wanted.has(member.id)) throw new TypeError(`setTargets lists ${JSON.stringify(member.id)} twice`);
      wanted.set(member.id, member.target);
    }
    let changed = false;
    for (const [id, instance] of [...this.#instances]) {
      if (wanted.has(id)) continue;
      changed = true;
      this.#instances.delete(id);
      this.#applied.delete(instance);
      this.#probing.delete(instance);
      this.#term?.waiting.delete(instance);
      instance.end().catch((error: unknown) => this.#logger.error({ err: error, instance: id }, 'ending a dropped instance failed'));
    }
    for (const [id, target] of wanted) {
      if (this.#instances.has(id)) continue;
      changed = true;
      const instance = this.#create(target, id);
      this.#instances.set(id, instance);
      if (this.#term !== undefined) this.#join(this.#term, instance, [...this.#replay.events()]);
    }
    if (changed) this.#onFleetChanged?.(this.fleetCounts);
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  async start(term: AbortSignal): Promise<void> {
    this.#latency?.clear();
    this.#applied.clear();
    this.#replay.clear();
    this.#diffs.clear();
    const inbox = this.#bus.subscribe('deployer', {
      types: ['template.rendered', 'rendergate.completed', 'drift.prevention.triggered'],
      leaderOnly: true,
      bufferSize: 256,
      // Only the newest of consecutive renders can be deployed; older ones never need their memory.
      merge: (last, incoming) => (last.type === 'template.rendered' && incoming.type === 'template.rendered' ? 'replace' : 'append'),
    });
    const watching = this.#latency?.watch(this.#bus, term);
    const stopProbing = this.#probeIntervalMs === undefined ? undefined : every(this.#clock, this.#probeIntervalMs, () => {
      for (const instance of this.#instances.values()) {
        if (this.#probing.has(instance)) continue;
        this.#probing.add(instance);
        void instance.probe().finally(() => this.#probing.delete(instance));
      }
    }, { unref: true });
    const current: Term = { signal: term, waiting: new Map(), reads: new Set() };
    this.#term = current;
    for (const instance of this.#instances.values()) this.#join(current, instance, []);
    this.#ready.resolve();
    try {
      for (;;) {
        const event = await inbox.next(term);
        if (event === undefined) break;
        this.#replay.record(event);
        if (event.type === 'template.rendered') this.#diffs.rendered(event.checksum);
        for (const instance of this.#instances.values()) {
          const queued = current.waiting.get(instance);
          if (queued === undefined) instance.handle(event);
          else if (queued.push(event) > MAX_WAITING) {
            const oldest = queued.findIndex((e) => e.type === 'template.rendered');
            queued.splice(Math.max(0, oldest), 1);
          }
        }
      }
      await Promise.all(current.reads);
      await watching;
    } finally {
      stopProbing?.();
      inbox.close();
      // A new term may have begun meanwhile (when the caller did not wait for this one): it keeps its state.
      const latest = this.#term === current;
      if (latest) {
        this.#term = undefined;
        this.#replay.clear();
        this.#diffs.clear();
      }
      if (latest) {
        await Promise.all([...this.#instances.values()].map((instance) => instance.end()));
        if (this.#term === undefined) this.#ready = deferred<void>();
      }
    }
  }

  /**
   * Starts an instance in the term. Until it knows what its target runs, its events wait for it
   * alone: one slow or unreachable instance costs its own timeout, never the others' deployments.
   */
  #join(term: Term, instance: InstanceDeployer, backlog: DeployerInput[]): void {
    instance.begin();
    term.waiting.set(instance, backlog);
    const read = instance.readTargetChecksum().then(() => {
      const queued = term.waiting.get(instance);
      term.waiting.delete(instance);
      // Gone meanwhile (setTargets dropped it, or the term ended): nothing is sent.
      if (queued === undefined || term.signal.aborted || this.#term !== term) return;
      for (const event of queued) instance.handle(event);
    });
    term.reads.add(read);
    void read.finally(() => term.reads.delete(read));
  }

  #first(): InstanceDeployer | undefined {
    return this.#instances.values().next().value;
  }

  /** The latency is measured to the last instance that applied a change; instances out of reach are not waited for. */
  #onApplied(instance: InstanceDeployer, storeVersion: number): void {
    // An instance dropped from the fleet finishing its last deployment counts no more.
    if (![...this.#instances.values()].includes(instance)) return;
    this.#applied.set(instance, Math.max(storeVersion, this.#applied.get(instance) ?? 0));
    let lowest = Number.POSITIVE_INFINITY;
    for (const other of this.#instances.values()) {
      const state = other.state;
      if (state === 'unreachable' || state === 'fenced') continue;
      lowest = Math.min(lowest, this.#applied.get(other) ?? 0);
    }
    if (Number.isFinite(lowest) && lowest > 0) this.#latency?.applied(lowest);
  }

  #publish(fields: EventFields['deployment.completed'], cause: Parameters<typeof newEvent>[2]): void {
    this.#bus.publish(newEvent('deployment.completed', this.#fleet ? { ...fields, fleet: this.fleetCounts } : fields, cause, this.#clock));
  }
}

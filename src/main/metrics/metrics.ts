// ControllerMetrics: the controller's Prometheus metrics in a registry of their own (never
// prom-client's global one, so several engines or tests in one process never clash), with
// prom-client's default Node metrics. Recorded through methods (the metrics adapter feeds them
// from bus events) or read at scrape time from small provider interfaces.
// Every label value comes from a fixed set in this file: no host, namespace or message ever.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The Reconciler table's reasons; any other reason is counted as `other`. */
export const TRIGGER_REASONS = [
  'resource_change',
  'http_resource_change',
  'index_synchronized',
  'http_resource_accepted',
  'drift_prevention',
  'became_leader',
  'render_retry',
  'other',
] as const;
export type TriggerReasonLabel = (typeof TRIGGER_REASONS)[number];

export type Outcome = 'success' | 'failure';
export type DeploymentKind = 'runtime' | 'reload' | 'skipped';
export type RenderGateVerdict = 'ok' | 'refused' | 'unknown';
/** What an admission review was about (`other`: anything the webhook does not check, or a 400). */
export type AdmissionKind = 'Ingress' | 'Secret' | 'HTTPRoute' | 'Gateway' | 'other';
/** `timeout`: allowed past the deadline; `error`: allowed after a checker failure; `invalid`: a 400. */
export type AdmissionOutcome = 'allowed' | 'denied' | 'timeout' | 'error' | 'invalid';
const ADMISSION_KINDS: readonly AdmissionKind[] = ['Ingress', 'Secret', 'HTTPRoute', 'Gateway', 'other'];
const ADMISSION_OUTCOMES: readonly AdmissionOutcome[] = ['allowed', 'denied', 'timeout', 'error', 'invalid'];

const OUTCOMES: readonly Outcome[] = ['success', 'failure'];
const DEPLOYMENT_KINDS: readonly DeploymentKind[] = ['runtime', 'reload', 'skipped'];
const VERDICTS: readonly RenderGateVerdict[] = ['ok', 'refused', 'unknown'];
const KNOWN_REASONS: ReadonlySet<string> = new Set(TRIGGER_REASONS);

/** Durations of work that takes milliseconds to tens of seconds. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** From an endpoint change in the cluster to HAProxy serving it: 1 ms to 10 s. */
const ENDPOINT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The bus's drop counters (an EventBus). */
export interface BusCounters {
  readonly droppedCritical: number;
  readonly droppedLossy: number;
}

/** The Coordinator's counters. */
export interface CoalescingStats {
  readonly stats: { readonly coalesced: number };
}

/** Object counts per store (a StoreProvider); store names come from the template set. */
export interface ObjectCounts {
  counts(): Readonly<Record<string, number>>;
}

/** The worker pool's load (a PoolPipeline: piscina's `queueSize` and `utilization`). */
export interface PoolLoad {
  readonly queueSize: number;
  readonly utilization: number;
}

/** Problems the sources recovered from (a WatcherSet). */
export interface ProblemCount {
  readonly problems: number;
}

export interface ControllerMetricsOptions {
  readonly bus?: BusCounters;
  readonly coordinator?: CoalescingStats;
  readonly stores?: ObjectCounts;
  /** Without a pool (an inline pipeline) both pool gauges read 0. */
  readonly pool?: PoolLoad;
  /** Read at scrape time; overrides what `setLeader` recorded. */
  readonly isLeader?: () => boolean;
  readonly sourceProblems?: ProblemCount;
  /**
   * Registers prom-client's default Node metrics (CPU, memory, GC, event-loop lag).
   * @default true
   */
  readonly defaultMetrics?: boolean;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly #reconciliations: Counter<'outcome'>;
  readonly #reconciliationSeconds: Histogram;
  readonly #queueSeconds: Histogram;
  readonly #triggers: Counter<'reason'>;
  readonly #rejections: Gauge<'kind' | 'scope'>;
  readonly #leader: Gauge;
  readonly #deployments: Counter<'kind' | 'outcome'>;
  readonly #deploymentSeconds: Histogram<'kind'>;
  readonly #verdicts: Counter<'verdict'>;
  readonly #haproxyRestarts: Counter;
  readonly #oldWorkersStopped: Counter;
  readonly #endpointSeconds: Histogram;
  readonly #httpRejections: Counter;
  readonly #fleetInstances: Gauge<'state'>;
  readonly #fleetApplySeconds: Histogram<'kind'>;
  readonly #admissions: Counter<'kind' | 'verdict'>;
  readonly #admissionSeconds: Histogram;

  constructor(options: ControllerMetricsOptions = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });

    this.#reconciliations = new Counter({
      name: 'haptic_reconciliations_total',
      help: 'Reconciliations completed, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    this.#reconciliationSeconds = new Histogram({
      name: 'haptic_reconciliation_duration_seconds',
      help: 'Time from a reconciliation start to its completion (render, validation, auxiliary checks).',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#queueSeconds = new Histogram({
      name: 'haptic_reconciliation_queue_seconds',
      help: 'Time a trigger waited in the Coordinator mailbox before its reconciliation started.',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#triggers = new Counter({
      name: 'haptic_triggers_total',
      help: 'Reconciliation triggers, by reason.',
      labelNames: ['reason'],
      registers,
    });
    const coordinator = options.coordinator;
    new Counter({
      name: 'haptic_triggers_coalesced_total',
      help: 'Triggers merged into, or absorbed by, a trigger already queued.',
      registers,
      collect() {
        setCounter(this, coordinator?.stats.coalesced ?? 0);
      },
    });
    const bus = options.bus;
    new Counter({
      name: 'haptic_bus_dropped_events_total',
      help: 'Events the bus dropped for a full subscriber: critical (a component missed it) or lossy (an observer did).',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        this.inc({ kind: 'critical' }, bus?.droppedCritical ?? 0);
        this.inc({ kind: 'lossy' }, bus?.droppedLossy ?? 0);
      },
    });
    const isLeader = options.isLeader;
    this.#leader = new Gauge({
      name: 'haptic_leader',
      help: '1 while this replica leads, else 0.',
      registers,
      collect() {
        if (isLeader !== undefined) this.set(isLeader() ? 1 : 0);
      },
    });
    const stores = options.stores;
    new Gauge({
      name: 'haptic_resource_objects',
      help: 'Objects held per watched resource (store names come from the template set).',
      labelNames: ['resource'],
      registers,
      collect() {
        if (stores === undefined) return;
        this.reset();
        for (const [resource, count] of Object.entries(stores.counts())) this.set({ resource }, count);
      },
    });
    const pool = options.pool;
    new Gauge({
      name: 'haptic_pool_queue_size',
      help: 'Render tasks waiting for a worker thread.',
      registers,
      collect() {
        this.set(pool?.queueSize ?? 0);
      },
    });
    new Gauge({
      name: 'haptic_pool_utilization',
      help: 'Share of the worker pool capacity in use (0 to 1), as piscina measures it.',
      registers,
      collect() {
        this.set(pool?.utilization ?? 0);
      },
    });
    this.#deployments = new Counter({
      name: 'haptic_deployments_total',
      help: 'Deployments to HAProxy, by kind (runtime API, reload, skipped) and outcome.',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.#deploymentSeconds = new Histogram({
      name: 'haptic_deployment_duration_seconds',
      help: 'Time a deployment took, by kind.',
      labelNames: ['kind'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#rejections = new Gauge({
      name: 'haptic_rejections',
      help: 'Objects, or parts of objects (path, tls, annotation, endpoint), the object checks left out of the latest render, by store kind and scope.',
      labelNames: ['kind', 'scope'],
      registers,
    });
    this.#verdicts = new Counter({
      name: 'haptic_rendergate_verdicts_total',
      help: "Render gate verdicts (haproxy -c): ok, refused, or unknown when the check could not run.",
      labelNames: ['verdict'],
      registers,
    });
    this.#haproxyRestarts = new Counter({
      name: 'haptic_haproxy_restarts_total',
      help: 'Times the supervisor restarted HAProxy after it exited.',
      registers,
    });
    this.#oldWorkersStopped = new Counter({
      name: 'haptic_haproxy_old_workers_stopped_total',
      help: 'Draining HAProxy workers the supervisor stopped because more than maxOldWorkers were left by reloads.',
      registers,
    });
    this.#endpointSeconds = new Histogram({
      name: 'haptic_endpoint_change_to_applied_seconds',
      help: 'Time from an endpoint change in the cluster to HAProxy applying it.',
      buckets: ENDPOINT_BUCKETS,
      registers,
    });
    this.#httpRejections = new Counter({
      name: 'haptic_http_resource_rejections_total',
      help: 'HTTP resources refused because their new content did not validate.',
      registers,
    });
    this.#fleetInstances = new Gauge({
      name: 'haptic_fleet_instances',
      help: 'HAProxy instances of the fleet by state: in_sync, behind, unreachable, fenced (another leader took them).',
      labelNames: ['state'],
      registers,
    });
    this.#fleetApplySeconds = new Histogram({
      name: 'haptic_fleet_apply_seconds',
      help: 'Round trip of one request to an agent, by kind (state, runtime, files, reload).',
      labelNames: ['kind'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#admissions = new Counter({
      name: 'haptic_admission_reviews_total',
      help: 'Admission reviews answered, by kind (Ingress, Secret, other) and verdict (allowed, denied, timeout and error: allowed unchecked, invalid: a 400).',
      labelNames: ['kind', 'verdict'],
      registers,
    });
    this.#admissionSeconds = new Histogram({
      name: 'haptic_admission_duration_seconds',
      help: 'Time from an admission review arriving to its answer.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    const sourceProblems = options.sourceProblems;
    new Counter({
      name: 'haptic_source_problems_total',
      help: 'Problems sources recovered from (unparsable manifests, restarted watches).',
      registers,
      collect() {
        setCounter(this, sourceProblems?.problems ?? 0);
      },
    });

    // Every series of a fixed label set exists from the start, so rates work from the first scrape.
    for (const outcome of OUTCOMES) this.#reconciliations.inc({ outcome }, 0);
    for (const reason of TRIGGER_REASONS) this.#triggers.inc({ reason }, 0);
    for (const kind of DEPLOYMENT_KINDS) for (const outcome of OUTCOMES) this.#deployments.inc({ kind, outcome }, 0);
    for (const verdict of VERDICTS) this.#verdicts.inc({ verdict }, 0);
    for (const kind of ADMISSION_KINDS) for (const verdict of ADMISSION_OUTCOMES) this.#admissions.inc({ kind, verdict }, 0);
    this.#leader.set(0);
  }

  /** The Content-Type of `metrics()`'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text of every metric (collect callbacks run now). */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  /** The latest render's rejections (`<store kind>/<scope>` -> count); series with none are dropped. */
  setRejections(counts: Readonly<Record<string, number>>): void {
    this.#rejections.reset();
    for (const [key, count] of Object.entries(counts)) {
      const slash = key.lastIndexOf('/');
      this.#rejections.set({ kind: key.slice(0, slash), scope: key.slice(slash + 1) }, count);
    }
  }

  /** Counts a trigger; a reason outside the Reconciler table counts as `other`. */
  countTrigger(reason: string): void {
    this.#triggers.inc({ reason: KNOWN_REASONS.has(reason) ? reason : 'other' });
  }

  observeQueueTime(seconds: number): void {
    this.#queueSeconds.observe(Math.max(0, seconds));
  }

  observeReconciliation(outcome: Outcome, durationMs: number): void {
    this.#reconciliations.inc({ outcome });
    this.#reconciliationSeconds.observe(Math.max(0, durationMs) / 1000);
  }

  setLeader(leader: boolean): void {
    this.#leader.set(leader ? 1 : 0);
  }

  observeDeployment(kind: DeploymentKind, outcome: Outcome, durationMs: number): void {
    this.#deployments.inc({ kind, outcome });
    this.#deploymentSeconds.observe({ kind }, Math.max(0, durationMs) / 1000);
  }

  countRenderGateVerdict(verdict: RenderGateVerdict): void {
    this.#verdicts.inc({ verdict });
  }

  /** Called by the HAProxy supervisor each time it restarts HAProxy. */
  countHaproxyRestart(): void {
    this.#haproxyRestarts.inc();
  }

  /** Called by the HAProxy supervisor when it stops old workers past its bound. */
  countOldWorkersStopped(count: number): void {
    if (count > 0) this.#oldWorkersStopped.inc(count);
  }

  /** Called by the deployer once HAProxy applies an endpoint change. */
  observeEndpointChangeToApplied(seconds: number): void {
    this.#endpointSeconds.observe(Math.max(0, seconds));
  }

  countHttpResourceRejection(): void {
    this.#httpRejections.inc();
  }

  /** The fleet's instances by state (from `deployment.completed.fleet`). */
  setFleetInstances(counts: Readonly<Record<FleetState, number>>): void {
    for (const state of FLEET_STATES) this.#fleetInstances.set({ state }, counts[state]);
  }

  /** One request to an agent; `kind` outside the fixed set is counted as `other`. */
  observeFleetApply(kind: string, seconds: number): void {
    this.#fleetApplySeconds.observe({ kind: FLEET_REQUEST_KINDS.has(kind) ? kind : 'other' }, Math.max(0, seconds));
  }

  /** Called by the admission webhook for every review it answers. */
  observeAdmission(kind: AdmissionKind, verdict: AdmissionOutcome, seconds: number): void {
    this.#admissions.inc({ kind, verdict });
    this.#admissionSeconds.observe(Math.max(0, seconds));
  }
}

export type FleetState = 'in_sync' | 'behind' | 'unreachable' | 'fenced';
const FLEET_STATES: readonly FleetState[] = ['in_sync', 'behind', 'unreachable', 'fenced'];
const FLEET_REQUEST_KINDS: ReadonlySet<string> = new Set(['state', 'runtime', 'files', 'reload']);

/** Sets an unlabelled counter to a total kept elsewhere (read at scrape time). */
function setCounter(counter: Counter, total: number): void {
  counter.reset();
  counter.inc(Math.max(0, total));
}

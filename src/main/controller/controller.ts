// Controller: what `run` is, for embedders too. From one options object it loads the template
// set, picks the source (a manifest directory or a Kubernetes API server), the elector (one
// replica, or a Lease), assembles the Engine with its leader-only components (the output writer,
// or with HAProxy the render gate, deployer and drift monitor), serves metrics and health, and
// runs it all under one AbortSignal.
import type { Logger } from 'pino';
import type { TemplateSetSource } from '../../worker/protocol.js';
import { systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import { Engine } from '../engine.js';
import { SingleReplicaElector, type Elector } from '../leadership/elector.js';
import { join } from 'node:path';
import type { Deployer, FleetCounts, RetryOptions } from '../deploy/deployer.js';
import { addDeployComponents } from './deploy-components.js';
import { ObjectExclusions } from '../gate/object-exclusions.js';
import { HaproxyDowntime } from '../haproxy/haproxy-downtime.js';
import { HaproxyProcess } from '../haproxy/haproxy-process.js';
import { LocalHaproxyTarget } from '../haproxy/local-haproxy-target.js';
import { OutputDirectory } from '../output/output-directory.js';
import { OutputWriter } from '../output/output-writer.js';
import { agentTargetFactory, fleetTargets, type FleetOptions } from '../fleet/fleet-targets.js';
import { attachPodFleet, withHaproxyPods } from './pod-discovery.js';
import type { ManifestLimits } from '../sources/manifest/manifest-loader.js';
import { ManifestSource } from '../sources/manifest/manifest-source.js';
import { StartupError } from '../core/errors.js';
import { preflight } from './preflight.js';
import type { Source } from '../sources/source.js';
import { attachFeedback, checkFeedbackOptions, type FeedbackOptions } from './feedback.js';
import { loadOutputTemplateSet } from '../template-set/output-template-set.js';

export type SourceChoice = { readonly manifests: string } | { readonly kubeconfig: string } | { readonly inCluster: true };

export interface ControllerOptions {
  readonly source: SourceChoice;
  /** The output directory the leader keeps current (haproxy.cfg, maps/, files/, certs/). */
  readonly out: string;
  /** Watch only this namespace (Kubernetes sources; cluster-scoped resources are unaffected). */
  readonly namespace?: string;
  /** @default the bundled default set */
  readonly templates?: string;
  /** `key=value` overrides of the template set's values; each key must exist (`--set`). */
  readonly set?: readonly string[];
  /** `key=value` overrides that may add values (`--set-new`). */
  readonly setNew?: readonly string[];
  readonly threads?: number;
  /** Caps for manifest files (`--manifests`). */
  readonly limits?: ManifestLimits;
  /** Lease leader election among replicas (needs a Kubernetes API server). */
  readonly leaderElection?: LeaderElectionOptions;
  /** Start and supervise a local HAProxy on the output directory, and deploy to it. */
  readonly haproxy?: HaproxyOptions;
  /** Deploy to a fleet of agents instead (`--agents`, or Pods with `pods`); the same deploy settings as `haproxy`. */
  readonly fleet?: FleetOptions & HaproxyOptions;
  /** Ingress status addresses and Events (a Kubernetes source only; see feedback.ts). */
  readonly feedback?: FeedbackOptions;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export interface HaproxyOptions {
  /** Least time from the end of one reload to the start of the next. @default 2000 */
  readonly minDeploymentIntervalMs?: number;
  /** A deployment is forced when none completed for this long. @default 60000 */
  readonly driftIntervalMs?: number;
  /** Old HAProxy workers left draining after a reload; the oldest past it are stopped. @default 3 */
  readonly maxOldWorkers?: number;
  /** /healthz fails once HAProxy has not run for this long, every restart failing. @default 300000 */
  readonly downLimitMs?: number;
}

/** Callbacks metrics attach to components assembled before the metrics exist. */
export interface ControllerHooks {
  onHaproxyRestart?: () => void;
  onOldWorkersStopped?: (count: number) => void;
  onEndpointChangeApplied?: (seconds: number) => void;
  /** Something the controller cannot run without failed for good (HAProxy refused to start its first config). */
  onFatal?: (error: Error) => void;
  onFleetRequest?: (kind: string, seconds: number, bytesSent: number) => void;
  /** The fleet's instances changed (`--haproxy-pods`): their states counted afresh. */
  onFleetChanged?: (counts: FleetCounts) => void;
}

/** Everything `run` assembled, before it starts. */
export interface AssembledController {
  readonly engine: Engine;
  readonly templateSet: TemplateSetSource;
  readonly output: OutputDirectory;
  /** Writes `--out` without `--haproxy`. */
  readonly writer: OutputWriter | undefined;
  /** With `--haproxy`: the deployer (ready once HAProxy serves a render) and its target. */
  readonly haproxy: { readonly deployer: Deployer; readonly target: LocalHaproxyTarget; readonly downtime: HaproxyDowntime } | undefined;
  /** With `--agents`: the deployer of the fleet. */
  readonly fleet: { readonly deployer: Deployer } | undefined;
  /** Set these before the engine starts. */
  readonly hooks: ControllerHooks;
  /** Ingress status and Events components (a Kubernetes source only), for metrics. */
  readonly feedback?: ReturnType<typeof attachFeedback>;
}

/**
 * Loads the template set with the output directory's paths and default certificate (and any
 * `--set` / `--set-new` values); see output-template-set.ts.
 */
export async function loadControllerTemplateSet(options: Pick<ControllerOptions, 'out' | 'templates' | 'set' | 'setNew'>, extra: Record<string, unknown> = {}): Promise<TemplateSetSource> {
  return loadOutputTemplateSet(options.out, options.templates, { set: options.set ?? [], setNew: options.setNew ?? [] }, extra);
}

export async function assembleController(options: ControllerOptions, choose: { source?: Source; elector?: Elector } = {}): Promise<AssembledController> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? defaultLogger();
  if (options.haproxy !== undefined && options.leaderElection !== undefined) {
    throw new TypeError(
      'run --leader-elect --haproxy is refused: only the leader deploys, so a follower\'s local HAProxy would serve nothing while looking ready. Run HAProxy in a fleet instead: `haptic-reconciler agent` beside each HAProxy and `run --leader-elect --agents HOST:PORT,...`',
    );
  }
  if (options.haproxy !== undefined && options.fleet !== undefined) throw new TypeError('--haproxy and --agents exclude each other: deploy to a local HAProxy or to a fleet of agents');
  await preflight({ out: options.out, haproxy: options.haproxy !== undefined, ...(choose.source === undefined && 'manifests' in options.source ? { manifests: options.source.manifests } : {}) });
  const deploys = options.haproxy ?? options.fleet;
  // HAProxy's admin socket is where the deployer's runtime changes go (`run --haproxy`; an agent moves it under its --dir).
  const runtime = deploys === undefined ? {} : { runtimeSocket: join(options.out, 'run', 'admin.sock') };
  const templateSet = await loadControllerTemplateSet(options, runtime);
  const pods = options.fleet?.pods;
  if (pods !== undefined && 'manifests' in options.source) throw new TypeError('--haproxy-pods discovers Pods on an API server: use it with --kubeconfig or --in-cluster, not --manifests');
  const discovery = pods === undefined ? undefined : withHaproxyPods(templateSet, pods);
  if (options.feedback !== undefined) checkFeedbackOptions(options.feedback);
  const source = choose.source ?? (await sourceFor(options, clock, logger));
  const elector = choose.elector ?? (await electorFor(options, clock, logger));
  // Objects HAProxy refused, taken out of renders by the render gate.
  const exclusions = new ObjectExclusions();
  const hooks: ControllerHooks = {};
  // Built before the engine (and its worker pool) exists, so a refused fleet stops nothing half-started.
  // The epoch of a term: the Lease's transitions; a single replica has one epoch, and its sequences grow with the clock.
  const fleetContext = { out: options.out, epoch: () => elector.epoch?.() ?? 0, clock, logger, onRequest: (kind: string, seconds: number, bytes: number) => hooks.onFleetRequest?.(kind, seconds, bytes) };
  const agents = options.fleet === undefined ? undefined : pods === undefined ? fleetTargets(options.fleet, fleetContext) : [];
  const engine = await Engine.create({
    exclusions,
    templateSet: discovery?.templateSet ?? templateSet,
    ...(discovery === undefined ? {} : { storeChecks: discovery.storeChecks }),
    sources: [source],
    elector,
    clock,
    logger,
    ...(options.threads === undefined ? {} : { threads: options.threads }),
  });
  const output = new OutputDirectory(options.out);
  let feedback: ReturnType<typeof attachFeedback> | undefined;
  if (!('manifests' in options.source) && options.feedback !== undefined) {
    const { loadKubeConfig } = await import('../sources/kubernetes/kube-config.js');
    const values = templateSet.values as { gatewayControllerName?: unknown; bindAddress?: unknown };
    const gateway = { controllerName: String(values.gatewayControllerName ?? 'haptic-reconciler.io/gateway-controller'), bindAddress: String(values.bindAddress ?? '*') };
    feedback = attachFeedback(engine, loadKubeConfig(kubeConfigFrom(options.source)), { gateway, ...options.feedback }, options.leaderElection?.identity ?? 'haptic-reconciler');
  }
  if (deploys === undefined) {
    const writer = new OutputWriter({ bus: engine.bus, directory: output, clock, logger });
    engine.addLeaderComponent(writer);
    return { engine, templateSet, output, writer, haproxy: undefined, fleet: undefined, hooks, ...(feedback === undefined ? {} : { feedback }) };
  }
  let local: LocalHaproxyTarget | undefined;
  let targets: { target: LocalHaproxyTarget } | { targets: ReturnType<typeof fleetTargets>; retry: RetryOptions };
  let downtime: HaproxyDowntime | undefined;
  if (agents === undefined) {
    const haproxy = options.haproxy ?? {};
    const process = HaproxyProcess.forOutputDirectory(options.out, {
      clock,
      logger,
      onRestart: () => {
        // Called only after an exit, long after `downtime` below exists.
        downtime?.restarting();
        hooks.onHaproxyRestart?.();
      },
      onOldWorkersStopped: ({ stopped }) => hooks.onOldWorkersStopped?.(stopped),
      ...(haproxy.maxOldWorkers === undefined ? {} : { maxOldWorkers: haproxy.maxOldWorkers }),
    });
    downtime = new HaproxyDowntime({ haproxy: process, clock, ...(haproxy.downLimitMs === undefined ? {} : { limitMs: haproxy.downLimitMs }) });
    local = new LocalHaproxyTarget({
      output,
      haproxy: process,
      logger,
      onFirstStartFailed: (error) => hooks.onFatal?.(new StartupError(`HAProxy could not start its first config: ${error.message}`, { cause: error })),
    });
    targets = { target: local };
  } else {
    targets = { targets: agents, retry: {} };
  }
  const deployer = addDeployComponents(engine, {
    out: options.out,
    deploy: { ...targets, onEndpointChangeApplied: (seconds) => hooks.onEndpointChangeApplied?.(seconds), onFleetChanged: (counts) => hooks.onFleetChanged?.(counts) },
    ...(deploys.minDeploymentIntervalMs === undefined ? {} : { minDeploymentIntervalMs: deploys.minDeploymentIntervalMs }),
    ...(deploys.driftIntervalMs === undefined ? {} : { driftIntervalMs: deploys.driftIntervalMs }),
    exclusions,
    clock,
    logger,
    beforeDeployer: (d) => {
      if (pods !== undefined && options.fleet !== undefined) attachPodFleet(engine, d, pods, agentTargetFactory(options.fleet, fleetContext), logger);
    },
  });
  return { engine, templateSet, output, writer: undefined, haproxy: local === undefined || downtime === undefined ? undefined : { deployer, target: local, downtime }, fleet: local === undefined ? { deployer } : undefined, hooks, ...(feedback === undefined ? {} : { feedback }) };
}

async function sourceFor(options: ControllerOptions, clock: Clock, logger: Logger): Promise<Source> {
  if ('manifests' in options.source) return new ManifestSource({ dir: options.source.manifests, clock, logger, ...(options.limits === undefined ? {} : { limits: options.limits }) });
  // The Kubernetes client takes about half a second to load: only `run` against a cluster pays.
  const { kubernetesSource, loadKubeConfig } = await import('../sources/kubernetes/kubernetes-source.js').then(async (m) => ({ ...m, ...(await import('../sources/kubernetes/kube-config.js')) }));
  return kubernetesSource({ kubeConfig: loadKubeConfig(kubeConfigFrom(options.source)), clock, logger, ...(options.namespace === undefined ? {} : { namespace: options.namespace }) });
}

async function electorFor(options: ControllerOptions, clock: Clock, logger: Logger): Promise<Elector> {
  const election = options.leaderElection;
  if (election === undefined) return new SingleReplicaElector();
  if ('manifests' in options.source) throw new TypeError('leader election needs a Kubernetes API server for its Lease: use --kubeconfig or --in-cluster');
  const [{ LeaseElector }, { loadKubeConfig }] = await Promise.all([import('../leadership/lease-elector.js'), import('../sources/kubernetes/kube-config.js')]);
  return new LeaseElector({ kubeConfig: loadKubeConfig(kubeConfigFrom(options.source)), ...election, clock, logger });
}

function kubeConfigFrom(source: Exclude<SourceChoice, { readonly manifests: string }>): string {
  return 'kubeconfig' in source ? source.kubeconfig : 'in-cluster';
}

// Public API of haptic-reconciler: the engine assembly, the bus and its events, the components,
// the pipelines, the stores and the time and error types they share; the controller parts around
// them (sources, leader election, render gate, deployer, local HAProxy, metrics, output); and the
// whole controller as `run` assembles it. Dev tooling (demo, load test, synthetic churn, charts)
// is not part of it.
export { Engine, type EngineOptions, type Liveness } from './engine.js';
export * from './events/events.js';
export { EventBus, type BusEvent, type DropInfo, type EventBusOptions, type SubscribeOptions, type Subscription, type MergeDecision, type MergePolicy } from './bus/event-bus.js';
export { systemClock, sleep, every, type Clock, type TimerHandle } from './core/clock.js';
export { HapticError, PipelineError, StartupError, TemplateSetError, TemplateSetRejected, type ErrorCode, type PipelineFault } from './core/errors.js';
export { defaultLogger, silentLogger } from './core/logger.js';
export { Reconciler, triggerFor, HAPROXY_PODS_STORE, type TriggerDecision } from './reconcile/reconciler.js';
export { Coordinator, type CoordinatorOptions, type CoordinatorStats } from './reconcile/coordinator.js';
export { mailboxDecision, type MailboxItem } from './reconcile/mailbox.js';
export {
  EMPTY_AUXILIARY_FILES,
  isAbortError,
  type PipelineExecutor,
  type PipelineResult,
  type CheckedPipelineResult,
  type PipelineMode,
  type ExecuteOptions,
  type RenderBaseline,
  type RenderTimings,
} from './pipeline/pipeline.js';
export { PoolPipeline, type PoolPipelineOptions, type PoolPipelineStats, type PoolWorkerModule } from './pipeline/pool/pool-pipeline.js';
export { InlinePipeline, type InlinePipelineOptions } from './pipeline/inline-pipeline.js';
export { StoreProvider, Store, type ChangesSince, type StoreProviderOptions } from './stores/store-provider.js';
export { IndexedStore, objectKey, compareKeys } from '../worker/store/indexed-store.js';
export type { KubeObject, StoreChange, StoreDefinition, TemplateSetSource } from '../worker/protocol.js';
export { assertTemplateSetRenders } from './template-set/template-check.js';
export { loadTemplateSet, parseTemplateSet, parseSetOverrides, DEFAULT_TEMPLATE_SET_PATH } from './template-set/template-set.js';
export { loadManifests, parseManifest, type LoadedObject, type ManifestLoad } from './sources/manifest/manifest-loader.js';
export { ChangeBatcher } from './sources/change-batcher.js';
export { checkConfigFile, haproxyVersion, type HaproxyVerdict } from './haproxy/haproxy-check.js';
export type { OutputPaths, Rejection } from '../worker/protocol.js';
export { writeRenderOutput, outputDirs, type OutputDirs } from './output/render-output.js';
export { OutputDirectory, outputPathsIn, type OutputFiles, type WriteSummary } from './output/output-directory.js';
export { OutputWriter, type OutputWriterOptions } from './output/output-writer.js';
export { defaultCertificateFor, type DefaultCertificateOptions } from './output/default-certificate.js';
export { loadOutputTemplateSet } from './template-set/output-template-set.js';

// Sources and watchers.
export type { Source, SourceSink } from './sources/source.js';
export { WatcherSet, type WatcherSetOptions } from './sources/watcher-set.js';
export { ResourceWatcher, type ResourceWatcherOptions } from './sources/watcher.js';
export { ManifestSource, type ManifestSourceOptions } from './sources/manifest/manifest-source.js';

// Leadership.
export { SingleReplicaElector, type Elector, type LeadershipCallbacks } from './leadership/elector.js';
export { LeaseElector, microTime, type LeaseElectorOptions } from './leadership/lease-elector.js';

// HAProxy's verdict, deployment and the local HAProxy.
export { RenderGate, type RenderGateOptions, type RenderGateStats } from './gate/render-gate.js';
export { haproxyRenderChecker, type RenderChecker, type CheckableRender, type HaproxyRenderCheckerOptions } from './gate/render-checker.js';
export { Deployer, type DeployerOptions } from './deploy/deployer.js';
export { DriftPreventionMonitor, type DriftPreventionMonitorOptions } from './deploy/drift-monitor.js';
export type { DeployTarget, DeployableRender, ReloadResult } from './deploy/deploy-target.js';
export { diffRenders, type ConfigDiff } from './deploy/config-diff.js';
export { HaproxyProcess, statsSocketPaths, type HaproxyProcessOptions, type HaproxyState } from './haproxy/haproxy-process.js';
export { LocalHaproxyTarget, type LocalHaproxyTargetOptions } from './haproxy/local-haproxy-target.js';
export { RuntimeApi, type RuntimeApiOptions } from './haproxy/runtime-api.js';
export { MasterCli, type MasterCliOptions } from './haproxy/master-cli.js';
export { checkConfigFits, checkMaxconnFits, derivedMaxconn, readFdLimit, type FdLimit } from './haproxy/fd-limits.js';

// HTTP resources, metrics and health.
export { HttpResourceFetcher, attachHttpResources, type HttpResourceFetcherOptions } from './http-resources/http-resource-fetcher.js';
export { ControllerMetrics, type ControllerMetricsOptions } from './metrics/metrics.js';
export { MetricsAdapter, type MetricsAdapterOptions } from './metrics/metrics-adapter.js';
export { startHttpEndpoints, parseListenAddress, type HttpEndpoints, type HttpEndpointsOptions, type LivenessSnapshot } from './metrics/http-endpoints.js';

// The whole controller, as `run` assembles it.
export { assembleController, type ControllerOptions, type AssembledController, type SourceChoice, type LeaderElectionOptions, type HaproxyOptions } from './controller/controller.js';
export { runController, type RunOptions } from './controller/run-controller.js';

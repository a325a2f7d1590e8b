// Public API of haptic-reconciler: the engine assembly, the bus and its events, the components,
// the pipelines, the stores and the time and error types they share. Dev tooling (demo, load
// test, synthetic churn, charts) is not part of it.
export { Engine, type EngineOptions } from './engine.js';
export * from './events/events.js';
export { EventBus, type BusEvent, type DropInfo, type EventBusOptions, type SubscribeOptions, type Subscription, type MergeDecision, type MergePolicy } from './bus/event-bus.js';
export { systemClock, sleep, every, type Clock, type TimerHandle } from './core/clock.js';
export { HapticError, PipelineError, TemplateSetError, TemplateSetRejected, type ErrorCode, type PipelineFault } from './core/errors.js';
export { defaultLogger, silentLogger } from './core/logger.js';
export { Reconciler, triggerFor, HAPROXY_PODS_STORE, type TriggerDecision } from './reconcile/reconciler.js';
export { Coordinator, type CoordinatorOptions, type CoordinatorStats } from './reconcile/coordinator.js';
export { mailboxDecision, type MailboxItem } from './reconcile/mailbox.js';
export {
  EMPTY_AUXILIARY_FILES,
  isAbortError,
  type PipelineExecutor,
  type PipelineResult,
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
export { writeRenderOutput, outputDirs, type OutputDirs } from './output/render-output.js';

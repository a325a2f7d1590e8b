// Public API of haptic-reconciler.
export * from './events.js';
export { EventBus, type BusEvent, type DropInfo, type EventBusOptions, type SubscribeOptions, type Subscription, type MergeDecision, type MergePolicy } from './event-bus.js';
export { Reconciler, triggerFor, HAPROXY_PODS_STORE, type TriggerDecision } from './reconciler.js';
export { Coordinator, type CoordinatorOptions, type CoordinatorStats } from './coordinator.js';
export { mailboxDecision, type MailboxItem } from './mailbox.js';
export {
  PipelineError,
  isAbortError,
  type PipelineExecutor,
  type PipelineResult,
  type PipelineMode,
  type ExecuteOptions,
  type RenderBaseline,
  type RenderTimings,
} from './pipeline.js';
export { StoreProvider, Store, type ChangesSince, type StoreProviderOptions } from './store-provider.js';
export { IndexedStore, objectKey, compareKeys } from '../worker/indexed-store.js';
export type { KubeObject, StoreChange, StoreDefinition } from '../worker/protocol.js';
export { defaultLogger, silentLogger } from './logger.js';
export { PoolPipeline, type PoolPipelineOptions, type PoolPipelineStats } from './pool-pipeline.js';
export { InlinePipeline, type InlinePipelineOptions } from './inline-pipeline.js';
export { TemplateSetRejected, assertTemplateSetRenders } from './template-check.js';
export { loadTemplateSet, parseTemplateSet, parseSetOverrides, TemplateSetError, DEFAULT_TEMPLATE_SET_PATH } from './template-set.js';
export { loadManifests, parseManifest, type LoadedObject, type ManifestLoad } from './manifest-loader.js';
export { ChangeBatcher } from './change-batcher.js';
export { SyntheticCluster, seededRandom, type SyntheticOptions, type SyntheticChange } from './synthetic-cluster.js';
export { checkConfigFile, haproxyVersion, type HaproxyVerdict } from './haproxy-check.js';
export { writeRenderOutput, outputDirs, type OutputDirs } from './render-output.js';
export type { TemplateSetSource } from '../worker/protocol.js';

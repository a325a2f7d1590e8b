// The routing model's public surface in one import: the model types and options, the builder,
// the class policy, and the server slot file format. Each concept lives in its own module next
// to this one; this file only re-exports them so callers need not know the split. Nothing under
// routing/ imports it, which keeps it out of every import cycle.
export {
  modelOptions,
  type Backend,
  type BackendOptions,
  type Certificate,
  type HttpCheck,
  type IngressOptions,
  type ModelOptions,
  type RouteEntry,
  type RouteOwnership,
  type RouteTables,
  type RoutingModel,
  type Server,
  type SslRedirect,
  type TlsHostOwnership,
} from './model.js';
export type { ModelSource, StoreReader } from './model-source.js';
export { RoutingModelBuilder } from './model-builder.js';
export { buildRoutingModel } from './cold-model.js';
export { acceptsClass, classOf, classPolicy, DEFAULT_CLASS_ANNOTATION, LEGACY_CLASS_ANNOTATION, type ClassPolicy } from './ingress-class.js';
export { DEFAULT_CERTIFICATE_NAME } from './model-assembly.js';
export { assignSlots, PARKED_ADDRESS, parseSlotFile, SERVER_SLOTS_FILE, slotLine } from './server-slots.js';

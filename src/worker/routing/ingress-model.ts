// The routing model's public surface in one import: the model types and options, the builder,
// and the server slot file format. Each concept lives in its own module next to this one; this
// file only re-exports them so callers need not know the split. Nothing under routing/ imports
// it, which keeps it out of every import cycle.
export { modelOptions, type Backend, type Certificate, type ModelOptions, type RouteEntry, type RouteTables, type RoutingModel, type Server } from './model.js';
export type { ModelSource, StoreReader } from './model-source.js';
export { buildRoutingModel, RoutingModelBuilder } from './model-builder.js';
export { assignSlots, PARKED_ADDRESS, parseSlotFile, SERVER_SLOTS_FILE, slotLine } from './server-slots.js';

// The routing model built in one go with nothing cached: what a cold worker computes, and the
// reference the incremental builder (model-builder.ts) is tested against.
import type { RenderBaseline } from '../protocol.js';
import type { Warn } from './findings.js';
import type { ModelOptions, RoutingModel } from './model.js';
import type { ModelSource } from './model-source.js';
import { RoutingModelBuilder } from './model-builder.js';

/** A fresh builder's first build: the model of `source` with nothing reused. */
export function buildRoutingModel(source: ModelSource, options: ModelOptions, baseline: RenderBaseline | undefined, warn: Warn): RoutingModel {
  return new RoutingModelBuilder(options).build(source, baseline, warn);
}

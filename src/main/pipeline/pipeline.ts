// The pipeline contract: what the Coordinator calls to turn the stores into a validated config.
// Executors (InlinePipeline on the main thread, PoolPipeline on worker threads) implement it;
// failures surface as PipelineError carrying the phase that failed, read structurally.
import { randomUUID } from 'node:crypto';
import type { AuxiliaryFiles, OriginIndex, PipelineMode, Rejection, RenderBaseline, RenderExclusions, RenderOutcome, RenderPatch, RenderTimings } from '../../worker/protocol.js';
import type { GatewayStatusReport } from '../../worker/routing/gateway-model.js';
import { withSections } from '../../worker/render/renderer.js';
import { PipelineError } from '../core/errors.js';
import type { StoreProvider } from '../stores/store-provider.js';
import { markChecked } from './checked-results.js';

export type { AuxiliaryFiles, RenderPatch, TextEdit, RenderBaseline, RenderTimings, FailurePhase, PipelineMode, Rejection, RejectionScope, OriginIndex, RenderExclusions, Exclusion } from '../../worker/protocol.js';
export { PipelineError } from '../core/errors.js';
export { isAbortError } from '../core/async.js';

/** The baseline of a term in which nothing has rendered yet. */
export const EMPTY_AUXILIARY_FILES: AuxiliaryFiles = Object.freeze({
  maps: Object.freeze({}),
  files: Object.freeze({}),
  certificates: Object.freeze({}),
});

export interface PipelineResult {
  readonly renderId: string;
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
  readonly checksum: string;
  /** The store version the config was rendered from. */
  readonly storeVersion: number;
  readonly timings: RenderTimings;
  /** For logs; every rejection is among them as `rejected <Kind namespace/name>: <reason>` (escaped). */
  readonly warnings: readonly string[];
  /** Objects and parts of objects the guard left out of this render, as data. Absent means none. */
  readonly rejections?: readonly Rejection[];
  /** Which objects the config's sections and entries came from (absent from executors that do not say). */
  readonly origins?: OriginIndex;
  /** Gateway API acceptance results (Accepted/ResolvedRefs reasons, attachedRoutes), when a GatewayClass is ours. */
  readonly gatewayStatus?: GatewayStatusReport;
  /**
   * This render as edits of an earlier one (`patch.from`, a renderId): the Deployer then diffs the
   * edited sections only. The files above are complete all the same. Absent: not known.
   */
  readonly patch?: RenderPatch;
}

/** A result whose rejections are always listed: what this package's executors return and the Coordinator reads. */
export interface CheckedPipelineResult extends PipelineResult {
  readonly rejections: readonly Rejection[];
  /** `namespace/name` of the Ingresses this render serves (absent: the set has no Ingress store). */
  readonly servedIngresses?: readonly string[];
  /** What the routing model left out of served Ingresses, as rejections with a reason code. */
  readonly findings?: readonly Rejection[];
}

export interface ExecuteOptions {
  readonly baseline?: RenderBaseline;
  /** What the render gate takes out of this render (objects HAProxy refused, trial namespaces). */
  readonly exclusions?: RenderExclusions;
}

export interface PipelineExecutor {
  /**
   * Renders and validates the current stores. Rejects with a PipelineError naming the phase
   * that failed; rejects with an AbortError-like error when `signal` aborts first.
   */
  execute(signal: AbortSignal, stores: StoreProvider, mode: PipelineMode, options?: ExecuteOptions): Promise<PipelineResult>;
}

/** Turns a render outcome (plain data from either executor) into a frozen result, or throws its PipelineError. */
export function toPipelineResult(outcome: RenderOutcome, renderId: string = randomUUID()): CheckedPipelineResult {
  if (!outcome.ok) throw PipelineError.fromFailure(outcome);
  return markChecked({
    renderId,
    haproxyConfig: outcome.haproxyConfig,
    auxiliaryFiles: outcome.auxiliaryFiles,
    checksum: outcome.checksum,
    storeVersion: outcome.storeVersion,
    timings: outcome.timings,
    warnings: outcome.warnings,
    rejections: outcome.rejections,
    // A worker's index crosses threads without its sections: they are computed here on first read.
    ...(outcome.origins === undefined ? {} : { origins: withSections(outcome.origins, outcome.haproxyConfig) }),
    ...(outcome.servedIngresses === undefined ? {} : { servedIngresses: outcome.servedIngresses }),
    ...(outcome.findings === undefined ? {} : { findings: outcome.findings }),
    ...(outcome.gatewayStatus === undefined ? {} : { gatewayStatus: outcome.gatewayStatus }),
    ...(outcome.patch === undefined ? {} : { patch: outcome.patch }),
  });
}

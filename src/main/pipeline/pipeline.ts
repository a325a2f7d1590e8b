// The pipeline contract: what the Coordinator calls to turn the stores into a validated config.
// Executors (InlinePipeline on the main thread, PoolPipeline on worker threads) implement it;
// failures surface as PipelineError carrying the phase that failed, read structurally.
import { randomUUID } from 'node:crypto';
import type { AuxiliaryFiles, FailurePhase, RenderBaseline, RenderFailure, RenderOutcome, RenderTimings } from '../../worker/protocol.js';
import type { StoreProvider } from '../stores/store-provider.js';

export type { AuxiliaryFiles, RenderBaseline, RenderTimings, FailurePhase } from '../../worker/protocol.js';

export type PipelineMode = 'reconcile' | 'admission';

export interface PipelineResult {
  readonly renderId: string;
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
  readonly checksum: string;
  /** The store version the config was rendered from. */
  readonly storeVersion: number;
  readonly timings: RenderTimings;
  readonly warnings: readonly string[];
}

export interface ExecuteOptions {
  readonly baseline?: RenderBaseline;
}

export interface PipelineExecutor {
  /**
   * Renders and validates the current stores. Rejects with a PipelineError naming the phase
   * that failed; rejects with an AbortError-like error when `signal` aborts first.
   */
  execute(signal: AbortSignal, stores: StoreProvider, mode: PipelineMode, options?: ExecuteOptions): Promise<PipelineResult>;
}

/** A failed pipeline phase. Callers read `phase`/`subPhase`, never the message. */
export class PipelineError extends Error {
  readonly phase: FailurePhase;
  readonly subPhase: string | undefined;

  constructor(phase: FailurePhase, cause: Error | string, subPhase?: string) {
    const causeMessage = typeof cause === 'string' ? cause : cause.message;
    super(PipelineError.format(phase, causeMessage, subPhase), { cause });
    this.name = 'PipelineError';
    this.phase = phase;
    this.subPhase = subPhase;
  }

  /** `render failed: …`, `validation failed: …` or `validation failed in <subPhase> phase: …`. */
  static format(phase: FailurePhase, cause: string, subPhase?: string): string {
    if (phase === 'render') return `render failed: ${cause}`;
    if (subPhase !== undefined) return `validation failed in ${subPhase} phase: ${cause}`;
    // The auxiliary phase is a validation of the auxiliary files.
    return phase === 'auxiliary' ? `validation failed in auxiliary phase: ${cause}` : `validation failed: ${cause}`;
  }

  /** Rebuilds the error from the plain data that crossed the thread boundary. */
  static fromFailure(failure: Pick<RenderFailure, 'phase' | 'subPhase' | 'message'>): PipelineError {
    return new PipelineError(failure.phase, failure.message, failure.subPhase);
  }
}

/** True for an error thrown because the caller's signal aborted. */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || (error as { code?: unknown }).code === 'ABORT_ERR');
}

/** Turns a render outcome (plain data from either executor) into a result, or throws its PipelineError. */
export function toPipelineResult(outcome: RenderOutcome, renderId: string = randomUUID()): PipelineResult {
  if (!outcome.ok) throw PipelineError.fromFailure(outcome);
  return {
    renderId,
    haproxyConfig: outcome.haproxyConfig,
    auxiliaryFiles: outcome.auxiliaryFiles,
    checksum: outcome.checksum,
    storeVersion: outcome.storeVersion,
    timings: outcome.timings,
    warnings: outcome.warnings,
  };
}

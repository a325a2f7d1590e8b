// Every error class the engine throws, in one place. Each carries a stable `code` that callers
// switch on (never the message) and says whether it is terminal: a terminal error repeats until
// its inputs change (a template that does not compile, a config HAProxy refuses), so retrying
// the same inputs is pointless; a transient one (a crashed worker, a timeout) may pass on retry.
import type { FailurePhase } from '../../worker/protocol.js';

export type ErrorCode =
  | 'RENDER_FAILED'
  | 'VALIDATION_FAILED'
  | 'AUXILIARY_FAILED'
  | 'WORKER_FAILED'
  | 'RENDER_TIMEOUT'
  | 'POOL_UNAVAILABLE'
  | 'TEMPLATE_SET_INVALID'
  | 'TEMPLATE_SET_REJECTED';

export abstract class HapticError extends Error {
  abstract readonly code: ErrorCode;
  abstract readonly terminal: boolean;
}

const PHASE_CODES: Readonly<Record<FailurePhase, ErrorCode>> = {
  render: 'RENDER_FAILED',
  validation: 'VALIDATION_FAILED',
  auxiliary: 'AUXILIARY_FAILED',
};

/** What went wrong outside the render itself; it says the failure is transient. */
export type PipelineFault = 'WORKER_FAILED' | 'RENDER_TIMEOUT' | 'POOL_UNAVAILABLE';

/** A failed pipeline phase. Callers read `phase`/`subPhase`/`code`, never the message. */
export class PipelineError extends HapticError {
  readonly phase: FailurePhase;
  readonly subPhase: string | undefined;
  readonly code: ErrorCode;
  /** False when a worker fault, not the inputs, caused it: the same render may pass on retry. */
  readonly terminal: boolean;

  constructor(phase: FailurePhase, cause: Error | string, subPhase?: string, fault?: PipelineFault) {
    const causeMessage = typeof cause === 'string' ? cause : cause.message;
    super(PipelineError.format(phase, causeMessage, subPhase), { cause });
    this.name = 'PipelineError';
    this.phase = phase;
    this.subPhase = subPhase;
    this.code = fault ?? PHASE_CODES[phase];
    this.terminal = fault === undefined;
  }

  /** `render failed: …`, `validation failed: …` or `validation failed in <subPhase> phase: …`. */
  static format(phase: FailurePhase, cause: string, subPhase?: string): string {
    if (phase === 'render') return `render failed: ${cause}`;
    if (subPhase !== undefined) return `validation failed in ${subPhase} phase: ${cause}`;
    // The auxiliary phase is a validation of the auxiliary files.
    return phase === 'auxiliary' ? `validation failed in auxiliary phase: ${cause}` : `validation failed: ${cause}`;
  }

  /** Rebuilds the error from the plain data that crossed the thread boundary. */
  static fromFailure(failure: { readonly phase: FailurePhase; readonly subPhase?: string | undefined; readonly message: string }): PipelineError {
    return new PipelineError(failure.phase, failure.message, failure.subPhase);
  }
}

/** A template set file that cannot be read or does not have the expected shape. */
export class TemplateSetError extends HapticError {
  readonly code = 'TEMPLATE_SET_INVALID';
  readonly terminal = true;

  constructor(readonly file: string, message: string) {
    super(`${file}: ${message}`);
    this.name = 'TemplateSetError';
  }
}

/** A template set whose templates do not compile or cannot render against empty stores. */
export class TemplateSetRejected extends HapticError {
  readonly code = 'TEMPLATE_SET_REJECTED';
  readonly terminal = true;

  constructor(message: string) {
    super(`template set rejected: ${message}`);
    this.name = 'TemplateSetRejected';
  }
}

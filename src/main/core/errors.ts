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
  | 'TEMPLATE_SET_REJECTED'
  | 'HAPROXY_CLI_FAILED'
  | 'HAPROXY_COMMAND_FAILED'
  | 'HAPROXY_START_FAILED'
  | 'FD_LIMIT_EXCEEDED'
  | 'CANNOT_START';

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

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

/** Why a HAProxy CLI exchange (Runtime API or master CLI) produced no usable reply. */
export type HaproxyCliFailure = 'connect' | 'timeout' | 'closed' | 'reply-too-large' | 'protocol';

/**
 * A HAProxy CLI socket could not be reached or answered in a form we cannot read. Transient: a
 * master re-executing for a reload, or a process being restarted, refuses connections for a while.
 */
export class HaproxyCliError extends HapticError {
  readonly code = 'HAPROXY_CLI_FAILED';
  readonly terminal = false;

  constructor(readonly socketPath: string, readonly reason: HaproxyCliFailure, message: string, options?: { cause?: unknown }) {
    super(`HAProxy CLI ${socketPath}: ${message}`, options);
    this.name = 'HaproxyCliError';
  }
}

/**
 * HAProxy answered a Runtime API command with an error (`[err]`, `Unknown command`, ...).
 * Terminal: the same command against the same running config fails the same way.
 */
export class RuntimeCommandError extends HapticError {
  readonly code = 'HAPROXY_COMMAND_FAILED';
  readonly terminal = true;

  /**
   * @param index position of `command` in the batch it was sent with (0 for `send`)
   * @param executed how many commands of that batch HAProxy ran (it goes on after an error
   *   within one connection; later connections of the batch were not opened)
   */
  constructor(readonly command: string, readonly reply: string, readonly index = 0, readonly executed = 1) {
    super(`HAProxy refused ${JSON.stringify(command)}: ${reply.trim().split('\n')[0] ?? ''}`);
    this.name = 'RuntimeCommandError';
  }
}

/** HAProxy did not come up: it exited, or no worker answered in time. `alerts` are its own words. */
export class HaproxyStartError extends HapticError {
  readonly code = 'HAPROXY_START_FAILED';
  /** Ports in use or a slow host may pass on retry; a config HAProxy refuses is caught earlier by `haproxy -c`. */
  readonly terminal = false;

  constructor(message: string, readonly alerts: readonly string[] = []) {
    super(alerts.length === 0 ? message : `${message}: ${alerts.join(' | ')}`);
    this.name = 'HaproxyStartError';
  }
}

/** A configured maxconn needs more file descriptors than HAProxy may open here; it would refuse to start. */
export class FdLimitError extends HapticError {
  readonly code = 'FD_LIMIT_EXCEEDED';
  readonly terminal = true;

  constructor(readonly maxconn: number, readonly needed: number, readonly limit: number, message: string) {
    super(message);
    this.name = 'FdLimitError';
  }
}

/**
 * The controller cannot start, or has lost for good something it cannot run without: a manifest
 * directory that does not exist, an output directory it cannot write, HAProxy missing or unable
 * to serve its first config. The message is one line for the operator; no stack trace helps.
 */
export class StartupError extends HapticError {
  readonly code = 'CANNOT_START';
  readonly terminal = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

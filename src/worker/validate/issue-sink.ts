// Issues and reports: what both phases return, and the sink that collects them in order with
// the per-phase error cap. Also the two halves of an internal failure: describe() turns what was
// thrown into a message, replayThrow() raises it again where a recorded 'throw' op is replayed,
// so the phase reports it exactly where a single pass would have.

export interface ValidationIssue {
  readonly phase: 'validation' | 'auxiliary';
  /** `haproxy.cfg`, or `maps/<name>`, `files/<name>`, `certs/<name>` for auxiliary files. */
  readonly file: string;
  /** 1-based line within `file`, when the issue belongs to one line. */
  readonly line?: number;
  readonly message: string;
}

export interface ValidationReport {
  readonly errors: readonly ValidationIssue[];
  readonly warnings: readonly string[];
}

/** The name errors in the main configuration carry. */
export const CONFIG_FILE = 'haproxy.cfg';

/**
 * Errors kept per phase. A broken template can break every one of 10,000 backends the same way;
 * the first errors say what is wrong, the rest are counted in a warning.
 */
export const MAX_ERRORS_PER_PHASE = 100;

/** `haproxy.cfg:12: unknown keyword 'foo' in backend 'be_x'`, `certs/a.pem: no private key`. */
export function formatIssue(issue: ValidationIssue): string {
  return issue.line === undefined
    ? `${issue.file}: ${issue.message}`
    : `${issue.file}:${issue.line}: ${issue.message}`;
}

/** What a sink held at one point (IssueSink.snapshot). */
export interface SinkSnapshot {
  readonly errors: readonly ValidationIssue[];
  readonly warnings: readonly string[];
  readonly omitted: number;
}

/** Collects one phase's issues in the order met; errors past the cap are only counted. */
export class IssueSink {
  readonly #phase: ValidationIssue['phase'];
  readonly #errors: ValidationIssue[] = [];
  readonly #warnings: string[] = [];
  #omitted = 0;

  constructor(phase: ValidationIssue['phase']) {
    this.#phase = phase;
  }

  error(file: string, line: number | undefined, message: string): void {
    if (this.#errors.length >= MAX_ERRORS_PER_PHASE) {
      this.#omitted++;
      return;
    }
    this.#errors.push(
      line === undefined ? { phase: this.#phase, file, message } : { phase: this.#phase, file, line, message },
    );
  }

  warn(message: string): void {
    this.#warnings.push(message);
  }

  /** The issues so far, to start another sink from (see restore). */
  snapshot(): SinkSnapshot {
    return { errors: [...this.#errors], warnings: [...this.#warnings], omitted: this.#omitted };
  }

  /** A sink holding the issues of `snapshot`, as if they had been reported to it in order. */
  static restore(phase: ValidationIssue['phase'], snapshot: SinkSnapshot): IssueSink {
    const sink = new IssueSink(phase);
    sink.#errors.push(...snapshot.errors);
    sink.#warnings.push(...snapshot.warnings);
    sink.#omitted = snapshot.omitted;
    return sink;
  }

  report(): ValidationReport {
    const warnings = this.#warnings;
    if (this.#omitted > 0) {
      warnings.push(`${this.#phase}: ${this.#omitted} further error(s) omitted after the first ${MAX_ERRORS_PER_PHASE}`);
    }
    return { errors: this.#errors, warnings };
  }
}

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The error raised when replay meets a 'throw' op: the phase's catch reports it as before. */
export function replayThrow(message: string): never {
  throw new Error(message);
}

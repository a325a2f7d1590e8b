// A PipelineExecutor the test drives by hand: every execute() call is recorded and returns a
// promise that stays pending until the test resolves or rejects it.
import type { ExecuteOptions, PipelineExecutor, PipelineMode, PipelineResult } from '../../src/main/pipeline/pipeline.js';
import type { StoreProvider } from '../../src/main/stores/store-provider.js';
import type { AuxiliaryFiles } from '../../src/worker/protocol.js';
import { deferred, waitUntil, type Deferred } from './async.js';

export interface ExecuteCall {
  readonly signal: AbortSignal;
  readonly stores: StoreProvider;
  readonly mode: PipelineMode;
  readonly options: ExecuteOptions | undefined;
  readonly result: Deferred<PipelineResult>;
}

export interface FakePipelineOptions {
  /**
   * Reject a pending call with an AbortError when its signal aborts, as the PipelineExecutor
   * contract asks. Turn off to simulate a render that outlives the leadership term.
   * @default true
   */
  readonly honourAbort?: boolean;
}

export class FakePipeline implements PipelineExecutor {
  readonly calls: ExecuteCall[] = [];
  readonly #honourAbort: boolean;

  constructor(options: FakePipelineOptions = {}) {
    this.#honourAbort = options.honourAbort ?? true;
  }

  execute(signal: AbortSignal, stores: StoreProvider, mode: PipelineMode, options?: ExecuteOptions): Promise<PipelineResult> {
    const result = deferred<PipelineResult>();
    this.calls.push({ signal, stores, mode, options, result });
    if (this.#honourAbort) {
      const onAbort = (): void => {
        if (!result.settled) result.reject(new DOMException('The operation was aborted', 'AbortError'));
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    }
    return result.promise;
  }

  get callCount(): number {
    return this.calls.length;
  }

  /** The n-th call (0-based); throws when it has not happened. */
  call(n: number): ExecuteCall {
    const call = this.calls[n];
    if (call === undefined) throw new Error(`execute call #${n} has not happened (${this.calls.length} so far)`);
    return call;
  }

  /** The most recent call that is still pending. */
  get pending(): ExecuteCall {
    const call = [...this.calls].reverse().find((c) => !c.result.settled);
    if (call === undefined) throw new Error('no execute call is pending');
    return call;
  }

  /** Waits until at least `n` calls have been made. */
  waitForCalls(n: number): Promise<void> {
    return waitUntil(() => this.calls.length >= n, `${n} execute call(s), saw ${this.calls.length}`);
  }
}

let renderCounter = 0;

/** Auxiliary files with one map, one file and one certificate, tagged so renders differ. */
export function auxiliaryFiles(tag: string): AuxiliaryFiles {
  return {
    maps: { 'hosts.map': `${tag}.example.com backend_${tag}\n` },
    files: { '404.http': `HTTP/1.0 404 ${tag}\n` },
    certificates: { [`${tag}.pem`]: `-----BEGIN CERTIFICATE-----\n${tag}\n` },
  };
}

/** A successful pipeline result with a unique render ID. */
export function pipelineResult(overrides: Partial<PipelineResult> = {}): PipelineResult {
  renderCounter++;
  const tag = `r${renderCounter}`;
  return {
    renderId: `render-${renderCounter}`,
    haproxyConfig: `global\n  # ${tag}\n`,
    auxiliaryFiles: auxiliaryFiles(tag),
    checksum: `sha256:${tag}`,
    storeVersion: renderCounter,
    timings: { renderMs: 1, validateMs: 1, totalMs: 2 },
    warnings: [],
    rejections: [],
    ...overrides,
  };
}

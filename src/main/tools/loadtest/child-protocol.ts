// The line protocol between the load test's parent and a child running one mode. Child -> parent:
// one JSON line per message on stdout (`emit`, read back by `parseChildMessage`); anything else
// the child prints is passed through. Parent -> child, on stdin (ParentChannel): a `warmed` line
// once its probe connections are open, then end of input once its last probe is answered.
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { PROBE_TIMEOUT_MS } from './probes.js';
import type { ChildReport } from './report.js';

export type ChildMessage =
  | { readonly loadtest: 'listening'; readonly port: number }
  | { readonly loadtest: 'flood-start' }
  | { readonly loadtest: 'flood-end' }
  | { readonly loadtest: 'result'; readonly result: ChildReport };

/** The parent's line on the child's stdin once its probe connections are open. */
export const WARMED = 'warmed';
/** How long a child waits for the parent to finish probing before it shuts down anyway. */
export const RELEASE_TIMEOUT_MS = PROBE_TIMEOUT_MS + 10_000;
/** Lines a child writes on stdout carry this key; anything else is passed through to stderr. */
const PROTOCOL_KEY = 'loadtest';

/** Child side: writes one message as one line on stdout. */
export function emit(message: ChildMessage): void {
  // stdout is a pipe: writes are synchronous on Linux, so a line is out before the loop blocks.
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** The message a child's stdout line carries, or undefined for any other output. */
export function parseChildMessage(line: string): ChildMessage | undefined {
  if (!line.startsWith(`{"${PROTOCOL_KEY}":`)) return undefined;
  try {
    return JSON.parse(line) as ChildMessage;
  } catch {
    return undefined;
  }
}

/** What the parent says on our stdin: a `warmed` line, then end of input (we may shut down). */
export class ParentChannel {
  warmed = false;
  ended = false;
  readonly #lines = createInterface({ input: process.stdin });
  #waiters: (() => void)[] = [];

  constructor() {
    this.#lines.on('line', (line) => {
      if (line.trim() === WARMED) this.warmed = true;
      this.#wake();
    });
    this.#lines.once('close', () => {
      this.ended = true;
      this.#wake();
    });
  }

  /** Resolves once `condition` holds, or after `timeoutMs`. */
  async until(condition: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!condition() && performance.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - performance.now());
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.#lines.close();
    process.stdin.destroy();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

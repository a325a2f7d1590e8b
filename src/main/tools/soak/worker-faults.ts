// Worker faults on demand, across the thread boundary. The soak arms one fault at a time in a
// SharedArrayBuffer that every pool worker receives as workerData (a replacement started by
// piscina gets the same buffer); the first render to run afterwards takes it with one atomic
// exchange, so exactly one render misbehaves, whichever worker runs it, and counts it as taken.
// Loaded on both sides: the worker side (fault-worker.ts) imports only `takeWorkerFault`, so
// this file must stay free of main-thread imports.
import type { PoolWorkerModule } from '../../pipeline/pool/pool-pipeline.js';

/**
 * - `crash`: the render ends its worker thread (process.exit in a worker exits only the thread).
 * - `hang`: the render never returns; the pool's render timeout terminates the thread.
 * - `oom`: the render fills the heap until the worker's resourceLimits terminate the thread.
 */
export type WorkerFault = 'crash' | 'hang' | 'oom';

/** Cell values of ARMED: 0 is none, else the fault's index here plus one. */
const CODES: readonly WorkerFault[] = ['crash', 'hang', 'oom'];
/** Cell indices. */
const ARMED = 0;
const TAKEN = 1;

/** The workerData of a fault worker. */
export interface WorkerFaultData {
  /** Two Int32 cells: ARMED (the armed fault's code) and TAKEN (faults taken so far). */
  readonly cells: SharedArrayBuffer;
}

/** Main side: arms the next render's fault and sees when a worker has taken it. */
export class WorkerFaultSwitch {
  readonly #data: WorkerFaultData = { cells: new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT) };
  readonly #cells = new Int32Array(this.#data.cells);

  /** The pool's `worker` option: the fault worker, reading this switch. */
  get worker(): PoolWorkerModule {
    // Run from source the module is .ts (loaded through tsx, the pool's default flags); built, .js.
    const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
    return { filename: new URL(`./fault-worker.${extension}`, import.meta.url), workerData: this.#data };
  }

  /** How many armed faults workers have taken (and so acted out) since the switch was made. */
  get taken(): number {
    return Atomics.load(this.#cells, TAKEN);
  }

  /** Makes the next render to start, on any worker, misbehave as `fault`. */
  arm(fault: WorkerFault): void {
    Atomics.store(this.#cells, ARMED, CODES.indexOf(fault) + 1);
  }

  /** Withdraws an armed fault no worker has taken yet; true if there was one. */
  disarm(): boolean {
    return Atomics.exchange(this.#cells, ARMED, 0) !== 0;
  }
}

/** Worker side: takes the armed fault, if any, so that no other render gets it. */
export function takeWorkerFault(data: WorkerFaultData | undefined): WorkerFault | undefined {
  if (data === undefined) return undefined;
  const cells = new Int32Array(data.cells);
  const code = Atomics.exchange(cells, ARMED, 0);
  if (code === 0) return undefined;
  Atomics.add(cells, TAKEN, 1);
  return CODES[code - 1];
}

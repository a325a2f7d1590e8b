// The soak's pool worker: the real one (importing it runs its load-time control-port
// announcement, and every render goes to its `render`), except for the one render that takes a
// fault the soak armed (worker-faults.ts). That render ends its thread, hangs, or exhausts the
// heap, as a worker hit by a bug, a pathological template or a runaway input would.
// This module runs on a worker thread, never on the main one: it is the one module under
// src/main that loads the worker runtime, which the import rule otherwise forbids.
import { workerData } from 'node:worker_threads';
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- a worker-thread entry: it wraps the worker runtime
import render from '../../../worker/pool-worker.js';
import type { RenderTask, RenderTaskResult } from '../../../worker/protocol.js';
import { takeWorkerFault, type WorkerFaultData } from './worker-faults.js';

const data = workerData as WorkerFaultData | undefined;

/** Exit code of a crashed worker, as in sysexits' EX_SOFTWARE. */
const CRASH_EXIT_CODE = 70;

export default function renderOrMisbehave(task: RenderTask): RenderTaskResult {
  const fault = takeWorkerFault(data);
  if (fault === undefined) return render(task);
  switch (fault) {
    case 'crash':
      return process.exit(CRASH_EXIT_CODE);
    case 'hang':
      return hangForever();
    case 'oom':
      return fillHeap();
    default: {
      const unreachable: never = fault;
      return unreachable;
    }
  }
}

/** Spins until the pool terminates the thread (V8 interrupts a loop on terminate). */
function hangForever(): never {
  let spins = 0;
  for (;;) spins = (spins + 1) | 0;
}

/** Keeps allocating chunks of doubles (V8 heap, unlike typed arrays) until the heap limit kills the thread. */
function fillHeap(): never {
  const kept = new Map<number, number[]>();
  for (let chunk = 0; ; chunk++) kept.set(chunk, Array.from({ length: 8192 }, (_, i) => chunk + i / 8192));
}

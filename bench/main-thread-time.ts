// The main thread's own time over a piece of work: its CPU time from the scheduler's record of the
// thread (Linux: /proc/self/task/<pid>/schedstat, nanoseconds on CPU), which neither the worker
// threads nor waiting for a core count in. Elsewhere the event loop's active time
// (performance.eventLoopUtilization), which on a loaded host also counts the time the thread
// waited for a core while it had work.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;

/** Nanoseconds the main thread has run on a CPU, or undefined where the system does not say. */
function mainThreadRunNs(): number | undefined {
  try {
    const ns = Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns : undefined;
  } catch {
    return undefined;
  }
}

/** How the figures are measured, for a report. */
export const MAIN_THREAD_TIME_SOURCE = mainThreadRunNs() === undefined ? 'event loop active time (performance.eventLoopUtilization)' : 'main-thread CPU time (/proc schedstat)';

/** Starts a measurement; the function it returns gives the main thread's milliseconds since. */
export function mainThreadTimer(): () => number {
  const startNs = mainThreadRunNs();
  const elu = performance.eventLoopUtilization();
  return () => {
    const endNs = startNs === undefined ? undefined : mainThreadRunNs();
    return endNs === undefined || startNs === undefined ? performance.eventLoopUtilization(elu).active : (endNs - startNs) / 1e6;
  };
}

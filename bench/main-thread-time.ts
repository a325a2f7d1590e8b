// The main thread's own time over a piece of work: its CPU time from the scheduler's record of the
// thread (Linux schedstat, lib.ts threadSchedstat), which neither the worker threads nor waiting
// for a core count in. Elsewhere the event loop's active time (performance.eventLoopUtilization),
// which on a loaded host also counts the time the thread waited for a core while it had work.
// Call it on the main thread.
import { performance } from 'node:perf_hooks';
import { threadSchedstat } from './lib.js';

/** How the figures are measured, for a report. */
export const MAIN_THREAD_TIME_SOURCE = threadSchedstat() === undefined ? 'event loop active time (performance.eventLoopUtilization)' : 'main-thread CPU time (/proc/thread-self/schedstat)';

/** Starts a measurement; the function it returns gives the main thread's milliseconds since. */
export function mainThreadTimer(): () => number {
  const start = threadSchedstat();
  const elu = performance.eventLoopUtilization();
  return () => {
    const end = start === undefined ? undefined : threadSchedstat();
    return end === undefined || start === undefined ? performance.eventLoopUtilization(elu).active : (end[0] - start[0]) / 1e6;
  };
}

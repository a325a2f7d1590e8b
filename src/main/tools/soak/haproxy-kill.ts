// The soak's HAProxy kill: SIGKILL of HAProxy's current worker or of its master, found through
// the master CLI's `show proc`, then the wait until HAProxy runs again. All of it, from the first
// `show proc` to the last, is bounded by one deadline, and each step tolerates what a reload in
// flight does to it:
// - the master CLI refuses or resets connections while the master re-executes itself for a
//   reload (a 10,000-Ingress config parses for seconds): `show proc` is asked again;
// - the worker `show proc` named may be gone by the time of the signal (ESRCH: a restart took
//   it down, or a reload replaced it and it finished draining): the table is read again and the
//   current worker then is the target;
// - after the kill, a reload may replace the killed worker before the master notices its death:
//   "the killed worker is gone and a current worker serves" is as good as a master restart;
// - a `show proc` that never answers counts against the deadline, not forever.
// Past the deadline the kill rejects with what it last saw, so the fault is reported failed.
import { withTimeout } from '../../core/async.js';
import { sleep, type Clock } from '../../core/clock.js';
import type { ProcSnapshot } from '../../haproxy/show-proc.js';

export type HaproxyProcessKind = 'worker' | 'master';

export interface HaproxyKillOptions {
  readonly which: HaproxyProcessKind;
  /** The master CLI's process table. */
  readonly showProc: () => Promise<ProcSnapshot>;
  /** Sends SIGKILL to `pid`; throws an error with code ESRCH when no such process exists. */
  readonly kill: (pid: number) => void;
  readonly clock: Clock;
  /** The whole kill, from the first `show proc` until HAProxy runs again. */
  readonly boundMs: number;
  /** Between two `show proc` polls. @default 50 */
  readonly pollMs?: number;
}

/** What a kill took: the process signalled, and the steps it had to try again (with the first reason). */
export interface HaproxyKillOutcome {
  readonly pid: number;
  readonly retries: number;
  readonly firstRetry: string | undefined;
}

/** SIGKILLs HAProxy's current worker or its master; resolves once a current worker other than the killed one runs. */
export async function killHaproxyProcess(options: HaproxyKillOptions): Promise<HaproxyKillOutcome> {
  const { which, clock, boundMs } = options;
  const pollMs = options.pollMs ?? 50;
  const deadline = clock.monotonic() + boundMs;
  let lastSeen = 'no answer yet';
  let retries = 0;
  let firstRetry: string | undefined;
  const retry = (): void => {
    retries++;
    firstRetry ??= lastSeen;
  };
  /** `show proc`, or undefined (with `lastSeen` saying why) when it failed or the deadline came first. */
  const table = async (): Promise<ProcSnapshot | undefined> => {
    const left = deadline - clock.monotonic();
    if (left <= 0) return undefined;
    try {
      return await withTimeout(options.showProc(), left, "the master CLI's show proc", clock);
    } catch (error) {
      lastSeen = `show proc failed: ${(error as Error).message}`;
      return undefined;
    }
  };
  const pause = async (): Promise<boolean> => {
    const left = deadline - clock.monotonic();
    if (left <= 0) return false;
    await sleep(clock, Math.min(pollMs, left));
    return clock.monotonic() < deadline;
  };
  const fail = (phase: string): Error => new Error(`HAProxy's ${which} was not ${phase} within ${boundMs / 1000} s (${lastSeen})`);

  // 1. Find the target and signal it.
  let killed: { readonly pid: number; readonly masterPid: number } | undefined;
  while (killed === undefined) {
    const before = await table();
    const pid = which === 'worker' ? before?.workers[0]?.pid : before?.master.pid;
    if (before !== undefined && pid === undefined) lastSeen = 'show proc lists no current worker';
    if (before !== undefined && pid !== undefined) {
      try {
        options.kill(pid);
        killed = { pid, masterPid: before.master.pid };
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
        lastSeen = `${which} ${pid} was already gone when signalled`;
      }
    }
    retry();
    if (!(await pause())) throw fail('found and killed');
  }

  // 2. Wait until HAProxy runs again.
  for (;;) {
    if (!(await pause())) throw fail('replaced after the kill');
    const now = await table();
    if (now === undefined) continue;
    // A killed current worker takes its master down, and the supervisor starts another. A worker
    // listed as current while a reload replaces it does not: HAProxy serves on from the new one.
    const workerGone = now.workers.length > 0 && !now.workers.some((w) => w.pid === killed.pid);
    if (workerGone && (which === 'worker' || now.master.pid !== killed.masterPid)) return { pid: killed.pid, retries, firstRetry };
    lastSeen = `after killing ${which} ${killed.pid}: master ${now.master.pid}, current workers ${now.workers.map((w) => w.pid).join(', ') || 'none'}`;
  }
}

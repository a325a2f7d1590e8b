// Bounded draining. After a reload, HAProxy's previous worker keeps serving the connections it
// holds (a WebSocket, a long download, an idle keep-alive connection) until they end or the
// config's `hard-stop-after` passes. A tenant that holds connections open and edits its objects
// often would otherwise pile up workers, each with a whole config in memory, for as long as
// hard-stop-after. OldWorkerBound keeps at most `maxOldWorkers` of them: past that, the oldest
// (the most reloads survived, then the longest uptime) get SIGTERM, HAProxy's hard stop, which
// closes their connections at once, and SIGKILL when they are still listed after `killAfterMs`.
//
// The bound is the supervisor's rather than HAProxy's `mworker-max-reloads`: HAProxy 2.6 counts
// failed reloads too, also for the worker that keeps serving, so after a few refused configs the
// next good reload would kill the worker that was serving a moment earlier; and it only acts on a
// successful reload. Counting `show proc`'s old workers needs neither.
//
// A pid comes from the master's own `show proc` and is signalled only while /proc says the master
// is its parent, so a pid reused by another process after the worker exited is never touched.
import { readFile } from 'node:fs/promises';
import { sleep, type Clock } from '../core/clock.js';
import type { ProcEntry, ProcSnapshot } from './show-proc.js';

/**
 * Old workers allowed to drain at once. Each holds a whole config in memory, and reloads come from
 * Ingress changes (endpoint changes go through the Runtime API): three keep HAProxy's memory
 * within four configs' worth while a held connection still outlives three reloads.
 */
export const DEFAULT_MAX_OLD_WORKERS = 3;

export interface OldWorkerBoundOptions {
  /** At most this many old workers drain at once; 0 stops every old worker. */
  readonly maxOldWorkers: number;
  readonly clock: Clock;
  readonly showProc: (signal?: AbortSignal) => Promise<ProcSnapshot>;
  /** SIGKILL an old worker still listed this long after its SIGTERM. @default 2_000 */
  readonly killAfterMs?: number;
  /** Between two `show proc` polls while waiting for stopped workers to go. @default 50 */
  readonly pollMs?: number;
  /** Replaces process.kill (tests). */
  readonly kill?: (pid: number, signal: NodeJS.Signals) => void;
  /** Replaces the /proc lookup of a pid's parent (tests); undefined when the pid is gone. */
  readonly parentOf?: (pid: number) => Promise<number | undefined>;
}

export interface TrimResult {
  /** Old workers signalled, oldest first. */
  readonly stopped: readonly number[];
  /** Of those, the ones that needed SIGKILL. */
  readonly killed: readonly number[];
  /** Old workers listed once done (at most the limit asked for, unless one would not die). */
  readonly remaining: number;
}

/** The old workers past `keep`, oldest first: the most reloads survived, then the longest uptime. */
export function excessOldWorkers(snapshot: ProcSnapshot, keep: number): ProcEntry[] {
  const oldestFirst = [...snapshot.oldWorkers].sort((a, b) => b.reloads - a.reloads || (b.uptimeSeconds || 0) - (a.uptimeSeconds || 0));
  return oldestFirst.slice(0, Math.max(0, oldestFirst.length - Math.max(0, keep)));
}

export class OldWorkerBound {
  readonly maxOldWorkers: number;
  readonly #options: OldWorkerBoundOptions;
  readonly #kill: (pid: number, signal: NodeJS.Signals) => void;
  readonly #parentOf: (pid: number) => Promise<number | undefined>;

  constructor(options: OldWorkerBoundOptions) {
    if (!Number.isInteger(options.maxOldWorkers) || options.maxOldWorkers < 0) {
      throw new RangeError(`maxOldWorkers must be a whole number of workers, 0 or more (got ${String(options.maxOldWorkers)})`);
    }
    this.maxOldWorkers = options.maxOldWorkers;
    this.#options = options;
    this.#kill = options.kill ?? ((pid, signal) => process.kill(pid, signal));
    this.#parentOf = options.parentOf ?? parentPid;
  }

  /**
   * Before a reload: leaves room for the worker the reload turns into an old one, so the count
   * never goes past the bound, even for a moment.
   */
  beforeReload(signal?: AbortSignal): Promise<TrimResult> {
    return this.trim(Math.max(0, this.maxOldWorkers - 1), signal);
  }

  /** After a reload (or at any time): back to the bound. */
  afterReload(signal?: AbortSignal): Promise<TrimResult> {
    return this.trim(this.maxOldWorkers, signal);
  }

  /** Stops the oldest old workers until at most `keep` are listed. */
  async trim(keep: number, signal?: AbortSignal): Promise<TrimResult> {
    const snapshot = await this.#options.showProc(signal);
    const excess = excessOldWorkers(snapshot, keep);
    if (excess.length === 0) return { stopped: [], killed: [], remaining: snapshot.oldWorkers.length };
    const master = snapshot.master.pid;
    const stopped: number[] = [];
    for (const worker of excess) if (await this.#signalChild(master, worker.pid, 'SIGTERM')) stopped.push(worker.pid);

    const killed: number[] = [];
    const clock = this.#options.clock;
    const deadline = clock.monotonic() + (this.#options.killAfterMs ?? 2_000);
    let remaining = await this.#listed(stopped, signal);
    while (remaining.size > 0 && clock.monotonic() < deadline) {
      await sleep(clock, this.#options.pollMs ?? 50, signal);
      remaining = await this.#listed(stopped, signal);
    }
    for (const pid of remaining) if (await this.#signalChild(master, pid, 'SIGKILL')) killed.push(pid);
    const after = await this.#options.showProc(signal);
    return { stopped, killed, remaining: after.oldWorkers.length };
  }

  /** Which of `pids` the master still lists as old workers. */
  async #listed(pids: readonly number[], signal?: AbortSignal): Promise<Set<number>> {
    const listed = new Set((await this.#options.showProc(signal)).oldWorkers.map((w) => w.pid));
    return new Set(pids.filter((pid) => listed.has(pid)));
  }

  /** Signals `pid` only while it is still a child of `master`; false when it is not (any more). */
  async #signalChild(master: number, pid: number, signal: NodeJS.Signals): Promise<boolean> {
    if ((await this.#parentOf(pid)) !== master) return false;
    try {
      this.#kill(pid, signal);
      return true;
    } catch {
      // ESRCH: it exited in between.
      return false;
    }
  }
}

/** The parent pid of `pid` from /proc/<pid>/stat, or undefined when it is gone (or not Linux). */
export async function parentPid(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid ...; comm may hold spaces and parentheses, so read from the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state === 'Z' ? undefined : Number(ppid);
  } catch {
    return undefined;
  }
}

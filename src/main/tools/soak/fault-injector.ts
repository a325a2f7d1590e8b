// FaultInjector: acts each fault out on the running engine and tells the FaultLog when it is
// injected and when it stops acting (the log judges recovery).
// - crash, hang, oom: arms the worker fault switch; the fault is cleared once a worker has taken
//   it and a render has failed since (the Coordinator publishes reconciliation.failed).
// - leadership: the elector steps down, and back up after the hold time.
// - output: a file takes the output directory's place (every write fails, as root too), and is
//   removed after the hold time; the writer creates the directory again.
// - haproxy-worker, haproxy-master: SIGKILL of HAProxy's current worker, or of its master; the
//   fault is cleared once HAProxy runs again (haproxy-kill.ts).
// Every fault is bounded: it must be cleared within its own time (the render timeout for a worker
// fault, the hold, the kill's bound) plus CLEAR_MARGIN_MS, and then recover within
// RECOVERY_MARGIN_MS beyond one render timeout. A fault that could not be set up or undone, or
// missed a bound, is given up as failed with the reason (FaultLog.failed), and the rotation goes on.
import { renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { StoreProvider } from '../../stores/store-provider.js';
import type { FaultLog, FaultRecord } from './fault-log.js';
import type { FaultKind } from './soak-options.js';
import type { SwitchableElector } from './switchable-elector.js';
import type { WorkerFault, WorkerFaultSwitch } from './worker-faults.js';

export interface FaultInjectorOptions {
  readonly log: FaultLog;
  readonly workers: WorkerFaultSwitch;
  readonly elector: SwitchableElector;
  /** The OutputWriter's directory. */
  readonly outputRoot: string;
  /** Read for the store version at clearing. */
  readonly stores: StoreProvider;
  readonly clock: Clock;
  /** How long a leadership or output fault lasts. */
  readonly holdMs: number;
  /** ms since the soak started, the FaultLog's time. */
  readonly elapsedMs: () => number;
  /** A render running longer fails: how long a hang acts. */
  readonly renderTimeoutMs: number;
  /** With a real HAProxy: kills its worker or master, resolving once HAProxy runs again and rejecting past `boundMs`. */
  readonly haproxy?: { kill(which: 'worker' | 'master'): Promise<void>; readonly boundMs: number };
  /** A fault was given up as failed (the record says why). */
  readonly onFailed?: (record: FaultRecord) => void;
}

/** Beyond a fault's own time, how long its clearing may take before the fault is given up. */
export const CLEAR_MARGIN_MS = 30_000;
/** Beyond one render timeout, how long a cleared fault may take to recover before it is given up. */
export const RECOVERY_MARGIN_MS = 60_000;

const WORKER_FAULTS: readonly FaultKind[] = ['crash', 'hang', 'oom'] satisfies readonly WorkerFault[];
const HOLD_FAULTS: readonly FaultKind[] = ['leadership', 'output'];
const BLOCKER = 'the soak put this file where the output directory belongs: every write fails until it is removed\n';

export class FaultInjector {
  readonly #options: FaultInjectorOptions;
  /** The switch's `taken` count when the open worker fault was armed. */
  #takenBefore = 0;
  /** Set while a leadership or output fault holds: undoes it (and clears the fault) now. */
  #undo: { readonly timer: TimerHandle; readonly run: () => Promise<void> } | undefined;
  /** The open fault's bound: fails it unless it is cleared (then recovers) in time. */
  #bound: TimerHandle | undefined;

  constructor(options: FaultInjectorOptions) {
    this.#options = options;
  }

  /**
   * Injects `kind`. Never rejects: a fault that cannot be set up is recorded failed with the
   * reason. The fault's bounds start now (see the header).
   */
  async inject(kind: FaultKind): Promise<void> {
    const { log } = this.#options;
    log.injected(kind, this.#options.elapsedMs());
    const record = log.open as FaultRecord;
    this.#watch(record, this.#clearBoundMs(kind), () => `not cleared within ${this.#clearBoundMs(kind) / 1000} s of its injection`);
    try {
      await this.#act(kind, record);
    } catch (error) {
      this.#fail(record, `${kind} could not be injected: ${(error as Error).message}`);
    }
  }

  async #act(kind: FaultKind, record: FaultRecord): Promise<void> {
    const { workers, elector, outputRoot } = this.#options;
    switch (kind) {
      case 'crash':
      case 'hang':
      case 'oom':
        this.#takenBefore = workers.taken;
        workers.arm(kind);
        return;
      case 'leadership':
        elector.stepDown();
        this.#holdThen(record, async () => elector.stepUp());
        return;
      case 'output':
        await blockDirectory(outputRoot);
        this.#holdThen(record, () => rm(outputRoot, { force: true }));
        return;
      case 'haproxy-worker':
      case 'haproxy-master': {
        const haproxy = this.#options.haproxy;
        if (haproxy === undefined) throw new Error(`${kind} needs a HAProxy`);
        await haproxy.kill(kind === 'haproxy-worker' ? 'worker' : 'master');
        this.#clear(record);
        return;
      }
      default: {
        const unreachable: never = kind;
        throw new Error(`unknown fault ${String(unreachable)}`);
      }
    }
  }

  /** A render failed: the open worker fault, once a worker has taken it, has acted. */
  renderFailed(): void {
    const open = this.#options.log.open;
    if (open === undefined || !WORKER_FAULTS.includes(open.kind) || this.#options.workers.taken <= this.#takenBefore) return;
    this.#clear(open);
  }

  /** Ends whatever fault still acts: a hold is undone now, an armed worker fault nobody took is withdrawn. */
  async restore(): Promise<void> {
    const open = this.#options.log.open;
    if (this.#options.workers.disarm() && open !== undefined) this.#clear(open);
    const hold = this.#undo;
    if (hold === undefined) return;
    this.#options.clock.clearTimeout(hold.timer);
    await hold.run();
  }

  /** Stops watching the open fault's bounds (the soak is over). */
  close(): void {
    this.#options.clock.clearTimeout(this.#bound);
    this.#bound = undefined;
  }

  #holdThen(record: FaultRecord, undo: () => Promise<void>): void {
    // Once, whether the timer or `restore` comes first; both wait for the same undo. An undo that
    // fails gives the fault up (it may still act), rather than leaving it open for good.
    let undone: Promise<void> | undefined;
    const run = (): Promise<void> =>
      (undone ??= (async () => {
        try {
          await undo();
          this.#clear(record);
        } catch (error) {
          this.#fail(record, `undoing ${record.kind} failed: ${(error as Error).message}`);
        } finally {
          this.#undo = undefined;
        }
      })());
    const timer = this.#options.clock.setTimeout(() => void run(), this.#options.holdMs);
    this.#undo = { timer, run };
  }

  /** Clears `record` if it is still the open fault, and starts its recovery bound. */
  #clear(record: FaultRecord): void {
    const { log } = this.#options;
    if (log.open !== record || record.clearedMs !== null) return;
    log.cleared(this.#options.elapsedMs(), this.#options.stores.version);
    const boundMs = this.#options.renderTimeoutMs + RECOVERY_MARGIN_MS;
    this.#watch(record, boundMs, () => `cleared, but not recovered within ${boundMs / 1000} s (no ${record.kind === 'output' ? 'write' : 'render or deployment'} of store version ${record.clearedVersion ?? '?'} or later)`);
  }

  /** Gives `record` up as failed if it is still the open fault; an armed worker fault nobody took is withdrawn. */
  #fail(record: FaultRecord, reason: string): void {
    const { log } = this.#options;
    if (log.open !== record) return;
    this.close();
    if (WORKER_FAULTS.includes(record.kind)) this.#options.workers.disarm();
    log.failed(this.#options.elapsedMs(), reason);
    this.#options.onFailed?.(record);
  }

  /**
   * After `ms`, fails `record` with `reason()` unless it is no longer open (recovered or failed).
   * One bound at a time: the clearing of a fault replaces its clear bound with its recovery bound.
   */
  #watch(record: FaultRecord, ms: number, reason: () => string): void {
    this.close();
    this.#bound = this.#options.clock.setTimeout(
      () => {
        this.#bound = undefined;
        if (this.#options.log.open === record) this.#fail(record, reason());
      },
      ms,
      { unref: true },
    );
  }

  #clearBoundMs(kind: FaultKind): number {
    const own = WORKER_FAULTS.includes(kind)
      ? this.#options.renderTimeoutMs
      : HOLD_FAULTS.includes(kind)
        ? this.#options.holdMs
        : (this.#options.haproxy?.boundMs ?? 0);
    return own + CLEAR_MARGIN_MS;
  }
}

/**
 * Replaces the directory with a file. The directory is first renamed aside, which is atomic, so a
 * writer still filling it cannot make the removal fail (a recursive removal of a directory being
 * written to ends in ENOTEMPTY). The rename and the file's creation are synchronous, so no writer
 * on this thread runs between them; one on another thread may create the directory again in
 * between, and then both are tried again.
 */
export async function blockDirectory(root: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const aside = `${root}.removed-${attempt}`;
    try {
      try {
        renameSync(root, aside);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      writeFileSync(root, BLOCKER, { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 20) throw error;
    } finally {
      await rm(aside, { recursive: true, force: true, maxRetries: 5 });
    }
  }
}

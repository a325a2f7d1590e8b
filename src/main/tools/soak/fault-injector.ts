// FaultInjector: acts each fault out on the running engine and tells the FaultLog when it is
// injected and when it stops acting (the log judges recovery).
// - crash, hang, oom: arms the worker fault switch; the fault is cleared once a worker has taken
//   it and a render has failed since (the Coordinator publishes reconciliation.failed).
// - leadership: the elector steps down, and back up after the hold time.
// - output: a file takes the output directory's place (every write fails, as root too), and is
//   removed after the hold time; the writer creates the directory again.
// - haproxy-worker, haproxy-master: SIGKILL of HAProxy's current worker, or of its master; the
//   fault is cleared once the supervisor has HAProxy running again (a new master with a worker).
import { rm, writeFile } from 'node:fs/promises';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { StoreProvider } from '../../stores/store-provider.js';
import type { FaultLog } from './fault-log.js';
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
  /** With a real HAProxy: kills its worker or master, resolving once HAProxy runs again. */
  readonly haproxy?: { kill(which: 'worker' | 'master'): Promise<void> };
}

const WORKER_FAULTS: readonly FaultKind[] = ['crash', 'hang', 'oom'] satisfies readonly WorkerFault[];
const BLOCKER = 'the soak put this file where the output directory belongs: every write fails until it is removed\n';

export class FaultInjector {
  readonly #options: FaultInjectorOptions;
  /** The switch's `taken` count when the open worker fault was armed. */
  #takenBefore = 0;
  /** Set while a leadership or output fault holds: undoes it (and clears the fault) now. */
  #undo: { readonly timer: TimerHandle; readonly run: () => Promise<void> } | undefined;

  constructor(options: FaultInjectorOptions) {
    this.#options = options;
  }

  /** Injects `kind`; rejects (leaving the fault open) when the fault could not be set up. */
  async inject(kind: FaultKind): Promise<void> {
    const { log, workers, elector, outputRoot } = this.#options;
    log.injected(kind, this.#options.elapsedMs());
    switch (kind) {
      case 'crash':
      case 'hang':
      case 'oom':
        this.#takenBefore = workers.taken;
        workers.arm(kind);
        return;
      case 'leadership':
        elector.stepDown();
        this.#holdThen(async () => elector.stepUp());
        return;
      case 'output':
        await blockDirectory(outputRoot);
        this.#holdThen(() => rm(outputRoot, { force: true }));
        return;
      case 'haproxy-worker':
      case 'haproxy-master': {
        const haproxy = this.#options.haproxy;
        if (haproxy === undefined) throw new Error(`${kind} needs a HAProxy`);
        await haproxy.kill(kind === 'haproxy-worker' ? 'worker' : 'master');
        this.#clear();
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
    this.#clear();
  }

  /** Ends whatever fault still acts: a hold is undone now, an armed worker fault nobody took is withdrawn. */
  async restore(): Promise<void> {
    if (this.#options.workers.disarm()) this.#clear();
    const hold = this.#undo;
    if (hold === undefined) return;
    this.#options.clock.clearTimeout(hold.timer);
    await hold.run();
  }

  #holdThen(undo: () => Promise<void>): void {
    // Once, whether the timer or `restore` comes first; both wait for the same undo.
    let undone: Promise<void> | undefined;
    const run = (): Promise<void> =>
      (undone ??= (async () => {
        await undo();
        this.#clear();
        this.#undo = undefined;
      })());
    const timer = this.#options.clock.setTimeout(() => {
      run().catch((error: unknown) => console.error(`soak: undoing a fault failed: ${(error as Error).message}`));
    }, this.#options.holdMs);
    this.#undo = { timer, run };
  }

  #clear(): void {
    this.#options.log.cleared(this.#options.elapsedMs(), this.#options.stores.version);
  }
}

/**
 * Replaces the directory with a file. The writer may create the directory again between the
 * removal and the file's creation; then both are tried again.
 */
async function blockDirectory(root: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await rm(root, { recursive: true, force: true, maxRetries: 5 });
    try {
      await writeFile(root, BLOCKER, { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw error;
    }
  }
}

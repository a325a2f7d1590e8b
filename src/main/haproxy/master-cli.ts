// MasterCli: the master CLI of a HAProxy in master-worker mode (`-W -S <socket>`). `showProc()`
// reads the process table; `reload()` asks for a reload and proves it happened. HAProxy 2.6
// answers `reload` with nothing and closes the connection, and a reload that fails leaves the
// old worker serving the old config, so success is read back from `show proc`: the master's
// reload counter went up, its failure counter did not, and a worker that was not there before
// exists. Reloads are serialised: two overlapping ones could not be told apart.
import { HaproxyCliError } from '../core/errors.js';
import { systemClock, sleep, type Clock } from '../core/clock.js';
import { UnixSocketTransport, type CliTransport } from './cli-transport.js';
import { parseShowProc, type ProcSnapshot } from './show-proc.js';

export interface MasterCliOptions {
  /** The `-S` socket (`<out>/run/master.sock` under HaproxyProcess). */
  readonly socketPath: string;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Per exchange. @default 5_000 */
  readonly timeoutMs?: number;
  /** Replaces the UNIX socket (tests). */
  readonly transport?: CliTransport;
}

export interface ReloadOptions {
  /** How long the new worker may take to appear (a large config loads for a while). @default 20_000 */
  readonly timeoutMs?: number;
  /** Between two `show proc` polls. @default 100 */
  readonly pollMs?: number;
  readonly signal?: AbortSignal;
}

export interface ReloadResult {
  readonly ok: boolean;
  /** What happened, in words, for logs and `deployment.completed.error`. */
  readonly detail: string;
  /** The worker serving now: the new one on success, the surviving old one after a failure. */
  readonly workerPid: number | undefined;
  /** The master's reload counter after the attempt (undefined when it never answered). */
  readonly reloads: number | undefined;
  readonly durationMs: number;
}

export class MasterCli {
  readonly socketPath: string;
  readonly #transport: CliTransport;
  readonly #clock: Clock;
  /** The reload in progress; the next waits for it. */
  #reloading: Promise<unknown> = Promise.resolve();

  constructor(options: MasterCliOptions) {
    this.socketPath = options.socketPath;
    this.#clock = options.clock ?? systemClock;
    this.#transport = options.transport ?? new UnixSocketTransport({ socketPath: options.socketPath, clock: this.#clock, timeoutMs: options.timeoutMs ?? 5_000 });
  }

  /** The process table. `; quit` ends the session: the master CLI stays open after a lone command. */
  async showProc(signal?: AbortSignal): Promise<ProcSnapshot> {
    return parseShowProc(await this.#transport.exchange('show proc; quit\n', signal), this.socketPath);
  }

  /** Reloads and verifies (see the header). Never throws for HAProxy's sake: the result says how it went. */
  reload(options: ReloadOptions = {}): Promise<ReloadResult> {
    const run = this.#reloading.then(() => this.#reload(options));
    this.#reloading = run.catch(() => undefined);
    return run;
  }

  async #reload(options: ReloadOptions): Promise<ReloadResult> {
    const timeoutMs = options.timeoutMs ?? 20_000;
    const pollMs = options.pollMs ?? 100;
    const started = this.#clock.monotonic();
    const elapsed = (): number => this.#clock.monotonic() - started;
    const result = (ok: boolean, detail: string, workerPid: number | undefined, reloads: number | undefined): ReloadResult => ({
      ok,
      detail,
      workerPid,
      reloads,
      durationMs: elapsed(),
    });

    let before: ProcSnapshot;
    try {
      before = await this.showProc(options.signal);
    } catch (error) {
      return result(false, `master CLI unreachable before the reload: ${(error as Error).message}`, undefined, undefined);
    }
    const previousWorkers = new Set(before.workers.map((w) => w.pid));
    try {
      const reply = await this.#transport.exchange('reload\n', options.signal);
      if (reply.trim() !== '') return result(false, `'reload' was refused: ${reply.trim().slice(0, 500)}`, before.workers[0]?.pid, before.master.reloads);
    } catch (error) {
      // The master closes (or resets) the connection as it re-executes itself: expected. Only a
      // refused connection proves the command never arrived; anything else is settled below.
      if (!(error instanceof HaproxyCliError) || error.reason === 'connect') {
        return result(false, `'reload' could not be sent: ${(error as Error).message}`, before.workers[0]?.pid, before.master.reloads);
      }
    }

    let lastError: string;
    for (;;) {
      if (options.signal?.aborted === true) return result(false, 'reload verification aborted', undefined, undefined);
      try {
        const now = await this.showProc(options.signal);
        const outcome = judge(before, previousWorkers, now);
        if (outcome !== undefined) return result(outcome.ok, outcome.detail, outcome.workerPid, now.master.reloads);
        lastError = `reload counter ${now.master.reloads}, no new worker yet`;
      } catch (error) {
        // While the master re-executes, its socket refuses or resets connections.
        lastError = (error as Error).message;
      }
      if (elapsed() >= timeoutMs) {
        return result(false, `no new worker within ${timeoutMs} ms of the reload (${lastError})`, undefined, undefined);
      }
      try {
        await sleep(this.#clock, pollMs, options.signal);
      } catch {
        return result(false, 'reload verification aborted', undefined, undefined);
      }
    }
  }
}

interface Outcome {
  readonly ok: boolean;
  readonly detail: string;
  readonly workerPid: number | undefined;
}

/** The verdict of one `show proc` after a reload, or undefined while it is still under way. */
export function judge(before: ProcSnapshot, previousWorkers: ReadonlySet<number>, now: ProcSnapshot): Outcome | undefined {
  if (now.master.pid !== before.master.pid) {
    return { ok: false, detail: `the master changed from pid ${before.master.pid} to ${now.master.pid} (it was restarted, not reloaded)`, workerPid: now.workers[0]?.pid };
  }
  if (now.master.failedReloads > before.master.failedReloads) {
    const serving = now.workers[0]?.pid;
    return {
      ok: false,
      detail: `HAProxy refused the new configuration (failed reloads: ${now.master.failedReloads}); worker ${serving ?? 'none'} keeps serving the previous one`,
      workerPid: serving,
    };
  }
  if (now.master.reloads <= before.master.reloads) return undefined;
  const fresh = now.workers.find((w) => !previousWorkers.has(w.pid));
  if (fresh === undefined) return undefined;
  return { ok: true, detail: `reloaded: worker ${fresh.pid} replaced ${[...previousWorkers].join(', ') || 'none'} (reload ${now.master.reloads})`, workerPid: fresh.pid };
}

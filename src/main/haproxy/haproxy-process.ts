// HaproxyProcess: runs and supervises a local HAProxy in master-worker mode,
//   haproxy -W -S <runDir>/master.sock,mode,600 -f <configFile>
// with the run directory created 0700. The CALLER puts the admin Runtime API socket in the config,
// `stats socket <runDir>/admin.sock ... level admin` (the default template's `runtimeSocket` value):
// `runtimeApi` talks to it. The local DeployTarget is built from `runtimeApi` (applyRuntime),
// OutputDirectory (writeFiles) and `reload()`; `onRestart` feeds haptic_haproxy_restarts_total.
// Each reload keeps the draining old workers within `maxOldWorkers` (see old-workers.ts), and
// `onOldWorkersStopped` feeds haptic_haproxy_old_workers_stopped_total.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, lstat, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { deferred, type Deferred } from '../core/async.js';
import { sleep, systemClock, type Clock, type TimerHandle } from '../core/clock.js';
import { HaproxyStartError } from '../core/errors.js';
import { defaultLogger } from '../core/logger.js';
import { haproxyBinary } from './haproxy-check.js';
import { checkConfigFits, readFdLimit, type FdLimit } from './fd-limits.js';
import { HaproxyLog } from './haproxy-log.js';
import { MasterCli, type ReloadOptions, type ReloadResult } from './master-cli.js';
import { DEFAULT_MAX_OLD_WORKERS, OldWorkerBound, type TrimResult } from './old-workers.js';
import { RestartBackoff, type RestartBackoffOptions } from './restart-backoff.js';
import { RuntimeApi } from './runtime-api.js';
import type { ProcSnapshot } from './show-proc.js';

export interface HaproxyProcessOptions {
  readonly configFile: string;
  /** Holds master.sock (and, by convention, admin.sock); created, or narrowed, to mode 0700. */
  readonly runDir: string;
  /** The admin socket the config declares. @default `<runDir>/admin.sock` */
  readonly adminSocket?: string;
  /** @default HAPROXY_BIN or `haproxy` */
  readonly binary?: string;
  /** @default systemClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Until the master answers and a worker exists. @default 15_000 */
  readonly startTimeoutMs?: number;
  /** stop(): SIGUSR1 (finish connections), then SIGTERM after this. @default 3_000 */
  readonly softStopMs?: number;
  /** stop(): SIGKILL this long after SIGTERM. The whole stop stays under 10 s with the defaults. @default 3_000 */
  readonly killAfterMs?: number;
  readonly backoff?: RestartBackoffOptions;
  /** Called once per restart attempt after an unexpected exit (the metric counts these). */
  readonly onRestart?: (event: HaproxyRestart) => void;
  /** HAProxy's stdout (its `log stdout` traffic log): the controller's stdout, or nowhere. @default 'inherit' */
  readonly stdout?: 'inherit' | 'ignore';
  /** The descriptor limit HAProxy will inherit; read from /proc/self/limits when omitted. */
  readonly fdLimit?: FdLimit;
  /** Old workers left draining after a reload; past it the oldest are stopped. @default DEFAULT_MAX_OLD_WORKERS */
  readonly maxOldWorkers?: number;
  /** Called when a reload stopped old workers past `maxOldWorkers` (the metric counts `stopped`). */
  readonly onOldWorkersStopped?: (event: { readonly stopped: number; readonly killed: number }) => void;
}

export interface HaproxyRestart {
  /** Restart attempts so far, this one included. */
  readonly restarts: number;
  /** How the previous process ended (null when it never started). */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly delayMs: number;
}

export type HaproxyState = 'stopped' | 'starting' | 'running' | 'restarting' | 'stopping';

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class HaproxyProcess {
  readonly configFile: string;
  readonly runDir: string;
  readonly masterSocket: string;
  readonly adminSocket: string;
  readonly masterCli: MasterCli;
  readonly runtimeApi: RuntimeApi;
  readonly oldWorkers: OldWorkerBound;
  readonly #binary: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #log: HaproxyLog;
  readonly #backoff: RestartBackoff;
  readonly #options: HaproxyProcessOptions;
  #state: HaproxyState = 'stopped';
  #child: ChildProcess | undefined;
  #exited: Deferred<Exit> | undefined;
  /** Aborted by stop(): ends start waits, restart timers and reload polls of this run. */
  #lifecycle = new AbortController();
  #restartTimer: TimerHandle | undefined;
  #restarts = 0;
  #reloading: Promise<unknown> = Promise.resolve();

  /** The layout of an output directory: `<out>/haproxy.cfg`, sockets in `<out>/run`. */
  static forOutputDirectory(outDir: string, options: Partial<HaproxyProcessOptions> = {}): HaproxyProcess {
    return new HaproxyProcess({ configFile: join(outDir, 'haproxy.cfg'), runDir: join(outDir, 'run'), ...options });
  }

  constructor(options: HaproxyProcessOptions) {
    this.#options = options;
    this.configFile = options.configFile;
    this.runDir = options.runDir;
    this.masterSocket = join(options.runDir, 'master.sock');
    this.adminSocket = options.adminSocket ?? join(options.runDir, 'admin.sock');
    this.#binary = options.binary ?? haproxyBinary();
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'haproxy-process' });
    this.#log = new HaproxyLog({ logger: this.#logger, clock: this.#clock });
    this.#backoff = new RestartBackoff(this.#clock, options.backoff);
    this.masterCli = new MasterCli({ socketPath: this.masterSocket, clock: this.#clock });
    this.runtimeApi = new RuntimeApi({ socketPath: this.adminSocket, clock: this.#clock });
    const maxOldWorkers = options.maxOldWorkers ?? DEFAULT_MAX_OLD_WORKERS;
    this.oldWorkers = new OldWorkerBound({ maxOldWorkers, clock: this.#clock, showProc: (signal) => this.masterCli.showProc(signal) });
  }

  get state(): HaproxyState {
    return this.#state;
  }

  /** The master's pid while one runs. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Restart attempts after unexpected exits since construction. */
  get restarts(): number {
    return this.#restarts;
  }

  /**
   * Starts HAProxy and resolves once its master CLI answers with a worker (and, when the config
   * declares the admin socket, that worker answers too).
   * @throws FdLimitError (before anything is spawned) when the config's maxconn cannot fit the descriptor limit;
   *   HaproxyStartError with HAProxy's alert lines when it exits or never becomes ready.
   */
  async start(): Promise<ProcSnapshot> {
    if (this.#state !== 'stopped') throw new Error(`HaproxyProcess.start: already ${this.#state}`);
    this.#state = 'starting';
    this.#lifecycle = new AbortController();
    try {
      const snapshot = await this.#launch(this.#lifecycle.signal);
      this.#state = 'running';
      return snapshot;
    } catch (error) {
      if (this.#state === 'starting') this.#state = 'stopped';
      throw error;
    }
  }

  /**
   * A master CLI reload, verified (see MasterCli.reload), with HAProxy's alert lines added to a
   * failure. A restart loads the files on disk when it begins, which need not be the files the
   * caller just wrote for this reload. So while a restart is under way the reload waits for it
   * (at most the reload's `timeoutMs`), and when HAProxy dies during the reload, it is reloaded
   * once more after its restart.
   */
  reload(options: Omit<ReloadOptions, 'signal'> = {}): Promise<ReloadResult> {
    // One at a time, so the room made for one reload's old worker is not taken by another's.
    const run = this.#reloading.then(() => this.#reloadBounded(options));
    this.#reloading = run.catch(() => undefined);
    return run;
  }

  async #reloadBounded(options: Omit<ReloadOptions, 'signal'>): Promise<ReloadResult> {
    const first = await this.#reloadOnce(options);
    const result = first.died ? (await this.#reloadOnce(options)).result : first.result;
    if (this.#state === 'running') await this.#boundOldWorkers((signal) => this.oldWorkers.afterReload(signal));
    return result;
  }

  /** Stops old workers past the bound; a failure to is logged, never the reload's. */
  async #boundOldWorkers(trim: (signal: AbortSignal) => Promise<TrimResult>): Promise<void> {
    try {
      const { stopped, killed, remaining } = await trim(this.#lifecycle.signal);
      if (stopped.length === 0) return;
      this.#logger.warn({ stopped, killed, remaining, maxOldWorkers: this.oldWorkers.maxOldWorkers }, 'stopped the oldest draining HAProxy workers: more than maxOldWorkers');
      this.#options.onOldWorkersStopped?.({ stopped: stopped.length, killed: killed.length });
    } catch (error) {
      if (!this.#lifecycle.signal.aborted) this.#logger.warn({ err: error }, 'could not bound the draining HAProxy workers');
    }
  }

  /** One verified reload once HAProxy runs; `died`: the master it went to exited meanwhile. */
  async #reloadOnce(options: Omit<ReloadOptions, 'signal'>): Promise<{ readonly result: ReloadResult; readonly died: boolean }> {
    await this.#whileRestarting(options.timeoutMs ?? 20_000);
    const child = this.#child;
    const exited = this.#exited;
    if (this.#state !== 'running' || child === undefined || exited === undefined) {
      return { result: { ok: false, detail: `HAProxy is not running (${this.#state})`, workerPid: undefined, reloads: undefined, durationMs: 0 }, died: false };
    }
    await this.#boundOldWorkers((signal) => this.oldWorkers.beforeReload(signal));
    const mark = this.#log.mark();
    // A kept Runtime API session is on the replaced worker: none survives the reload.
    const result = await this.masterCli.reload({ ...options, signal: this.#lifecycle.signal }).finally(() => this.runtimeApi.closeSession());
    if (result.ok) return { result, died: false };
    // A master that never answered may be dying: its exit is reported a moment later.
    if (result.reloads === undefined) await Promise.race([exited.promise, sleep(this.#clock, 250, this.#lifecycle.signal).catch(() => undefined)]);
    if (child.exitCode !== null || child.signalCode !== null) {
      // Its exit is handled (and the restart scheduled) once its stderr has ended.
      await exited.promise;
      return { result, died: true };
    }
    // The master writes its alerts before it counts the failure; give the pipe a turn to deliver them.
    await new Promise((resolve) => setImmediate(resolve));
    const alerts = this.#log.alertsSince(mark);
    return { result: alerts.length === 0 ? result : { ...result, detail: `${result.detail}: ${alerts.join(' | ')}` }, died: false };
  }

  /** Returns once no start or restart is under way, or after `timeoutMs`. */
  async #whileRestarting(timeoutMs: number): Promise<void> {
    const deadline = this.#clock.monotonic() + timeoutMs;
    while ((this.#state === 'restarting' || this.#state === 'starting') && this.#clock.monotonic() < deadline) {
      try {
        await sleep(this.#clock, 50, this.#lifecycle.signal);
      } catch {
        return;
      }
    }
  }

  /**
   * Stops HAProxy: SIGUSR1 (soft stop), SIGTERM after `softStopMs`, SIGKILL after `killAfterMs`
   * more; resolves once the master is gone (or a second after SIGKILL). Cancels any pending restart.
   * Workers exit by themselves when their master is gone.
   */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopping';
    this.#lifecycle.abort(new DOMException('HaproxyProcess stopped', 'AbortError'));
    this.#clock.clearTimeout(this.#restartTimer);
    this.#restartTimer = undefined;
    const child = this.#child;
    const exited = this.#exited;
    if (child !== undefined && exited !== undefined) await this.#terminate(child, exited.promise);
    this.#state = 'stopped';
  }

  async #launch(signal: AbortSignal): Promise<ProcSnapshot> {
    await prepareRunDir(this.runDir);
    const config = await readFile(this.configFile, 'utf8');
    const fdLimit = this.#options.fdLimit ?? (await readFdLimit());
    if (fdLimit !== undefined) checkConfigFits(config, fdLimit);
    const probeAdmin = statsSocketPaths(config).includes(this.adminSocket);
    if (!probeAdmin) this.#logger.warn({ adminSocket: this.adminSocket }, 'the config declares no stats socket at the admin socket path; the Runtime API is unavailable');
    signal.throwIfAborted();

    const mark = this.#log.mark();
    const exited = this.#spawn();
    const deadline = this.#clock.monotonic() + (this.#options.startTimeoutMs ?? 15_000);
    let lastProblem: string;
    for (;;) {
      const exit = await Promise.race([exited.promise, this.#readiness(probeAdmin, signal).then((r) => ({ ready: r }))]);
      if ('code' in exit) {
        throw new HaproxyStartError(`HAProxy exited during start (${describeExit(exit)})`, this.#log.alertsSince(mark));
      }
      if (typeof exit.ready !== 'string') return exit.ready;
      lastProblem = exit.ready;
      if (signal.aborted) throw new HaproxyStartError('start aborted: HaproxyProcess was stopped');
      if (this.#clock.monotonic() >= deadline) {
        const child = this.#child;
        if (child !== undefined) await this.#terminate(child, exited.promise, 0);
        throw new HaproxyStartError(`HAProxy was not ready within ${this.#options.startTimeoutMs ?? 15_000} ms (${lastProblem})`, this.#log.alertsSince(mark));
      }
      await sleep(this.#clock, 50, signal).catch(() => undefined);
    }
  }

  /** One readiness probe: the snapshot when ready, else why not. */
  async #readiness(probeAdmin: boolean, signal: AbortSignal): Promise<ProcSnapshot | string> {
    try {
      const snapshot = await this.masterCli.showProc(signal);
      if (snapshot.workers.length === 0) return 'the master lists no worker yet';
      if (probeAdmin) await this.runtimeApi.send('show info', signal);
      return snapshot;
    } catch (error) {
      return (error as Error).message;
    }
  }

  #spawn(): Deferred<Exit> {
    this.runtimeApi.closeSession();
    const args = ['-W', '-S', `${this.masterSocket},mode,600`, '-f', this.configFile];
    const child = spawn(this.#binary, args, { stdio: ['ignore', this.#options.stdout ?? 'inherit', 'pipe'], cwd: dirname(this.configFile) });
    const exited = deferred<Exit>();
    this.#child = child;
    this.#exited = exited;
    child.stderr?.on('data', (chunk: Buffer) => this.#log.write(chunk));
    child.on('error', (error) => {
      // Spawning failed (ENOENT, EACCES): there will be no 'exit'.
      this.#log.write(`[ALERT] (0) : cannot run ${this.#binary}: ${error.message}\n`);
      this.#onChildExit(child, exited, { code: null, signal: null });
    });
    child.on('exit', (code, signal) => {
      // 'exit' can come before the last stderr chunk (the alert saying why). Wait for the pipe's
      // end, but not for long: a worker outliving its master keeps the pipe open.
      const settle = (): void => this.#onChildExit(child, exited, { code, signal });
      const stderr = child.stderr;
      if (stderr === null || stderr.readableEnded) return settle();
      const timer = this.#clock.setTimeout(settle, 200, { unref: true });
      stderr.once('end', () => {
        this.#clock.clearTimeout(timer);
        settle();
      });
    });
    this.#logger.info({ pid: child.pid, args }, 'HAProxy started');
    return exited;
  }

  #onChildExit(child: ChildProcess, exited: Deferred<Exit>, exit: Exit): void {
    if (exited.settled) return;
    this.runtimeApi.closeSession();
    this.#log.flush();
    exited.resolve(exit);
    if (this.#child !== child) return;
    this.#child = undefined;
    if (this.#state !== 'running') return;
    // Unexpected: a crash, an OOM kill, someone's SIGKILL. Start again with the config on disk.
    this.#logger.error({ pid: child.pid, code: exit.code, signal: exit.signal }, `HAProxy exited unexpectedly (${describeExit(exit)}); restarting`);
    this.#state = 'restarting';
    this.#scheduleRestart(exit);
  }

  #scheduleRestart(previous: Exit): void {
    const delayMs = this.#backoff.nextDelay();
    this.#restarts++;
    try {
      this.#options.onRestart?.({ restarts: this.#restarts, exitCode: previous.code, signal: previous.signal, delayMs });
    } catch (error) {
      this.#logger.warn({ err: error }, 'onRestart callback threw');
    }
    this.#restartTimer = this.#clock.setTimeout(() => void this.#restart(), delayMs);
  }

  async #restart(): Promise<void> {
    this.#restartTimer = undefined;
    if (this.#state !== 'restarting') return;
    try {
      await this.#launch(this.#lifecycle.signal);
      if (this.#state !== 'restarting') return;
      this.#state = 'running';
      this.#backoff.started();
      this.#logger.info({ pid: this.pid, restarts: this.#restarts }, 'HAProxy restarted');
    } catch (error) {
      if (this.#state !== 'restarting') return;
      this.#logger.error({ err: error }, 'HAProxy restart failed');
      const child = this.#child;
      if (child !== undefined && this.#exited !== undefined) await this.#terminate(child, this.#exited.promise, 0);
      this.#scheduleRestart({ code: null, signal: null });
    }
  }

  /** Signals `child` until it exits (see stop()); `softMs` 0 skips the soft stop. */
  async #terminate(child: ChildProcess, exited: Promise<Exit>, softMs = this.#options.softStopMs ?? 3_000): Promise<void> {
    const steps: [NodeJS.Signals, number][] = [
      ['SIGUSR1', softMs],
      ['SIGTERM', this.#options.killAfterMs ?? 3_000],
      ['SIGKILL', 1_000],
    ];
    for (const [signal, waitMs] of steps) {
      if (waitMs === 0 && signal !== 'SIGKILL') continue;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      if (await this.#exitsWithin(exited, waitMs)) return;
      this.#logger.warn({ pid: child.pid, signal, waitedMs: waitMs }, 'HAProxy did not exit in time; escalating');
    }
  }

  async #exitsWithin(exited: Promise<Exit>, ms: number): Promise<boolean> {
    let timer: TimerHandle | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = this.#clock.setTimeout(() => resolve(false), ms);
    });
    const result = await Promise.race([exited.then(() => true as const), timeout]);
    this.#clock.clearTimeout(timer);
    return result;
  }
}

/** The run directory, 0700 even when it already existed; never a symlink an attacker placed. */
async function prepareRunDir(runDir: string): Promise<void> {
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  const stats = await lstat(runDir);
  if (!stats.isDirectory()) throw new HaproxyStartError(`${runDir} is not a directory`);
  await chmod(runDir, 0o700);
}

/** Paths of the config's `stats socket` lines (unix sockets only). */
export function statsSocketPaths(config: string): string[] {
  const paths: string[] = [];
  for (const match of config.matchAll(/^\s*stats\s+socket\s+(\S+)/gm)) {
    const path = (match[1] as string).replace(/^unix@/, '');
    if (path.startsWith('/')) paths.push(path);
  }
  return paths;
}

function describeExit(exit: Exit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`;
}

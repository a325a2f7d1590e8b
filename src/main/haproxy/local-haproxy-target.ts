// LocalHaproxyTarget: the DeployTarget of `run --haproxy`, one HAProxy in master-worker mode on
// this machine, reading the output directory. Files go through OutputDirectory (atomic, config
// last; a render that patches the one written last has only its patched files written); the first reload starts HAProxy; later reloads go through the master CLI and are
// verified with `show proc`; runtime operations go through the admin socket. It believes only
// what HAProxy confirmed: the checksum it reports is that of the files the running worker loaded.
import type { Logger } from 'pino';
import type { DeployTarget, DeployableRender, ReloadResult, RuntimeOp } from '../deploy/deploy-target.js';
import { commandCount, runtimeCommand } from '../deploy/runtime-ops.js';
import { VIEW_PREFIX } from '../deploy/runtime-view.js';
import type { OutputDirectory, WriteHint } from '../output/output-directory.js';
import type { HaproxyProcess } from './haproxy-process.js';
import { replaceMap } from './map-replace.js';

export interface LocalHaproxyTargetOptions {
  readonly output: OutputDirectory;
  readonly haproxy: HaproxyProcess;
  readonly logger: Logger;
  /**
   * HAProxy could not start the first config it was given (a port taken, a missing permission):
   * nothing it will be given later fixes that. Later failures keep the running config instead.
   */
  readonly onFirstStartFailed?: (error: Error) => void;
}

export class LocalHaproxyTarget implements DeployTarget {
  readonly #output: OutputDirectory;
  readonly #haproxy: HaproxyProcess;
  readonly #logger: Logger;
  /** Checksum of the files last written, and of the files the running worker loaded. */
  #written: string | undefined;
  #running: string | undefined;
  #everStarted = false;
  /** The render whose files were written last (undefined after a failed write). */
  #lastWrite: DeployableRender | undefined;
  readonly #onFirstStartFailed: ((error: Error) => void) | undefined;

  constructor(options: LocalHaproxyTargetOptions) {
    this.#onFirstStartFailed = options.onFirstStartFailed;
    this.#output = options.output;
    this.#haproxy = options.haproxy;
    this.#logger = options.logger.child({ component: 'haproxy-target' });
  }

  async applyRuntime(ops: readonly RuntimeOp[]): Promise<{ readonly applied: number }> {
    if (this.#haproxy.state !== 'running') throw new Error(`HAProxy is ${this.#haproxy.state}: runtime changes need a running worker`);
    const api = this.#haproxy.runtimeApi;
    const batch: string[] = [];
    let applied = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await api.sendBatch(batch.splice(0));
    };
    for (const op of ops) {
      if (op.type === 'map-replace') {
        // A versioned replace needs the version HAProxy hands out, so it runs on its own.
        await flush();
        await replaceMap(api, op);
      } else {
        batch.push(runtimeCommand(op));
      }
      applied += commandCount(op);
    }
    await flush();
    return { applied };
  }

  /** @param hint what changed since the last write, when the caller knows better than `render.patch` (the agent does) */
  async writeFiles(render: DeployableRender, _purpose?: 'serving' | 'reload', hint?: WriteHint): Promise<void> {
    const last = this.#lastWrite;
    this.#lastWrite = undefined;
    await this.#output.write(render.haproxyConfig, render.auxiliaryFiles, hint ?? writeHint(render, last));
    this.#lastWrite = render;
    this.#written = render.checksum;
  }

  async reload(): Promise<ReloadResult> {
    const state = this.#haproxy.state;
    if (state === 'stopped') {
      try {
        await this.#haproxy.start();
      } catch (error) {
        if (!this.#everStarted) this.#onFirstStartFailed?.(error as Error);
        return { ok: false, detail: `HAProxy did not start: ${(error as Error).message}` };
      }
      this.#everStarted = true;
      this.#running = this.#written;
      this.#logger.info({ pid: this.#haproxy.pid }, 'HAProxy started');
      return { ok: true, detail: 'started' };
    }
    const result = await this.#haproxy.reload();
    if (result.ok) this.#running = this.#written;
    return { ok: result.ok, detail: result.detail };
  }

  async currentChecksum(): Promise<string | undefined> {
    return this.#haproxy.state === 'running' ? this.#running : undefined;
  }

  /** Stops HAProxy (controller shutdown). */
  async stop(): Promise<void> {
    await this.#haproxy.stop();
    this.#running = undefined;
  }
}

/** Which files `render` changed since `last` was written: those its patch names, when it is a patch of exactly `last` (not of a runtime view). */
export function writeHint(render: DeployableRender, last: DeployableRender | undefined): WriteHint {
  const patch = render.patch;
  if (patch === undefined || last === undefined || last.renderId !== patch.from || last.checksum.startsWith(VIEW_PREFIX)) return { id: render.checksum };
  return { id: render.checksum, changed: { from: last.checksum, files: Object.keys(patch.edits), edits: patch.edits } };
}

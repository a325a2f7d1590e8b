// A DeployTarget for unit tests: records every call in order, takes simulated time on the
// FakeClock for a reload (so pacing from the END of a deployment is observable), and fails the
// next reload or runtime batch on request. `running` is what the fake HAProxy serves.
import { sleep, type Clock } from '../../src/main/core/clock.js';
import type { DeployableRender, DeployTarget, ReloadResult } from '../../src/main/deploy/deploy-target.js';
import { commandCount, type RuntimeOp } from '../../src/main/deploy/runtime-ops.js';

export type TargetCall =
  | { readonly type: 'runtime'; readonly ops: readonly RuntimeOp[]; readonly at: number }
  | { readonly type: 'write'; readonly checksum: string; readonly at: number; endedAt?: number }
  | { readonly type: 'reload'; readonly checksum: string | undefined; readonly startedAt: number; readonly endedAt: number; readonly ok: boolean };

export interface FakeDeployTargetOptions {
  readonly clock: Clock;
  /** Simulated time a reload takes. @default 0 */
  readonly reloadMs?: number;
  /** Simulated time a runtime batch takes. @default 0 */
  readonly runtimeMs?: number;
  /** Simulated time writing the files takes (they are on disk at its end). @default 0 */
  readonly writeMs?: number;
  /** What `currentChecksum()` reports; omit for a target that cannot tell. */
  readonly currentChecksum?: string;
}

export class FakeDeployTarget implements DeployTarget {
  readonly calls: TargetCall[] = [];
  /** Checksum of the config the fake HAProxy serves (after its last successful reload). */
  running: string | undefined;
  /** Checksum of the files on disk. */
  onDisk: string | undefined;
  /** The render whose files are on disk, when written by a deployment. */
  written: DeployableRender | undefined;
  readonly #clock: Clock;
  readonly #reloadMs: number;
  readonly #runtimeMs: number;
  readonly #writeMs: number;
  #failWrite: string | undefined;
  #failReload: string | undefined;
  #failRuntime: string | undefined;
  readonly currentChecksum: (() => Promise<string | undefined>) | undefined;

  constructor(options: FakeDeployTargetOptions) {
    this.#clock = options.clock;
    this.#reloadMs = options.reloadMs ?? 0;
    this.#runtimeMs = options.runtimeMs ?? 0;
    this.#writeMs = options.writeMs ?? 0;
    const reported = options.currentChecksum;
    this.running = reported;
    this.onDisk = reported;
    this.currentChecksum = reported === undefined ? undefined : () => Promise.resolve(reported);
  }

  get reloads(): Extract<TargetCall, { type: 'reload' }>[] {
    return this.calls.filter((c): c is Extract<TargetCall, { type: 'reload' }> => c.type === 'reload');
  }

  get runtimeBatches(): (readonly RuntimeOp[])[] {
    return this.calls.flatMap((c) => (c.type === 'runtime' ? [c.ops] : []));
  }

  /** Every call's type, in order: `['write', 'reload', 'runtime', ...]`. */
  get sequence(): string[] {
    return this.calls.map((c) => c.type);
  }

  /** The next reload is rejected by "HAProxy": the old worker keeps serving. */
  failNextReload(detail = 'the new worker exited: [ALERT] config: bad line'): void {
    this.#failReload = detail;
  }

  /** Every write in order: its checksum, when it started and when its files were on disk. */
  get writes(): Extract<TargetCall, { type: 'write' }>[] {
    return this.calls.filter((c): c is Extract<TargetCall, { type: 'write' }> => c.type === 'write');
  }

  /** The next write fails (a full disk): the files on disk stay as they were. */
  failNextWrite(message = 'ENOSPC: no space left on device'): void {
    this.#failWrite = message;
  }

  /** The next runtime batch fails with an `[err]` reply. */
  failNextRuntime(reply = '[err]: No such server.'): void {
    this.#failRuntime = reply;
  }

  async applyRuntime(ops: readonly RuntimeOp[]): Promise<{ applied: number }> {
    this.calls.push({ type: 'runtime', ops, at: this.#clock.now() });
    if (this.#runtimeMs > 0) await sleep(this.#clock, this.#runtimeMs);
    const failure = this.#failRuntime;
    this.#failRuntime = undefined;
    if (failure !== undefined) throw new Error(failure);
    return { applied: ops.reduce((n, op) => n + commandCount(op), 0) };
  }

  async writeFiles(render: DeployableRender): Promise<void> {
    const call: TargetCall = { type: 'write', checksum: render.checksum, at: this.#clock.now() };
    this.calls.push(call);
    if (this.#writeMs > 0) await sleep(this.#clock, this.#writeMs);
    const failure = this.#failWrite;
    this.#failWrite = undefined;
    if (failure !== undefined) throw new Error(failure);
    call.endedAt = this.#clock.now();
    this.onDisk = render.checksum;
    this.written = render;
  }

  async reload(): Promise<ReloadResult> {
    const startedAt = this.#clock.now();
    const loading = this.onDisk;
    if (this.#reloadMs > 0) await sleep(this.#clock, this.#reloadMs);
    const failure = this.#failReload;
    this.#failReload = undefined;
    const ok = failure === undefined;
    if (ok) this.running = loading;
    this.calls.push({ type: 'reload', checksum: loading, startedAt, endedAt: this.#clock.now(), ok });
    return ok ? { ok, detail: 'new worker serving' } : { ok, detail: failure };
  }
}

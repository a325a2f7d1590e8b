// DeployTarget: where a deployment goes. The Deployer decides what to do and when; a target does
// it to one HAProxy (the local master-worker process in src/main/haproxy/) or, later, a fleet of
// remote instances. The contract below is what the Deployer relies on: every method either does
// what it says or rejects, and nothing is believed that HAProxy did not confirm.
import type { AuxiliaryFiles, RenderPatch } from '../../worker/protocol.js';
import type { RuntimeOp } from './runtime-ops.js';

export type { RuntimeOp } from './runtime-ops.js';

/** A render as it is deployed: the config, its auxiliary files and the checksum that names them. */
export interface DeployableRender {
  readonly renderId: string;
  /** The render's checksum; a state the Deployer composed (runtime changes on an older config) has its own. */
  readonly checksum: string;
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
  /** The render as edits of render `patch.from`, when its executor said so: the diff against that render reads only the edits. */
  readonly patch?: RenderPatch;
}

export interface ReloadResult {
  /** True only when the reload was verified: a new worker runs the new config. */
  readonly ok: boolean;
  /** What happened, in words (logs and `deployment.completed.error`). */
  readonly detail: string;
}

export interface DeployTarget {
  /**
   * Applies Runtime API operations in order, through the admin socket (`<out>/run/admin.sock` for
   * the local target), each command prefixed with `set severity-output string;` so a failure
   * reads `[err]`. Render each operation with `runtimeCommand`, or for `map-replace` with
   * `prepareMapCommand` → `preparedMapVersion` → `versionedMapCommands` (payload commands), and
   * `commit map` only once every entry was accepted (see runtime-ops.ts, haproxy/map-replace.ts).
   * Resolves with the number of command lines HAProxy acknowledged (`commandCount` per op).
   * Rejects on the first `[err]` (or any failure reply, or an unreachable socket): the Deployer
   * then no longer knows the runtime state and falls back to a reload. Operations are not
   * transactional: earlier ones stay applied.
   */
  applyRuntime(ops: readonly RuntimeOp[]): Promise<{ readonly applied: number }>;

  /**
   * Writes the render to the directory the config is loaded from (haproxy.cfg, maps/, files/,
   * certs/), atomically per file, auxiliary files first and the config last, so a reload or a
   * restart never reads a config whose files are missing (OutputDirectory does exactly this).
   * Called after runtime changes too: they do not survive a reload, the files must say the same.
   * Those `serving` writes go behind the change (FileSync): the next runtime change may be sent
   * while one runs, but writes come one at a time, in order, and a reload only after they ended;
   * a target whose calls share one channel (AgentTarget) runs them in call order.
   * `purpose` says which: `serving` (the files of what HAProxy runs now: after runtime changes, or
   * put back after a failed reload) or `reload` (the files the next `reload()` loads). A remote
   * target may hold `reload` files back and send them with the reload, as one checked apply.
   * `render.patch` (when set) names the files that changed since render `patch.from`: a target
   * may write or send only those when that render is what it last wrote.
   */
  writeFiles(render: DeployableRender, purpose?: 'serving' | 'reload'): Promise<void>;

  /**
   * Reloads HAProxy with the files last written and verifies it: for the local target, `reload`
   * on the master socket (`<out>/run/master.sock`), then `show proc` proves a new worker runs
   * and the master's failed-reload counter did not move. A reload HAProxy rejects leaves the old
   * worker serving the old config: resolve `{ ok: false, detail }`, do not reject. Reject only
   * when the outcome is unknown (the master could not be reached at all).
   */
  reload(): Promise<ReloadResult>;

  /**
   * The checksum of the render the target runs, if it can tell (e.g. recorded next to the files
   * it last loaded). Read at the start of a leadership term: a render with that checksum is
   * then skipped instead of reloaded. Undefined when unknown.
   */
  currentChecksum?(): Promise<string | undefined>;

  /**
   * How the last exchange with the instance ended, for a remote target: `unreachable` (no answer
   * in time), `fenced` (it took a newer leader's apply) or `ok`. A local target need not say.
   */
  health?(): TargetHealth;
}

export type TargetHealth = 'ok' | 'unreachable' | 'fenced';

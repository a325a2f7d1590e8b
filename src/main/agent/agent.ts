// Agent: one beside each HAProxy of a fleet. It supervises its HAProxy with the same supervisor and
// local target `run --haproxy` uses (HaproxyProcess, LocalHaproxyTarget: master-worker, sockets in
// `<dir>/run`, restarts with backoff, reloads verified with `show proc`), and applies what the
// leader sends: fenced by (epoch, sequence), checked with `haproxy -c` before any reload, runtime
// operations through its admin socket, files written through OutputDirectory. The last applied
// render stays in `<dir>` (AgentStore), so a restarted agent serves it again at once.
// Applies run one at a time, in arrival order; the fence is checked when an apply's turn comes.
// An accepted apply's fence is saved first (FenceFile), before HAProxy takes anything. An apply
// without a reload is answered once HAProxy runs it (its runtime operations): its files, then the
// state naming it, are written behind the answer through the Deployer's FileSync, with the same
// ordering rules (one write at a time, the newest waiting one wins). A reload first waits for
// those writes, so HAProxy never loads a half-written render; a restarted agent serves the last
// render whose files were all written.
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import type { DeployableRender } from '../deploy/deploy-target.js';
import { FileSync } from '../deploy/file-sync.js';
import { haproxyRenderChecker, type RenderChecker } from '../gate/render-checker.js';
import { haproxyVersion } from '../haproxy/haproxy-check.js';
import { HaproxyProcess } from '../haproxy/haproxy-process.js';
import { LocalHaproxyTarget } from '../haproxy/local-haproxy-target.js';
import { OutputDirectory, outputPathsIn, type WriteHint } from '../output/output-directory.js';
import { FILE_KINDS, recordPath, type AgentState, type ApplyAnswer, type ApplyErrorCode, type ApplyRequest, type FileKind } from './agent-protocol.js';
import { AgentStore, sha256, type HeldRender } from './agent-store.js';
import { above, NO_FENCE, type Fence } from './fence-file.js';
import { LineDeltas } from './line-deltas.js';
import { SourceHash } from './source-hash.js';
import { renderRewrite, type RenderRewrite } from './render-rewrite.js';
import type { TextEdit } from '../../worker/protocol.js';
import { messageOf } from '../core/errors.js';

export interface AgentOptions {
  /** Holds the render (haproxy.cfg, maps/, files/, certs/), `run/` with the sockets, and the agent's state. */
  readonly dir: string;
  /** Every `bind` of a render listens on this address instead (see render-rewrite.ts). */
  readonly bindAddress?: string;
  /** @default HAPROXY_BIN or `haproxy` */
  readonly binary?: string;
  /** @default `haproxy -c` on a private copy (the render gate's checker) */
  readonly checker?: RenderChecker;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Writes the render's files. @default an OutputDirectory on `dir` */
  readonly output?: OutputDirectory;
  /** Called once per HAProxy restart attempt. */
  readonly onHaproxyRestart?: () => void;
}

/** What an apply answers: the HTTP status and the body. */
export interface ApplyOutcome {
  readonly status: number;
  readonly answer: ApplyAnswer;
}

export class Agent {
  readonly dir: string;
  readonly haproxy: HaproxyProcess;
  readonly #target: LocalHaproxyTarget;
  readonly #store: AgentStore;
  readonly #checker: RenderChecker;
  readonly #bindAddress: string | undefined;
  readonly #logger: Logger;
  readonly #binary: string | undefined;
  #fence: Fence = NO_FENCE;
  /** What the agent's HAProxy serves (its files are in `dir`); undefined before the first apply. */
  #served: HeldRender | undefined;
  #version: string | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  /** Files and state written behind the answers; `#held` maps each queued render to what it saves and what changed. */
  readonly #files: FileSync;
  readonly #held = new WeakMap<DeployableRender, { readonly render: HeldRender; readonly hint: WriteHint }>();
  /** The rewrite for the last leader paths seen (a leader keeps its paths: built once, not per apply). */
  #rewrite: { readonly key: string; readonly rewrite: RenderRewrite } | undefined;
  /**
   * The renders whose config this process rewrote, with which leader paths, and where its lines
   * differ in length from the source (found on the first patch): only those are patched line by line.
   */
  readonly #rewrittenWith = new WeakMap<HeldRender, { readonly key: string; deltas: LineDeltas | undefined }>();
  /** Of a render patched line by line, the edit of its config from the render before: its write patches the file. */
  readonly #configEdits = new WeakMap<HeldRender, TextEdit>();
  /** Checks a patched config against its digest hashing from the patch on (see source-hash.ts). */
  readonly #sourceHash = new SourceHash();

  constructor(options: AgentOptions) {
    this.dir = options.dir;
    const clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'agent' });
    this.#binary = options.binary;
    this.haproxy = HaproxyProcess.forOutputDirectory(options.dir, {
      clock,
      logger: this.#logger,
      ...(options.binary === undefined ? {} : { binary: options.binary }),
      onRestart: () => options.onHaproxyRestart?.(),
    });
    this.#target = new LocalHaproxyTarget({ output: options.output ?? new OutputDirectory(options.dir), haproxy: this.haproxy, logger: this.#logger });
    this.#store = new AgentStore(options.dir);
    this.#checker = options.checker ?? haproxyRenderChecker({ directories: outputPathsIn(options.dir), ...(options.binary === undefined ? {} : { binary: options.binary }) });
    this.#bindAddress = options.bindAddress;
    this.#files = new FileSync({ target: { writeFiles: (render) => this.#writeHeld(render) }, logger: this.#logger });
  }

  /** True while its HAProxy runs a config the leader gave it. */
  get ready(): boolean {
    return this.#served !== undefined && this.haproxy.state === 'running';
  }

  state(): AgentState {
    return {
      epoch: this.#fence.epoch,
      sequence: this.#fence.sequence,
      checksum: this.#served?.checksum ?? null,
      files: this.#served?.digests ?? {},
      haproxy: { version: this.#version, running: this.haproxy.state === 'running' },
      ready: this.ready,
    };
  }

  /** Loads the stored state and, when a render is kept, starts HAProxy on it at once. */
  async start(): Promise<void> {
    this.#version = await haproxyVersion(this.#binary);
    const stored = await this.#store.load();
    this.#fence = stored.fence;
    this.#served = stored.render;
    if (this.#served === undefined) {
      this.#logger.info({ dir: this.dir }, 'no render kept; waiting for the first apply');
      return;
    }
    const result = await this.#target.reload();
    if (result.ok) this.#logger.info({ checksum: this.#served.checksum }, 'serving the kept render');
    else {
      this.#logger.error({ detail: result.detail }, 'the kept render did not start; waiting for a full sync');
      this.#served = undefined;
    }
  }

  /** Applies a checked request (see the header); never rejects. */
  apply(request: ApplyRequest): Promise<ApplyOutcome> {
    const run = this.#queue.then(() => this.#apply(request));
    this.#queue = run.catch(() => undefined);
    return run.catch((error: unknown) => {
      this.#logger.error({ err: error }, 'apply failed unexpectedly');
      return this.#fail(500, 'reload_failed', messageOf(error));
    });
  }

  /** Resolves when every file and state write behind an answer so far has ended. */
  written(): Promise<void> {
    return this.#files.settled();
  }

  async stop(): Promise<void> {
    await this.#queue;
    await this.#files.settled();
    this.#store.close();
    await this.#target.stop();
  }

  async #apply(request: ApplyRequest): Promise<ApplyOutcome> {
    if (!above(request, this.#fence)) {
      return this.#fail(409, 'fenced', `(epoch ${request.epoch}, sequence ${request.sequence}) is not above the highest accepted (${this.#fence.epoch}, ${this.#fence.sequence})`);
    }
    const base = this.#served?.checksum ?? null;
    if (!request.full && request.baseChecksum !== base) {
      return this.#fail(412, 'full_sync_required', `the changes are relative to ${String(request.baseChecksum)}, but this agent serves ${String(base)}; send the whole render`);
    }
    const previous = this.#served;
    const candidate = this.#merge(request);
    if (candidate === undefined) return this.#fail(412, 'full_sync_required', 'the config patch does not apply to the config this agent holds; send the whole render');
    // A stopped HAProxy (its first config, or a start that failed) is started on the files: a reload.
    const reload = request.reload || this.haproxy.state === 'stopped';
    const filesChanged = previous === undefined || request.full || request.config !== undefined || request.configPatch !== undefined || Object.keys(request.filePatches.maps).length + Object.keys(request.filePatches.files).length > 0 || FILE_KINDS.some((k) => Object.keys(request.files[k]).length > 0);
    const fence = { epoch: request.epoch, sequence: request.sequence };
    return reload ? this.#applyWithReload(request, fence, previous, candidate) : this.#applyBehind(request, fence, previous, candidate, filesChanged);
  }

  /** The fence, then runtime operations (if any), then the answer; the files and the state follow (see the header). */
  async #applyBehind(request: ApplyRequest, fence: Fence, previous: HeldRender | undefined, candidate: HeldRender, filesChanged: boolean): Promise<ApplyOutcome> {
    const unsaved = this.#saveFence(fence);
    if (unsaved !== undefined) return unsaved;
    let applied = 0;
    if (request.runtimeOps.length > 0) {
      try {
        const rewrite = this.#rewriteFor(request);
        applied = (await this.#target.applyRuntime(request.runtimeOps.map((op) => rewrite.op(op)))).applied;
      } catch (error) {
        // Some operations may have gone through: what HAProxy runs is unknown until a reload.
        this.#served = undefined;
        this.#fence = fence;
        await this.#files.settled();
        await this.#store.save(undefined);
        return this.#fail(502, 'runtime_failed', messageOf(error));
      }
    }
    // Accepted: the fence moves with the render, so a state read never pairs the new fence with the old render.
    this.#served = candidate;
    this.#fence = fence;
    if (filesChanged || candidate.checksum !== previous?.checksum) {
      const render = deployable(candidate);
      this.#held.set(render, { render: candidate, hint: writeHintOf(request, previous, this.#configEdits.get(candidate)) });
      this.#files.queue(render);
    }
    // At debug: one line per endpoint change per agent cost about 0.2 ms of its CPU at info (reloads and
    // failures stay at info and above; the apply counters count every apply). Logged once the answer
    // is out (the server writes it in this turn of the event loop), not in front of it.
    if (this.#logger.isLevelEnabled('debug')) {
      setImmediate(() => this.#logger.debug({ epoch: fence.epoch, sequence: fence.sequence, checksum: candidate.checksum, reload: false, applied }, 'applied'));
    }
    return { status: 200, answer: { ok: true, applied, reloaded: false, state: this.state() } };
  }

  /** `haproxy -c`, the fence, the files, the reload, the state: all before the answer. */
  async #applyWithReload(request: ApplyRequest, fence: Fence, previous: HeldRender | undefined, candidate: HeldRender): Promise<ApplyOutcome> {
    const verdict = await this.#checker({ renderId: request.checksum, haproxyConfig: candidate.config, auxiliaryFiles: auxiliary(candidate) }, AbortSignal.timeout(60_000));
    if (!verdict.ok) {
      this.#logger.warn({ checksum: request.checksum, refused: verdict.refused }, 'config refused by haproxy -c; the previous one keeps serving');
      return this.#fail(verdict.refused ? 422 : 503, 'refused', verdict.message);
    }
    // Files written behind earlier answers go first: a later write never lands before an earlier one.
    await this.#files.settled();
    const unsaved = this.#saveFence(fence);
    if (unsaved !== undefined) return unsaved;
    const render = deployable(candidate);
    await this.#target.writeFiles(render);
    const result = await this.#target.reload();
    if (!result.ok) {
      if (previous !== undefined) await this.#target.writeFiles(deployable(previous)).catch((error: unknown) => this.#logger.error({ err: error }, 'restoring the files of the running config failed'));
      this.#fence = fence;
      await this.#store.save(previous);
      return this.#fail(502, 'reload_failed', result.detail);
    }
    this.#files.wrote(render);
    this.#served = candidate;
    this.#fence = fence;
    await this.#store.save(candidate);
    this.#logger.info({ epoch: request.epoch, sequence: request.sequence, checksum: candidate.checksum, reload: true }, 'applied');
    return { status: 200, answer: { ok: true, applied: 0, reloaded: true, state: this.state() } };
  }

  /** Saves the fence before anything of the apply is done; the answer when that failed (nothing changed). */
  #saveFence(fence: Fence): ApplyOutcome | undefined {
    try {
      this.#store.saveFence(fence);
      return undefined;
    } catch (error) {
      this.#logger.error({ err: error }, 'saving the fence failed; the apply is refused');
      return this.#fail(500, 'state_not_saved', `the fence could not be saved, nothing was applied: ${messageOf(error)}`);
    }
  }

  /** FileSync's writer: a render's files, then the state naming it (a restart finds it only once all its files are in place). */
  async #writeHeld(render: DeployableRender): Promise<void> {
    const held = this.#held.get(render);
    await this.#target.writeFiles(render, 'serving', held?.hint);
    if (held !== undefined) await this.#store.save(held.render);
  }

  #rewriteFor(request: ApplyRequest): RenderRewrite {
    const { mapsDir, filesDir, certsDir, runDir } = request.paths;
    const key = JSON.stringify([mapsDir, filesDir, certsDir, runDir]);
    if (this.#rewrite?.key !== key) this.#rewrite = { key, rewrite: renderRewrite(request.paths, this.dir, this.#bindAddress) };
    return this.#rewrite.rewrite;
  }

  /** The render after `request`: its changes on top of the served one (or alone, for a full sync); undefined when a config patch does not apply. */
  #merge(request: ApplyRequest): HeldRender | undefined {
    const rewrite = this.#rewriteFor(request);
    const start = request.full ? undefined : this.#served;
    const digests: Record<string, string> = { ...start?.digests };
    const files: Record<FileKind, Record<string, string>> = { maps: { ...start?.files.maps }, files: { ...start?.files.files }, certificates: { ...start?.files.certificates } };
    for (const kind of FILE_KINDS) {
      for (const [name, text] of Object.entries(request.files[kind])) {
        const path = recordPath(kind, name);
        if (text === null) {
          delete files[kind][name];
          delete digests[path];
        } else {
          files[kind][name] = rewrite.file(kind, text);
          digests[path] = sha256(text);
        }
      }
    }
    for (const kind of ['maps', 'files'] as const) {
      for (const [name, filePatch] of Object.entries(request.filePatches[kind])) {
        // Only a file held as it was sent can be patched (files/ naming the leader's paths are rewritten): else a full sync.
        const held = start?.files[kind][name];
        if (held === undefined || filePatch.end > held.length) return undefined;
        const patched = held.slice(0, filePatch.start) + filePatch.text + held.slice(filePatch.end);
        if (sha256(patched) !== filePatch.digest) return undefined;
        files[kind][name] = rewrite.file(kind, patched);
        digests[recordPath(kind, name)] = filePatch.digest;
      }
    }
    const held = start?.source ?? '';
    let source = held;
    let config = start?.config ?? '';
    const patch = request.configPatch;
    const key = this.#rewrite?.key ?? '';
    if (patch !== undefined) {
      if (start === undefined || patch.end > source.length) return undefined;
      source = source.slice(0, patch.start) + patch.text + source.slice(patch.end);
      if (this.#sourceHash.digest(source, held, patch.start) !== patch.digest) return undefined;
      // The held config is patched line by line only when this process rewrote it with these paths (not one read back at a restart).
      const rewritten = this.#rewrittenWith.get(start);
      if (rewritten?.key === key) rewritten.deltas ??= LineDeltas.between(held, config);
      const patched = rewritten?.key === key && rewritten.deltas !== undefined ? rewrite.patchConfig(held, { config, deltas: rewritten.deltas }, source, patch) : undefined;
      config = patched?.config ?? rewrite.config(source);
      digests['haproxy.cfg'] = patch.digest;
      if (patched !== undefined) {
        const merged: HeldRender = { checksum: request.checksum, source, config, files, digests };
        this.#rewrittenWith.set(merged, { key, deltas: patched.deltas });
        if (patched.edit !== undefined) this.#configEdits.set(merged, patched.edit);
        return merged;
      }
    } else if (request.config !== undefined) {
      source = request.config;
      config = rewrite.config(source);
      digests['haproxy.cfg'] = this.#sourceHash.digest(source);
    }
    const merged: HeldRender = { checksum: request.checksum, source, config, files, digests };
    // A config of its own: its deltas are found on its first patch; none: the start's config, and its deltas, are kept.
    const rewrittenWith = patch !== undefined || request.config !== undefined ? { key, deltas: undefined } : start === undefined ? undefined : this.#rewrittenWith.get(start);
    if (rewrittenWith !== undefined) this.#rewrittenWith.set(merged, rewrittenWith);
    return merged;
  }

  #fail(status: number, error: ApplyErrorCode, message: string): ApplyOutcome {
    return { status, answer: { ok: false, error, message, state: this.state() } };
  }
}

/**
 * The files `request` changed, relative to `previous`: the output directory then writes those and
 * leaves the rest unhashed. It ignores the hint unless `previous` is the last render it wrote (a
 * render FileSync skipped breaks the chain: everything is compared again).
 */
function writeHintOf(request: ApplyRequest, previous: HeldRender | undefined, configEdit: TextEdit | undefined): WriteHint {
  if (request.full || previous === undefined) return { id: request.checksum };
  const files: string[] = request.config !== undefined || request.configPatch !== undefined ? ['config'] : [];
  for (const kind of FILE_KINDS) for (const name of Object.keys(request.files[kind])) files.push(`${kind}/${name}`);
  for (const kind of ['maps', 'files'] as const) for (const name of Object.keys(request.filePatches[kind])) files.push(`${kind}/${name}`);
  // The config's edit lets the output directory patch the file it wrote instead of writing it whole; the other files have none.
  return { id: request.checksum, changed: { from: previous.checksum, files, ...(configEdit === undefined ? {} : { edits: { config: [configEdit] } }) } };
}

function auxiliary(render: HeldRender): DeployableRender['auxiliaryFiles'] {
  return { maps: render.files.maps, files: render.files.files, certificates: render.files.certificates };
}

function deployable(render: HeldRender): DeployableRender {
  return { renderId: render.checksum, checksum: render.checksum, haproxyConfig: render.config, auxiliaryFiles: auxiliary(render) };
}


// AgentTarget: the DeployTarget of one agent of a fleet, so the one Deployer drives a remote
// HAProxy exactly as it drives the local one. Runtime operations go out at once (POST /v1/apply
// without a reload); files that serve now (after runtime changes) go out on their own; files for a
// reload are held and sent WITH the reload, as one apply the agent checks with `haproxy -c` first.
// Only the files whose digest differs from what the agent reported are sent, relative to its
// checksum; an agent that serves another base answers 412 and gets the whole render. It believes
// only the agent's answers: the state in each answer replaces what it knew. Exchanges run one at a
// time, in call order (the Deployer writes files behind a runtime change without waiting): each
// takes its (epoch, sequence) when its turn comes, so the agent never sees a later apply first.
import type { Logger } from 'pino';
import { VIEW_PREFIX } from '../deploy/runtime-view.js';
import type { RenderPatch } from '../../worker/protocol.js';
import { FILE_KINDS, recordPath, type AgentState, type ConfigPatch, type FileKind, type LeaderPaths } from '../agent/agent-protocol.js';
import type { DeployableRender, DeployTarget, ReloadResult, RuntimeOp, TargetHealth } from '../deploy/deploy-target.js';
import { changedWindow, commonPrefix, commonSuffix } from '../deploy/config-index.js';
import { commandCount } from '../deploy/runtime-ops.js';
import { AgentUnreachableError, type AgentAnswer, type AgentClient } from './agent-client.js';
import type { FencingToken } from './fencing-token.js';
import { RenderDigests } from './render-digests.js';

export interface AgentTargetOptions {
  readonly client: AgentClient;
  readonly fence: FencingToken;
  /** The leader's output paths, which its renders name. */
  readonly paths: LeaderPaths;
  /** Certificates (private keys) may go over this connection: TLS, loopback, or `--agent-insecure`. */
  readonly keysAllowed: boolean;
  readonly logger: Logger;
  /** Shared by the targets of one fleet: each render's texts are hashed once. @default one of its own */
  readonly digests?: RenderDigests;
}

type FileSet = Record<FileKind, Record<string, string | null>>;
type FilePatchSet = Record<'maps' | 'files', Record<string, ConfigPatch>>;

interface Change {
  readonly kind: 'runtime' | 'files' | 'reload';
  readonly render?: DeployableRender;
  readonly ops?: readonly RuntimeOp[];
  readonly reload: boolean;
}

export class AgentTarget implements DeployTarget {
  readonly #client: AgentClient;
  readonly #fence: FencingToken;
  readonly #paths: LeaderPaths;
  readonly #keysAllowed: boolean;
  readonly #logger: Logger;
  readonly #digests: RenderDigests;
  /** What the agent last said it serves; undefined when unknown (read again before the next apply). */
  #known: AgentState | undefined;
  /** The config text of the render the agent last took from this target: the base of a config patch. */
  #sent: DeployableRender | undefined;
  /** Files written for the next reload. */
  #staged: DeployableRender | undefined;
  #health: TargetHealth = 'ok';
  /** Settles when the exchanges called so far have ended. */
  #turn: Promise<unknown> = Promise.resolve();

  constructor(options: AgentTargetOptions) {
    this.#client = options.client;
    this.#fence = options.fence;
    this.#paths = options.paths;
    this.#keysAllowed = options.keysAllowed;
    this.#logger = options.logger.child({ component: 'agent-target', agent: options.client.address });
    this.#digests = options.digests ?? new RenderDigests();
  }

  health(): TargetHealth {
    return this.#health;
  }

  currentChecksum(): Promise<string | undefined> {
    return this.#inTurn(async () => (await this.#state()).checksum ?? undefined);
  }

  applyRuntime(ops: readonly RuntimeOp[]): Promise<{ readonly applied: number }> {
    return this.#inTurn(() => this.#applyRuntime(ops));
  }

  writeFiles(render: DeployableRender, purpose: 'serving' | 'reload' = 'serving'): Promise<void> {
    return this.#inTurn(() => this.#writeFiles(render, purpose));
  }

  reload(): Promise<ReloadResult> {
    return this.#inTurn(() => this.#reload());
  }

  /** Runs `exchange` after every exchange called before it has ended. */
  #inTurn<T>(exchange: () => Promise<T>): Promise<T> {
    const run = this.#turn.then(exchange);
    this.#turn = run.catch(() => undefined);
    return run;
  }

  async #applyRuntime(ops: readonly RuntimeOp[]): Promise<{ readonly applied: number }> {
    const answer = await this.#apply({ kind: 'runtime', ops, reload: false });
    if (answer.status !== 200) throw new Error(`agent ${this.#client.address} answered ${answer.status}: ${String(answer.body.message ?? answer.body.error)}`);
    return { applied: typeof answer.body.applied === 'number' ? answer.body.applied : ops.reduce((n, op) => n + commandCount(op), 0) };
  }

  async #writeFiles(render: DeployableRender, purpose: 'serving' | 'reload'): Promise<void> {
    if (purpose === 'reload') {
      this.#staged = render;
      return;
    }
    this.#staged = undefined;
    // Put back after a refused reload: the agent changed nothing, so it already has these files.
    if (this.#known?.checksum === render.checksum) return;
    const answer = await this.#apply({ kind: 'files', render, reload: false });
    if (answer.status !== 200) throw new Error(`agent ${this.#client.address} answered ${answer.status}: ${String(answer.body.message ?? answer.body.error)}`);
  }

  async #reload(): Promise<ReloadResult> {
    const render = this.#staged;
    this.#staged = undefined;
    const answer = await this.#apply({ kind: 'reload', ...(render === undefined ? {} : { render }), reload: true });
    if (answer.status === 200) return { ok: true, detail: answer.body.reloaded === true ? 'reloaded' : 'applied' };
    return { ok: false, detail: `agent answered ${answer.status} (${String(answer.body.error ?? 'error')}): ${String(answer.body.message ?? '')}` };
  }

  /** One apply; a 412 is answered at once with the whole render. Rejects only when the agent did not answer. */
  async #apply(change: Change): Promise<AgentAnswer> {
    const known = this.#known ?? (await this.#state());
    let answer = await this.#post(change, known, false);
    if (answer.status === 412) {
      this.#logger.info('the agent serves another base; sending the whole render');
      answer = await this.#post(change, this.#known ?? known, true);
    }
    if (answer.status === 409) {
      this.#health = 'fenced';
      this.#logger.warn({ state: answer.body.state }, 'the agent took a newer leader’s apply: this leader is deposed');
    }
    return answer;
  }

  async #post(change: Change, known: AgentState, full: boolean): Promise<AgentAnswer> {
    const render = change.render;
    if (render === undefined && known.checksum === null) {
      throw new Error(`agent ${this.#client.address} serves no render yet: it needs a full sync`);
    }
    const body: Record<string, unknown> = {
      ...this.#fence.next(),
      checksum: render?.checksum ?? known.checksum,
      baseChecksum: known.checksum,
      paths: this.#paths,
      runtimeOps: change.ops ?? [],
      reload: change.reload,
    };
    if (render !== undefined) {
      const digests = full || known.checksum === null ? undefined : known.files;
      const base = this.#sent?.checksum === known.checksum ? this.#sent : undefined;
      Object.assign(body, digests !== undefined && base !== undefined && isPatchOf(render, base) ? await this.#patchFiles(render, base, digests) : await this.#files(render, digests, base));
    }
    const answer = await this.#send('POST', '/v1/apply', change.kind, body);
    this.#known = stateOf(answer) ?? this.#known;
    if (answer.status === 200 && render !== undefined) this.#sent = render;
    return answer;
  }

  /**
   * The files of `render` that differ from `digests` (all of them, a full sync, without); the
   * config as a patch of `baseConfig` when the agent holds it: an endpoint change then costs the
   * sections around it, not the whole config.
   */
  async #files(render: DeployableRender, digests: Readonly<Record<string, string>> | undefined, base: DeployableRender | undefined): Promise<Record<string, unknown>> {
    const files: FileSet = { maps: {}, files: {}, certificates: {} };
    const filePatches: FilePatchSet = { maps: {}, files: {} };
    const present = new Set<string>(['haproxy.cfg']);
    for (const kind of FILE_KINDS) {
      for (const [name, text] of Object.entries(render.auxiliaryFiles[kind])) {
        const path = recordPath(kind, name);
        present.add(path);
        const digest = await this.#digests.of(render.checksum, path, text);
        if (digests?.[path] === digest) continue;
        this.#fileChange(kind, name, text, digest, base, files, filePatches);
      }
    }
    if (Object.keys(files.certificates).length > 0 && !this.#keysAllowed) {
      throw new Error(`refusing to send private keys in clear to ${this.#client.address}: give --agent-ca (HTTPS) or --agent-insecure`);
    }
    if (digests !== undefined) {
      for (const path of Object.keys(digests)) {
        if (present.has(path)) continue;
        const [dir, name] = path.split('/') as [string, string];
        const kind: FileKind = dir === 'certs' ? 'certificates' : (dir as FileKind);
        if ((FILE_KINDS as readonly string[]).includes(kind)) files[kind][name] = null;
      }
    }
    if (digests === undefined) return { full: true, files, config: render.haproxyConfig };
    const digest = await this.#digests.of(render.checksum, 'haproxy.cfg', render.haproxyConfig);
    if (digests['haproxy.cfg'] === digest) return { full: false, files, filePatches };
    // The agent checks the patched text against `digest`, and answers 412 when it does not match.
    if (base === undefined) return { full: false, files, filePatches, config: render.haproxyConfig };
    const window = changedWindow(base.haproxyConfig, render.haproxyConfig);
    return { full: false, files, filePatches, configPatch: { start: window.start, end: window.endA, text: render.haproxyConfig.slice(window.start, window.endB), digest } };
  }

  /** A changed file: whole, or as the change to the text the agent holds when it is a large map or file. */
  #fileChange(kind: FileKind, name: string, text: string, digest: string, base: DeployableRender | undefined, files: FileSet, filePatches: FilePatchSet): void {
    const before = kind === 'certificates' ? undefined : base?.auxiliaryFiles[kind][name];
    // A large map or file the agent holds as sent goes as the change to it (a file naming the leader's paths is rewritten there).
    if (kind !== 'certificates' && before !== undefined && text.length > PATCH_ABOVE && !text.includes(this.#paths.certsDir) && !text.includes(this.#paths.mapsDir) && !text.includes(this.#paths.filesDir)) {
      filePatches[kind][name] = textPatch(before, text, digest);
    } else files[kind][name] = text;
  }

  /**
   * `#files` for a render that is `base` (what the agent holds, as sent) with its patch's edits:
   * only the files the patch names are hashed and compared, and the config goes as the one window
   * its edits cover, found from the edits instead of by comparing 5 MiB of text.
   */
  async #patchFiles(render: DeployableRender, base: DeployableRender, digests: Readonly<Record<string, string>>): Promise<Record<string, unknown>> {
    const files: FileSet = { maps: {}, files: {}, certificates: {} };
    const filePatches: FilePatchSet = { maps: {}, files: {} };
    const edits = (render.patch as RenderPatch).edits;
    for (const id of Object.keys(edits)) {
      if (id === 'config') continue;
      const cut = id.indexOf('/');
      const kind = FILE_KINDS.find((k) => k === id.slice(0, cut));
      if (kind === undefined) continue;
      const name = id.slice(cut + 1);
      const text = render.auxiliaryFiles[kind][name];
      const path = recordPath(kind, name);
      if (text === undefined) {
        if (digests[path] !== undefined) files[kind][name] = null;
        continue;
      }
      const digest = await this.#digests.of(render.checksum, path, text);
      if (digests[path] !== digest) this.#fileChange(kind, name, text, digest, base, files, filePatches);
    }
    if (Object.keys(files.certificates).length > 0 && !this.#keysAllowed) {
      throw new Error(`refusing to send private keys in clear to ${this.#client.address}: give --agent-ca (HTTPS) or --agent-insecure`);
    }
    const configEdits = edits['config'] ?? [];
    const first = configEdits[0];
    const last = configEdits.at(-1);
    if (first === undefined || last === undefined) return { full: false, files, filePatches };
    // Edits are sorted and apart: the window runs from the first to the end of the last, in both texts.
    const end = last.at + last.remove;
    const text = render.haproxyConfig.slice(first.at, end + render.haproxyConfig.length - base.haproxyConfig.length);
    return { full: false, files, filePatches, configPatch: { start: first.at, end, text, digest: await this.#digests.of(render.checksum, 'haproxy.cfg', render.haproxyConfig) } };
  }

  async #state(): Promise<AgentState> {
    const answer = await this.#send('GET', '/v1/state', 'state');
    if (answer.status !== 200) throw new Error(`agent ${this.#client.address} answered ${answer.status} to GET /v1/state: ${String(answer.body.message ?? '')}`);
    this.#known = answer.body as unknown as AgentState;
    return this.#known;
  }

  async #send(method: 'GET' | 'POST', path: string, kind: string, body?: unknown): Promise<AgentAnswer> {
    try {
      const answer = await this.#client.send(method, path, kind, body);
      if (answer.status !== 409) this.#health = 'ok';
      return answer;
    } catch (error) {
      if (error instanceof AgentUnreachableError) {
        if (this.#health !== 'unreachable') this.#logger.warn({ err: error.message }, 'agent unreachable');
        this.#health = 'unreachable';
        // Whatever it runs when it is back is read again first.
        this.#known = undefined;
      }
      throw error;
    }
  }
}

function stateOf(answer: AgentAnswer): AgentState | undefined {
  const state = answer.body.state;
  return typeof state === 'object' && state !== null && 'checksum' in state ? (state as AgentState) : undefined;
}

/** Files up to this size go whole: a patch would save little. */
const PATCH_ABOVE = 4096;

/** `before` with [start, end) replaced by `text` is `after`: the common prefix and suffix left out. */
function textPatch(before: string, after: string, digest: string): ConfigPatch {
  const prefix = commonPrefix(before, after);
  const suffix = commonSuffix(before, after, Math.min(before.length, after.length) - prefix);
  return { start: prefix, end: before.length - suffix, text: after.slice(prefix, after.length - suffix), digest };
}

/** True when `render` is `base` with its patch's edits (a patch of that render, not of a runtime view on it). */
function isPatchOf(render: DeployableRender, base: DeployableRender): boolean {
  return render.patch !== undefined && render.patch.from === base.renderId && !base.checksum.startsWith(VIEW_PREFIX);
}

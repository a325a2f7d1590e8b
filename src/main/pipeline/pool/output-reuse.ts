// OutputReuse: the outputs this pool handed out, so a task can name them instead of carrying them.
// A worker leaves out of its result every file equal to the one in the last output the main
// thread received from it (only the newest output of all is held here), since copying a 4 MiB config
// back costs the main thread milliseconds; the files are put back here before anyone sees it. So
// is the origin index a worker sent as the objects that changed (one per Ingress: receiving it
// whole cost the main thread about 20 ms at 10,000 Ingresses).
import type { AuxiliaryFiles, OriginIndex, RenderBaseline, RenderSuccess, ReusedFiles } from '../../../worker/protocol.js';
import type { GatewayStatusReport } from '../../../worker/routing/gateway-model.js';
import { applyStatusPatch } from '../../../worker/render/status-patch.js';
import { PipelineError } from '../../core/errors.js';
import { BlockText } from './block-text.js';
import { withChangedObjects } from './origin-overlay.js';

interface ReceivedOutput {
  readonly renderId: string;
  readonly output: {
    readonly haproxyConfig: string;
    readonly auxiliaryFiles: AuxiliaryFiles;
    readonly origins?: OriginIndex | undefined;
    readonly gatewayStatus?: GatewayStatusReport | undefined;
    readonly servedIngresses?: readonly string[] | undefined;
  };
  /** Files of the output held as blocks (block-text.ts), by file ID (`config`, `maps/<name>`, …): those that came as edits or were kept from an earlier output. */
  readonly blocks: ReadonlyMap<string, BlockText>;
}

export class OutputReuse {
  /** Render IDs of this pool's outputs, by the identity of their auxiliary files object. */
  readonly #outputIds = new WeakMap<object, string>();
  /** The newest output received, by the thread ID of the worker that rendered it (one entry at most). */
  readonly #received = new Map<number, ReceivedOutput>();
  #filesReused = 0;
  #servedReused = 0;
  #originChanges = 0;

  /** Results whose served Ingresses were the held output's. */
  get servedReused(): number {
    return this.#servedReused;
  }

  /** Files (the config included) workers left out of results because the pool held them already. */
  get filesReused(): number {
    return this.#filesReused;
  }

  /** Results whose origin index came as the objects that changed since the output held. */
  get originChanges(): number {
    return this.#originChanges;
  }

  /**
   * The render ID of `baseline` when it is an output of this pool, so a task can name it: by the
   * identity of its files object, or (a copy, as the Coordinator's result check makes) by its
   * texts being those of an output held for a worker (the same strings compare by reference).
   */
  idOf(baseline: RenderBaseline): string | undefined {
    const known = this.#outputIds.get(baseline.auxiliaryFiles);
    if (known !== undefined) return known;
    for (const { renderId, output } of this.#received.values()) if (sameTexts(baseline, output)) return renderId;
    return undefined;
  }

  /** By worker thread ID, the render ID of the output held for it (a task's `receivedOutputs`). */
  receivedOutputs(): Record<number, string> {
    return Object.fromEntries([...this.#received].map(([threadId, { renderId }]) => [threadId, renderId]));
  }

  /**
   * The complete output of a worker's result: the files it left out are put back. It becomes the
   * output held for that worker. Throws when the worker reused an output the pool does not hold.
   */
  accept(result: RenderSuccess, renderId: string): RenderSuccess {
    const { full, blocks } = this.#restore(result);
    this.#outputIds.set(full.auxiliaryFiles, renderId);
    // Only the newest output is held, whichever worker rendered it (the caller holds it anyway,
    // as the next baseline): holding one per worker would keep a whole older output alive.
    this.#received.clear();
    if (full.threadId !== undefined) {
      this.#received.set(full.threadId, { renderId, output: { haproxyConfig: full.haproxyConfig, auxiliaryFiles: full.auxiliaryFiles, origins: full.origins, gatewayStatus: full.gatewayStatus, servedIngresses: full.servedIngresses }, blocks });
    }
    return full;
  }

  /** Drops the output held for a worker that exited: its replacement holds none. */
  forget(threadId: number): void {
    this.#received.delete(threadId);
  }

  /** Puts back the files a worker left out because this thread already held them. */
  #restore(result: RenderSuccess): { full: RenderSuccess; blocks: ReadonlyMap<string, BlockText> } {
    const reused = result.reused;
    const blocks = new Map<string, BlockText>();
    if (reused === undefined) return { full: result, blocks };
    const held = result.threadId === undefined ? undefined : this.#received.get(result.threadId);
    if (held === undefined || held.renderId !== reused.from) {
      throw new PipelineError('render', `worker ${String(result.threadId)} left out files of output ${reused.from}, which the pool does not hold`, undefined, 'WORKER_FAILED');
    }
    const aux = { maps: { ...result.auxiliaryFiles.maps }, files: { ...result.auxiliaryFiles.files }, certificates: { ...result.auxiliaryFiles.certificates } };
    for (const id of reused.files) {
      const cut = id.indexOf('/');
      const kind = id.slice(0, cut) as keyof AuxiliaryFiles;
      const name = id.slice(cut + 1);
      const text = held.output.auxiliaryFiles[kind]?.[name];
      if (text === undefined) throw new PipelineError('render', `worker ${String(result.threadId)} reused ${id}, which output ${reused.from} does not have`, undefined, 'WORKER_FAILED');
      aux[kind][name] = text;
      const kept = held.blocks.get(id);
      if (kept !== undefined) blocks.set(id, kept);
    }
    this.#filesReused += reused.files.length + (reused.config ? 1 : 0);
    let haproxyConfig = reused.config ? held.output.haproxyConfig : result.haproxyConfig;
    const heldConfig = held.blocks.get('config');
    if (reused.config && heldConfig !== undefined) blocks.set('config', heldConfig);
    const edits = reused.edits;
    const removed: Record<string, readonly string[]> = {};
    if (edits !== undefined) {
      // Edited files are the held blocks with the edits: only the blocks they touch are sliced,
      // and the whole text is a concatenation of the blocks, copied only when someone reads it.
      const edited = (id: string, before: string | undefined): string => {
        const next = before === undefined ? undefined : (held.blocks.get(id) ?? BlockText.of(before)).edited(edits[id] ?? []);
        if (next === undefined) throw new PipelineError('render', `worker ${String(result.threadId)} sent edits of ${id} that do not apply to output ${reused.from}`, undefined, 'WORKER_FAILED');
        blocks.set(id, next.text);
        removed[id] = next.removed;
        return next.text.text;
      };
      for (const id of Object.keys(edits)) {
        if (id === 'config') haproxyConfig = edited(id, held.output.haproxyConfig);
        else {
          const cut = id.indexOf('/');
          const kind = id.slice(0, cut) as keyof AuxiliaryFiles;
          if (!Object.hasOwn(aux, kind)) throw new PipelineError('render', `worker ${String(result.threadId)} sent edits of ${id}, which is no file`, undefined, 'WORKER_FAILED');
          aux[kind][id.slice(cut + 1)] = edited(id, held.output.auxiliaryFiles[kind]?.[id.slice(cut + 1)]);
        }
      }
    }
    // The Gateway status travels as a patch of the held output's (status-patch.ts).
    const statusPatch = reused.gatewayStatus;
    const gatewayStatus = statusPatch === undefined ? result.gatewayStatus : held.output.gatewayStatus === undefined ? undefined : applyStatusPatch(held.output.gatewayStatus, statusPatch);
    if (statusPatch !== undefined && gatewayStatus === undefined) throw new PipelineError('render', `worker ${String(result.threadId)} sent a Gateway status patch that does not apply to output ${reused.from}`, undefined, 'WORKER_FAILED');
    const servedIngresses = reused.servedIngresses === true ? held.output.servedIngresses : result.servedIngresses;
    if (reused.servedIngresses === true && servedIngresses === undefined) throw new PipelineError('render', `worker ${String(result.threadId)} reused the served Ingresses of output ${reused.from}, which has none`, undefined, 'WORKER_FAILED');
    if (reused.servedIngresses === true) this.#servedReused++;
    const origins = reused.originObjects === undefined ? result.origins : withObjects(held.output.origins, reused.originObjects, result.threadId);
    if (reused.originObjects !== undefined) this.#originChanges++;
    const restored: RenderSuccess & { reused?: ReusedFiles } = {
      ...result,
      ...(gatewayStatus === undefined ? {} : { gatewayStatus }),
      ...(servedIngresses === undefined ? {} : { servedIngresses }),
      haproxyConfig,
      auxiliaryFiles: aux,
      // The endpoint lane's edits leave the origin index out (it is output `from`'s); other results carry their own, or its changed objects.
      ...(origins !== undefined ? { origins } : edits !== undefined && held.output.origins !== undefined ? { origins: held.output.origins } : {}),
      ...(edits === undefined ? {} : { patch: { from: reused.from, edits, removed } }),
    };
    delete restored.reused;
    return { full: restored, blocks };
  }
}

/** Output `from`'s origin index with `changes` (by position) replaced; its names are the same. */
function withObjects(held: OriginIndex | undefined, changes: NonNullable<ReusedFiles['originObjects']>, threadId: number | undefined): OriginIndex {
  if (held === undefined) throw new PipelineError('render', `worker ${String(threadId)} sent changes of an origin index the pool does not hold`, undefined, 'WORKER_FAILED');
  return withChangedObjects(held, changes, (index) => new PipelineError('render', `worker ${String(threadId)} changed origin object ${index}, which the index does not have`, undefined, 'WORKER_FAILED'));
}

function sameTexts(baseline: RenderBaseline, output: ReceivedOutput['output']): boolean {
  if (baseline.haproxyConfig !== output.haproxyConfig) return false;
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    const a = baseline.auxiliaryFiles[kind];
    const b = output.auxiliaryFiles[kind];
    const names = Object.keys(b);
    if (Object.keys(a).length !== names.length) return false;
    for (const name of names) if (a[name] !== b[name]) return false;
  }
  return true;
}

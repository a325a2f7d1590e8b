// ReplicaSyncer: brings one worker's replica to a store version over its control channel. The
// template set first, then the changes since the version the worker acknowledged, or a full
// snapshot when the change log no longer reaches back that far (or the replica refuses the
// delta). Syncs to one worker are serialised, so two executes never interleave their deltas.
// The worker an execute renders on mostly needs no sync of its own: the changes ride on its
// render task (`riding`), which saves the main thread one round trip per execute.
import type { ReplicaSync, TemplateSetSource } from '../../../worker/protocol.js';
import { PipelineError } from '../../core/errors.js';
import type { StoreProvider } from '../../stores/store-provider.js';
import type { WorkerHandle } from './worker-registry.js';

/** Runs `fn` and counts its time as main-thread dispatch time of the execute. */
export type Timed = <T>(fn: () => T) => T;

export interface ReplicaSyncStats {
  readonly fullSyncs: number;
  readonly deltaSyncs: number;
  readonly changesShipped: number;
}

export class ReplicaSyncer {
  readonly #set: TemplateSetSource;
  #provider: StoreProvider | undefined;
  readonly #stats = { fullSyncs: 0, deltaSyncs: 0, changesShipped: 0 };
  /** Syncs sent over each worker's control channel and not answered yet. */
  readonly #pending = new WeakMap<WorkerHandle, number>();

  constructor(set: TemplateSetSource) {
    this.#set = set;
  }

  get stats(): ReplicaSyncStats {
    return { ...this.#stats };
  }

  /** Makes `stores` the stores the replicas follow; after a switch every worker gets a full sync. */
  follow(stores: StoreProvider, workers: Iterable<WorkerHandle>): void {
    if (this.#provider === stores) return;
    // A different store provider: every replica describes other stores now.
    this.#provider = stores;
    for (const w of workers) w.version = -1;
  }

  /** Resolves once no sync to `w` is in flight on its control channel. */
  async settled(w: WorkerHandle): Promise<void> {
    while ((this.#pending.get(w) ?? 0) > 0) await w.busy;
  }

  /**
   * The changes that bring `w` to `target` (or later) as a delta for its render task to carry
   * (`w.version` moves with it: the worker applies them before it renders). Undefined when it is
   * at `target` already, or needs its control channel first: a template set, a full sync, a
   * change log that no longer reaches back, a sync still in flight (await `settled` first).
   */
  riding(w: WorkerHandle, stores: StoreProvider, target: number): Extract<ReplicaSync, { kind: 'delta' }> | undefined {
    if (w.templateSetHash !== this.#set.hash || w.version < 0 || w.version >= target || (this.#pending.get(w) ?? 0) > 0) return undefined;
    const delta = stores.changesSince(w.version);
    if (delta.kind !== 'delta') return undefined;
    this.#stats.deltaSyncs++;
    this.#stats.changesShipped += delta.changes.length;
    w.version = delta.toVersion;
    return delta;
  }

  /** Brings one worker to `target`: template set first, then a delta (or a full snapshot). */
  sync(w: WorkerHandle, stores: StoreProvider, target: number, timed: Timed): Promise<void> {
    this.#pending.set(w, (this.#pending.get(w) ?? 0) + 1);
    const run = async (): Promise<void> => {
      if (w.templateSetHash !== this.#set.hash) {
        const loaded = await w.remote.loadTemplateSet(this.#set);
        if (!loaded.ok) throw new PipelineError('render', `worker ${w.threadId} refused the template set: ${loaded.message}`);
        w.templateSetHash = this.#set.hash;
      }
      if (w.version === target) return;
      const delta = w.version < 0 ? undefined : timed(() => stores.changesSince(w.version));
      if (delta !== undefined && delta.kind === 'delta') {
        const message: ReplicaSync = delta;
        const ack = await timed(() => w.remote.sync(message));
        this.#stats.deltaSyncs++;
        this.#stats.changesShipped += delta.changes.length;
        if (ack.accepted) {
          w.version = ack.version;
          return;
        }
      }
      const snapshot = timed(() => stores.snapshot());
      const ack = await timed(() => w.remote.sync({ kind: 'full', ...snapshot }));
      this.#stats.fullSyncs++;
      w.version = ack.version;
    };
    // A worker that exits mid-sync never answers: its sync ends with it. If a task then lands on
    // its replacement, the stale-replica answer brings that one up to date.
    const next = w.busy.then(() => Promise.race([run(), w.closed])).finally(() => this.#pending.set(w, (this.#pending.get(w) ?? 1) - 1));
    w.busy = next.catch(() => undefined);
    return next;
  }
}

// ReplicaSyncer: brings one worker's replica to a store version over its control channel. The
// template set first, then the changes since the version the worker acknowledged, or a full
// snapshot when the change log no longer reaches back that far (or the replica refuses the
// delta). Syncs to one worker are serialised, so two executes never interleave their deltas.
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

  /** Brings one worker to `target`: template set first, then a delta (or a full snapshot). */
  sync(w: WorkerHandle, stores: StoreProvider, target: number, timed: Timed): Promise<void> {
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
    const next = w.busy.then(() => Promise.race([run(), w.closed]));
    w.busy = next.catch(() => undefined);
    return next;
  }
}

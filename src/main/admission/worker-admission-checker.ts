// WorkerAdmissionChecker: runs the admission checks on one dedicated worker thread
// (src/worker/admission/admission-worker.ts) that holds a replica of the stores. Before each
// review it posts the changes since the version it last shipped (a full snapshot the first time,
// or when the change log no longer reaches back), the way render workers are synced; the port
// keeps messages in order, so the review sees them. The main thread pays for the delta and a
// structured clone of the reviewed object, never for a check. A worker that dies fails its
// pending reviews and is replaced on the next one, with a full sync. Once started, it also
// ships changes every `syncIntervalMs`, so a review after a burst of changes (the initial list
// above all) finds the replica current instead of paying for the burst within its deadline.
// A large sync (a full snapshot, the initial list) goes in chunks of `syncChunk` objects with
// turns of the event loop between them: posting 30,000 objects at once would hold the main
// thread for the whole structured clone. Reviews wait for a chunked sync to end.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { ReplicaSync, StoreChange, TemplateSetSource } from '../../worker/protocol.js';
import type { AdmissionCheckRequest, AdmissionVerdict, AdmissionWorkerMessage, AdmissionWorkerReply } from '../../worker/admission-protocol.js';
import { objectKey } from '../../worker/store/indexed-store.js';
import { every, systemClock, type Clock } from '../core/clock.js';
import type { StoreProvider } from '../stores/store-provider.js';

/** What the admission server asks: the verdict on one request. */
export interface AdmissionCheck {
  check(request: AdmissionCheckRequest): Promise<AdmissionVerdict>;
  close(): Promise<void>;
}

export interface WorkerAdmissionCheckerOptions {
  readonly stores: StoreProvider;
  readonly templateSet: TemplateSetSource;
  readonly clock?: Clock;
  /** Between reviews, changes are shipped this often (after `start()`). @default 1000 */
  readonly syncIntervalMs?: number;
  /** Objects per message of a large sync. @default 500 */
  readonly syncChunk?: number;
}

function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/** After a worker died, reviews fail (allowed, with a warning) for this long before another starts. */
const RESTART_PAUSE_MS = 1000;

interface Pending {
  readonly resolve: (verdict: AdmissionVerdict) => void;
  readonly reject: (error: Error) => void;
}

export class WorkerAdmissionChecker implements AdmissionCheck {
  readonly #stores: StoreProvider;
  readonly #templateSet: TemplateSetSource;
  readonly #clock: Clock;
  readonly #syncIntervalMs: number;
  readonly #syncChunk: number;
  /** A chunked sync in progress; it ends when its last chunk is posted. */
  #syncing: Promise<void> | undefined;
  #stopSyncing: (() => void) | undefined;
  #worker: Worker | undefined;
  /** The store version last posted to the worker; -1: it needs a full snapshot. */
  #shipped = -1;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  #closed = false;
  /** When the last worker died (clock.monotonic), for the restart pause. */
  #diedAt: number | undefined;
  readonly #stats = { fullSyncs: 0, deltaSyncs: 0, workersStarted: 0 };

  constructor(options: WorkerAdmissionCheckerOptions) {
    this.#stores = options.stores;
    this.#templateSet = options.templateSet;
    this.#clock = options.clock ?? systemClock;
    this.#syncIntervalMs = options.syncIntervalMs ?? 1000;
    this.#syncChunk = options.syncChunk ?? 500;
  }

  /** Starts the worker with the stores as they are, and keeps its replica current between reviews. */
  start(): void {
    if (this.#closed || this.#stopSyncing !== undefined) return;
    void this.#syncTo(this.#worker ?? this.#start());
    this.#stopSyncing = every(
      this.#clock,
      this.#syncIntervalMs,
      () => {
        if (this.#worker !== undefined) void this.#syncTo(this.#worker);
      },
      { unref: true },
    );
  }

  get stats(): { readonly fullSyncs: number; readonly deltaSyncs: number; readonly workersStarted: number } {
    return { ...this.#stats };
  }

  check(request: AdmissionCheckRequest): Promise<AdmissionVerdict> {
    if (this.#closed) return Promise.reject(new Error('the admission checker is closed'));
    // A worker that dies at once (at load) is not restarted for every review.
    if (this.#worker === undefined && this.#diedAt !== undefined && this.#clock.monotonic() - this.#diedAt < RESTART_PAUSE_MS) {
      return Promise.reject(new Error('the admission worker stopped and is restarting'));
    }
    const worker = this.#worker ?? this.#start();
    const syncing = this.#syncTo(worker);
    // Then once more: changes made meanwhile go first, in order.
    if (syncing !== undefined) return syncing.then(() => this.check(request));
    const id = this.#nextId++;
    return new Promise<AdmissionVerdict>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Referenced while a review waits on it, so the answer arrives even with nothing else alive.
      if (this.#pending.size === 1) worker.ref();
      this.#post(worker, { kind: 'review', id, now: this.#clock.now(), request });
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#stopSyncing?.();
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll(new Error('the admission checker is closed'));
    await worker?.terminate();
  }

  /**
   * Ships what the worker lacks. A small sync is posted at once (undefined); a large one is
   * posted chunk by chunk, and the promise returned ends with its last chunk.
   */
  #syncTo(worker: Worker): Promise<void> | undefined {
    if (this.#syncing !== undefined) return this.#syncing;
    const target = this.#stores.version;
    if (this.#shipped === target) return undefined;
    const messages = this.#syncMessages();
    this.#shipped = target;
    if (messages.length === 1) {
      this.#post(worker, { kind: 'sync', sync: messages[0] as ReplicaSync });
      return undefined;
    }
    const run = async (): Promise<void> => {
      for (const [i, sync] of messages.entries()) {
        if (i > 0) await nextTurn();
        // A worker that died meanwhile takes a full sync when it is replaced.
        if (this.#worker !== worker) return;
        this.#post(worker, { kind: 'sync', sync });
      }
    };
    this.#syncing = run().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  /**
   * The changes since the version shipped (a full snapshot when the log no longer reaches back),
   * in messages of at most `syncChunk` objects: the first brings the replica to the current
   * version, the others upsert at that version (a snapshot is sent as its store definitions,
   * then its objects as upserts).
   */
  #syncMessages(): ReplicaSync[] {
    const delta = this.#shipped < 0 ? undefined : this.#stores.changesSince(this.#shipped);
    const chunk = this.#syncChunk;
    if (delta?.kind === 'delta') {
      this.#stats.deltaSyncs++;
      if (delta.changes.length <= chunk) return [delta];
      const { fromVersion, toVersion, changes } = delta;
      return chunksOf(changes, chunk).map((part, i) => ({ kind: 'delta', fromVersion: i === 0 ? fromVersion : toVersion, toVersion, changes: part }));
    }
    this.#stats.fullSyncs++;
    const snapshot = this.#stores.snapshot();
    const objects = Object.values(snapshot.stores).reduce((sum, store) => sum + store.objects.length, 0);
    if (objects <= chunk) return [{ kind: 'full', ...snapshot }];
    const { toVersion } = snapshot;
    const definitions = Object.fromEntries(Object.entries(snapshot.stores).map(([name, store]) => [name, { ...store, objects: [] }]));
    const upserts: StoreChange[] = Object.entries(snapshot.stores).flatMap(([store, { objects: list }]) => list.map((object) => ({ op: 'upsert' as const, store, key: objectKey(object), object })));
    return [{ kind: 'full', toVersion, stores: definitions }, ...chunksOf(upserts, chunk).map((part): ReplicaSync => ({ kind: 'delta', fromVersion: toVersion, toVersion, changes: part }))];
  }

  #post(worker: Worker, message: AdmissionWorkerMessage): void {
    worker.postMessage(message);
  }

  #start(): Worker {
    const worker = startWorker({ templateSet: this.#templateSet });
    this.#stats.workersStarted++;
    this.#shipped = -1;
    worker.on('message', (reply: AdmissionWorkerReply) => this.#onReply(reply));
    const gone = (error: Error): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#diedAt = this.#clock.monotonic();
      this.#failAll(error);
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the admission worker exited with code ${code}`)));
    // An idle worker never keeps the process alive on its own.
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #onReply(reply: AdmissionWorkerReply): void {
    if (reply.kind === 'synced') {
      // A refused delta (the replica was elsewhere): the next review ships a full snapshot.
      if (!reply.ack.accepted) this.#shipped = -1;
      return;
    }
    const pending = this.#pending.get(reply.id);
    if (pending === undefined) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker?.unref();
    if (reply.kind === 'verdict') pending.resolve(reply.verdict);
    else pending.reject(new Error(`the admission check failed: ${reply.message}`));
  }

  #failAll(error: Error): void {
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}

/**
 * The worker module next to this one: the built `.js`, or under tsx or vitest the `.ts` source.
 * A worker's entry is loaded before hooks given as `--import tsx` in its execArgv are in place,
 * so from source the entry is a small script that registers tsx's loader, then imports the module.
 */
function startWorker(workerData: unknown): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const url = new URL(`../../worker/admission/admission-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSource) return new Worker(url, { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true, workerData });
}

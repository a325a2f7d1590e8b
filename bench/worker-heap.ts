// The live heap of each worker of a pool after a full garbage collection, per Ingress: the
// rendering worker (replica, caches and its recent outputs) and each spare (replica only), and
// optionally a heap snapshot of the rendering worker summarised by constructor. Needs
// `node --expose-gc` (the npm scripts add it): without it the figures would include garbage, so
// the bench refuses to report them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PoolPipeline } from '../src/main/pipeline/pool/pool-pipeline.js';
import { summarizeHeapSnapshot, type HeapSummary } from './heap-summary.js';
import { sig, type Row } from './lib.js';

export interface WorkerHeap {
  readonly row: Row;
  readonly snapshot?: HeapSummary;
}

export async function workerLiveHeap(pool: PoolPipeline, ingresses: number, snapshot: boolean): Promise<WorkerHeap> {
  const statuses = await pool.workerStatus({ collectGarbage: true });
  if (statuses.some((s) => !s.collected)) throw new Error('the workers could not collect garbage before reporting their heap: run under node --expose-gc (npm run bench:scale does)');
  const renderingId = pool.renderingThread;
  const rendering = statuses.find((s) => s.threadId === renderingId);
  if (rendering === undefined) throw new Error('the pool has no rendering worker to measure');
  const spares = statuses.filter((s) => s !== rendering);
  const kib = (bytes: number): number => sig(bytes / 1024 / ingresses);
  const row: Row = {
    workerLiveHeapMiB: sig(rendering.heapUsedBytes / 2 ** 20),
    liveHeapPerIngressKiB: kib(rendering.heapUsedBytes),
    spareLiveHeapPerIngressKiB: spares.length === 0 ? null : kib(Math.max(...spares.map((s) => s.heapUsedBytes))),
  };
  if (!snapshot) return { row };
  const directory = await mkdtemp(join(tmpdir(), 'haptic-heap-'));
  try {
    const path = await pool.writeHeapSnapshot(rendering.threadId, directory);
    return { row, snapshot: await summarizeHeapSnapshot(path) };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

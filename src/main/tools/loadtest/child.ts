// The child side of the load test: one mode, one flood, one result line. The controller is an
// Engine running the executor under test (wrapped in a ConcurrencyProbe); a SyntheticChurn floods
// its stores through a ChangeBatcher while the main thread is measured (flood-meter, memory), and
// the FloodObserver waits for the render covering the last change. Serves /healthz for the parent.
import { performance } from 'node:perf_hooks';
import { withTimeout } from '../../core/async.js';
import { silentLogger } from '../../core/logger.js';
import { Engine } from '../../engine.js';
import { InlinePipeline } from '../../pipeline/inline-pipeline.js';
import { PoolPipeline } from '../../pipeline/pool/pool-pipeline.js';
import { ChangeBatcher } from '../../sources/change-batcher.js';
import { SyntheticChurn } from '../../sources/synthetic/synthetic-churn.js';
import { SYNTHETIC_CLUSTER_VALUES, SyntheticCluster } from '../../sources/synthetic/synthetic-cluster.js';
import { StoreProvider } from '../../stores/store-provider.js';
import { loadTemplateSet } from '../../template-set/template-set.js';
import { emit, ParentChannel, RELEASE_TIMEOUT_MS } from './child-protocol.js';
import { ConcurrencyProbe } from './concurrency-probe.js';
import { measureFlood, SERIES_WINDOW_MS } from './flood-meter.js';
import { FloodObserver } from './flood-observer.js';
import { FRESHNESS_TIMEOUT_MS, validateFloodOptions, type FloodOptions, type LoadtestMode } from './flood-options.js';
import { MemorySampler, memorySettling, memoryWindowMs } from './memory.js';
import { startHealthServer } from './probes.js';
import type { ChildReport } from './report.js';
import { percentileMs, round, toMb } from './units.js';

const TICK_MS = 10;
const PROGRESS_MS = 1000;
const INITIAL_RENDER_TIMEOUT_MS = 120_000;

/** Runs the flood for one executor in this process and writes the result as one JSON line. */
export async function runLoadtestChild(mode: LoadtestMode, options: FloodOptions): Promise<number> {
  validateFloodOptions(options);
  const set = await loadTemplateSet(undefined, SYNTHETIC_CLUSTER_VALUES);
  const stores = new StoreProvider(set.stores);
  const cluster = new SyntheticCluster({ ingresses: options.ingresses, seed: options.seed });
  cluster.populate(stores);
  const parent = new ParentChannel();
  const server = await startHealthServer();
  emit({ loadtest: 'listening', port: server.port });
  const logger = silentLogger();
  let pool: PoolPipeline | undefined;
  let engine: Engine | undefined;
  try {
    // The pool is ours, not the engine's: the probe wraps it and reads its running tasks.
    if (mode === 'pool') {
      const threads = options.threads === undefined ? {} : { threads: options.threads };
      pool = await PoolPipeline.create({ templateSet: set, logger, ...threads });
    }
    const pipeline = new ConcurrencyProbe(pool ?? new InlinePipeline({ templateSet: set }), pool);
    engine = await Engine.create({ templateSet: set, pipeline, stores, logger });
    const workers = pool;
    const workerHeapBytes =
      workers === undefined ? null : async () => (await workers.workerStatus()).reduce((sum, w) => sum + w.heapUsedBytes, 0);
    const result = await floodOnce({ mode, options, cluster, engine, pipeline, threads: pool?.threads ?? null, workerHeapBytes, parent });
    emit({ loadtest: 'result', result });
    // The parent closes our stdin once its last probe is answered.
    await parent.until(() => parent.ended, RELEASE_TIMEOUT_MS);
    return 0;
  } finally {
    parent.close();
    await engine?.close();
    await pool?.destroy();
    await server.close();
  }
}

interface FloodRig {
  readonly mode: LoadtestMode;
  readonly options: FloodOptions;
  readonly cluster: SyntheticCluster;
  /** Runs `pipeline`; its stores hold the populated cluster. */
  readonly engine: Engine;
  /** The executor, wrapped to count concurrent renders. */
  readonly pipeline: ConcurrencyProbe;
  readonly threads: number | null;
  /** The pool workers' heap in use, summed; null for the inline mode. */
  readonly workerHeapBytes: (() => Promise<number>) | null;
  readonly parent: ParentChannel;
}

/** Starts the engine, waits for the first render, floods, waits for freshness. */
async function floodOnce(rig: FloodRig): Promise<ChildReport> {
  const { mode, options, cluster, engine } = rig;
  const { bus, stores, coordinator } = engine;
  const log = (text: string): void => void process.stderr.write(`loadtest[${mode}] ${text}\n`);
  const observer = new FloodObserver(bus);
  const controller = new AbortController();
  // Without sources the engine announces the stores (index.synchronized) as it starts, with no
  // I/O in between: from here to the first render is the initial render.
  const initialStarted = performance.now();
  const engineRunning = engine.start(controller.signal);
  const running = [engineRunning, observer.run()];
  let progress: NodeJS.Timeout | undefined;
  let memory: MemorySampler | undefined;
  let churn: SyntheticChurn | undefined;
  try {
    await Promise.race([engine.whenStarted(), engineRunning]);
    await withTimeout(observer.firstRender, INITIAL_RENDER_TIMEOUT_MS, 'the initial render');
    const initialRenderMs = performance.now() - initialStarted;
    log(`${cluster.size} Ingresses (store version ${stores.version}); initial render ${initialRenderMs.toFixed(0)} ms; flooding`);

    // The parent's probe connections must be open before the clock starts (no wait standalone).
    await rig.parent.until(() => rig.parent.warmed || rig.parent.ended, RELEASE_TIMEOUT_MS);

    // Measurement starts here, after the first render.
    const coalescedBefore = coordinator.stats.coalesced;
    memory = new MemorySampler(memoryWindowMs(options.duration), rig.workerHeapBytes);
    const total = Math.round(options.rate * options.duration);
    const flood = new SyntheticChurn({
      cluster,
      stores,
      sink: new ChangeBatcher(bus),
      rate: options.rate,
      total,
      tickMs: TICK_MS,
      // Before the last flush: the render it triggers must be recognised as the fresh one.
      onLastChange: () => observer.expectVersion(stores.version),
    });
    churn = flood;
    progress = setInterval(
      () =>
        log(
          `t=${flood.elapsedSeconds.toFixed(1)}s changes=${flood.applied}/${total} triggers=${observer.triggers} ` +
            `renders=${observer.renders} coalesced=${coordinator.stats.coalesced - coalescedBefore} failures=${observer.failures}`,
        ),
      PROGRESS_MS,
    );
    observer.counting = true;
    emit({ loadtest: 'flood-start' });
    const measured = await measureFlood(flood);
    memory.markFloodEnd();
    emit({ loadtest: 'flood-end' });
    log(`flood over: ${flood.applied} changes in ${(measured.floodMs / 1000).toFixed(1)} s; waiting for a render of store version ${stores.version}`);

    const fresh = await withTimeout(observer.fresh, FRESHNESS_TIMEOUT_MS, 'freshness').then(
      () => true,
      () => false,
    );
    observer.counting = false;
    await memory.stop();
    const freshnessMs = (observer.freshAt ?? performance.now()) - measured.lastChangeAt;
    if (observer.lastFailure !== '') log(`last failure: ${observer.lastFailure}`);
    log(`done: renders=${observer.renders} freshness=${freshnessMs.toFixed(0)} ms${fresh ? '' : ' (timed out)'}`);
    return {
      mode,
      threads: rig.threads,
      changes: flood.applied,
      floodMs: round(measured.floodMs, 1),
      initialRenderMs: round(initialRenderMs, 1),
      eldP50Ms: measured.eldP50Ms,
      eldP99Ms: measured.eldP99Ms,
      eldMaxMs: measured.eldMaxMs,
      elu: measured.elu,
      triggers: observer.triggers,
      renders: observer.renders,
      coalesced: coordinator.stats.coalesced - coalescedBefore,
      maxRendersInFlight: rig.pipeline.max,
      maxQueuedTriggers: coordinator.stats.maxQueued,
      failures: observer.failures,
      criticalDrops: bus.droppedCritical,
      lossyDrops: bus.droppedLossy,
      renderP50Ms: round(percentileMs(observer.renderMs, 50), 2),
      renderP99Ms: round(percentileMs(observer.renderMs, 99), 2),
      freshnessMs: round(freshnessMs, 1),
      fresh,
      peakRssMb: toMb(memory.peakRss),
      peakHeapMb: toMb(memory.peakHeap),
      peakWorkerHeapMb: memory.peakWorkerHeap === null ? null : toMb(memory.peakWorkerHeap),
      seriesWindowMs: SERIES_WINDOW_MS,
      series: measured.series,
      ...memorySettling(memory.points, memory.floodEndMs),
      memoryWindowMs: memory.windowMs,
      memorySeries: memory.points,
    };
  } finally {
    clearInterval(progress);
    churn?.stop();
    await memory?.stop();
    controller.abort();
    observer.close();
    await Promise.all(running);
  }
}

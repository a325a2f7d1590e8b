// Live-heap check (`npm run bench:live-heap [seconds]`): the load test's default flood (5,000
// Ingresses, 5,000 changes/s) through the real bus, Reconciler, Coordinator and PoolPipeline,
// forcing a garbage collection on the main thread every 5 s and printing the live main heap, the
// process RSS, each worker's heap in use (not collected first, so it includes garbage) and the
// change log's window. A live heap that stays flat while RSS swings says the RSS swings are
// garbage and allocator behaviour, not a leak. Needs `node --expose-gc` (the npm script adds it).
import { ChangeBatcher } from '../src/main/sources/change-batcher.js';
import { Coordinator } from '../src/main/reconcile/coordinator.js';
import { EventBus } from '../src/main/bus/event-bus.js';
import { newEvent, type ControllerEvent } from '../src/main/events/events.js';
import { silentLogger } from '../src/main/core/logger.js';
import { PoolPipeline } from '../src/main/pipeline/pool/pool-pipeline.js';
import { Reconciler } from '../src/main/reconcile/reconciler.js';
import { StoreProvider } from '../src/main/stores/store-provider.js';
import { SyntheticCluster } from '../src/main/sources/synthetic/synthetic-cluster.js';
import { loadTemplateSet } from '../src/main/template-set/template-set.js';

const INGRESSES = 5000;
const RATE = 5000;
const SAMPLE_S = 5;
const seconds = Number(process.argv[2] ?? 90);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:live-heap does)');

const set = await loadTemplateSet();
const stores = new StoreProvider(set.stores);
const cluster = new SyntheticCluster({ ingresses: INGRESSES, seed: 1 });
cluster.populate(stores);
const logger = silentLogger();
const bus = new EventBus<ControllerEvent>({ logger });
const pool = await PoolPipeline.create({ templateSet: set, logger });
const reconciler = new Reconciler(bus, logger);
const coordinator = new Coordinator({ eventBus: bus, pipeline: pool, storeProvider: stores, logger });
const controller = new AbortController();
bus.start();
const running = [reconciler.start(controller.signal), coordinator.start(controller.signal)];
await coordinator.whenReady();
bus.publish(newEvent('index.synchronized', { resourceCounts: stores.counts() }));

const batcher = new ChangeBatcher(bus);
const start = performance.now();
let applied = 0;
const tick = setInterval(() => {
  const due = Math.floor(((performance.now() - start) / 1000) * RATE);
  for (; applied < due; applied++) {
    const change = cluster.change(stores);
    batcher.record(change.store, change.kind);
  }
  batcher.flush();
}, 10);
const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
console.log(`${INGRESSES} Ingresses, ${RATE} changes/s for ${seconds} s; a forced GC on the main thread every ${SAMPLE_S} s`);
try {
  for (let t = SAMPLE_S; t <= seconds; t += SAMPLE_S) {
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_S * 1000));
    gc();
    const memory = process.memoryUsage();
    const workers = await pool.workerStatus();
    console.log(
      `t=${t}s live main heap ${mb(memory.heapUsed)} MB, RSS ${mb(memory.rss)} MB, ` +
        `workers' heap in use ${workers.map((w) => mb(w.heapUsedBytes)).join(' / ')} MB, renders ${coordinator.stats.renders}, ` +
        `change log ${stores.version - stores.oldestDeltaVersion} changes`,
    );
  }
} finally {
  clearInterval(tick);
  controller.abort();
  await Promise.all(running);
  await pool.destroy();
}
console.log(`critical drops ${bus.droppedCritical}`);

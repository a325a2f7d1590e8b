// Live-heap check (`npm run bench:live-heap [seconds]`): the load test's default flood (5,000
// Ingresses, 5,000 changes/s) through the real bus, Reconciler, Coordinator and PoolPipeline,
// forcing a garbage collection on the main thread every 5 s and printing the live main heap, the
// process RSS, each worker's heap in use (not collected first, so it includes garbage) and the
// change log's window. A live heap that stays flat while RSS swings says the RSS swings are
// garbage and allocator behaviour, not a leak. Needs `node --expose-gc` (the npm script adds it).
import { silentLogger } from '../src/main/core/logger.js';
import { Engine } from '../src/main/engine.js';
import { ChangeBatcher } from '../src/main/sources/change-batcher.js';
import { SYNTHETIC_CLUSTER_VALUES, SyntheticCluster } from '../src/main/sources/synthetic/synthetic-cluster.js';
import { SyntheticChurn } from '../src/main/sources/synthetic/synthetic-churn.js';
import { loadTemplateSet } from '../src/main/template-set/template-set.js';
import { benchCommand, secondsArgument } from './bench-command.js';

const INGRESSES = 5000;
const RATE = 5000;
const SAMPLE_S = 5;
const command = benchCommand('bench:live-heap', `the load test's flood (${INGRESSES} Ingresses, ${RATE} changes/s) with a forced GC every ${SAMPLE_S} s: live main heap, RSS, workers' heap`)
  .argument('[seconds]', 'how long to run', secondsArgument, 90)
  .parse();
const seconds = command.processedArgs[0] as number;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:live-heap does)');

const set = await loadTemplateSet(undefined, SYNTHETIC_CLUSTER_VALUES);
const engine = await Engine.create({ templateSet: set, logger: silentLogger() });
const { stores, coordinator, bus } = engine;
const pool = engine.pool;
if (pool === undefined) throw new Error('the engine was expected to run a worker pool');
const cluster = new SyntheticCluster({ ingresses: INGRESSES, seed: 1 });
cluster.populate(stores);
const controller = new AbortController();
const running = engine.start(controller.signal);
await engine.whenStarted();

const churn = new SyntheticChurn({ cluster, stores, sink: new ChangeBatcher(bus), rate: RATE });
void churn.start();
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
  churn.stop();
  controller.abort();
  await running;
  await engine.close();
}
console.log(`critical drops ${bus.droppedCritical}`);

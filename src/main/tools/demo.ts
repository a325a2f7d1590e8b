// `haptic-reconciler demo` (what `npm start` runs): the bundled example cluster plus a synthetic
// cluster under constant churn, driven through the real path: stores -> bus -> Reconciler ->
// Coordinator -> PoolPipeline. Prints a live one-line summary and writes the final config.
import { createHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { Engine } from '../engine.js';
import { ChangeBatcher } from '../sources/change-batcher.js';
import type { EventOf } from '../events/events.js';
import { checkConfigFile, haproxyVersion } from '../haproxy/haproxy-check.js';
import { silentLogger } from '../core/logger.js';
import { loadManifests } from '../sources/manifest/manifest-loader.js';
import { outputPathsIn, writeRenderOutput } from '../output/render-output.js';
import { StoreProvider } from '../stores/store-provider.js';
import { SyntheticCluster } from '../sources/synthetic/synthetic-cluster.js';
import { SyntheticChurn } from '../sources/synthetic/synthetic-churn.js';
import { loadTemplateSet } from '../template-set/template-set.js';
import { EXAMPLES_DIR } from '../core/paths.js';

/** Sampling interval of the event-loop delay monitor; reported delays are net of it. */
const ELD_RESOLUTION_MS = 1;

export interface DemoOptions {
  readonly duration: number;
  readonly rate: number;
  readonly ingresses: number;
  readonly out: string;
  readonly seed: number;
}

export async function runDemo(options: DemoOptions): Promise<number> {
  const dirs = outputPathsIn(options.out);
  const set = await loadTemplateSet(undefined, {
    mapsDir: dirs.mapsDir,
    filesDir: dirs.filesDir,
    certsDir: dirs.certsDir,
    bindAddress: '127.0.0.1',
    httpPort: 18080,
    httpsPort: 18443,
    statusPort: 18404,
  });
  const logger = silentLogger();
  const stores = new StoreProvider(set.stores);
  const loaded = await loadManifests(EXAMPLES_DIR, set.stores);
  for (const error of loaded.errors) console.error(`example error: ${error}`);
  for (const { store, object } of loaded.objects) stores.store(store).upsert(object);
  const cluster = new SyntheticCluster({ ingresses: options.ingresses, seed: options.seed });
  cluster.populate(stores);
  console.log(
    `demo: ${loaded.objects.length} example objects + ${options.ingresses} synthetic Ingresses ` +
      `(${Object.entries(stores.counts()).map(([k, v]) => `${v} ${k}`).join(', ')}); ` +
      `churn ${options.rate} changes/s for ${options.duration} s`,
  );

  const engine = await Engine.create({ templateSet: set, stores, logger });
  const { bus, coordinator } = engine;
  // The demo's own view of the bus: lossy, so a slow printer can never cause a critical drop.
  const observer = bus.subscribe('demo-observer', {
    types: ['reconciliation.triggered', 'template.rendered', 'reconciliation.failed'],
    lossy: true,
    bufferSize: 100_000,
  });
  const controller = new AbortController();
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  eld.enable();
  const renderMs = createHistogram();
  const counts = { triggers: 0, renders: 0, failures: 0 };
  let latest: EventOf<'template.rendered'> | undefined;
  let lastFailure = '';

  const observing = (async () => {
    for await (const event of observer) {
      if (event.type === 'reconciliation.triggered') counts.triggers++;
      else if (event.type === 'template.rendered') {
        counts.renders++;
        renderMs.record(Math.max(1, Math.round(event.durationMs * 1000)));
        latest = event;
      } else {
        counts.failures++;
        lastFailure = `${event.phase}: ${event.error}`;
      }
    }
  })();

  const running = engine.start(controller.signal);
  await engine.whenStarted();

  const churn = new SyntheticChurn({ cluster, stores, sink: new ChangeBatcher(bus), rate: options.rate, tickMs: 20 });
  void churn.start();
  const started = performance.now();
  const summary = (): string => {
    const p = (q: number): string => (renderMs.count === 0 ? '-' : (renderMs.percentile(q) / 1000).toFixed(1));
    return (
      `t=${((performance.now() - started) / 1000).toFixed(1)}s changes=${churn.applied} triggers=${counts.triggers} ` +
      `renders=${counts.renders} coalesced=${coordinator.stats.coalesced} failures=${counts.failures} ` +
      `render p50=${p(50)}ms p99=${p(99)}ms main-loop-delay p99=${Math.max(0, eld.percentile(99) / 1e6 - ELD_RESOLUTION_MS).toFixed(1)}ms`
    );
  };
  const live = process.stdout.isTTY;
  const printer = setInterval(() => {
    if (live) process.stdout.write(`\r${summary()}\x1b[K`);
    else console.log(summary());
  }, live ? 250 : 2000);

  await new Promise((resolve) => setTimeout(resolve, options.duration * 1000));
  churn.stop();
  clearInterval(printer);
  // Let the last queued reconciliation finish so the written config includes every change.
  const finalVersion = stores.version;
  const settleDeadline = performance.now() + 30_000;
  while ((latest?.storeVersion ?? -1) < finalVersion && counts.failures === 0 && performance.now() < settleDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (live) process.stdout.write('\n');
  console.log(summary());
  controller.abort();
  observer.close();
  await Promise.all([running, observing]);
  eld.disable();
  await engine.close();

  console.log(`bus: critical drops=${bus.droppedCritical}, lossy drops=${bus.droppedLossy}; pool: ${JSON.stringify(engine.pool?.stats)}`);
  if (lastFailure !== '') console.log(`last failure: ${lastFailure}`);
  if (latest === undefined) {
    console.error('demo: nothing was rendered');
    return 1;
  }
  await writeRenderOutput(dirs, latest.haproxyConfig, latest.auxiliaryFiles);
  console.log(`final config (store version ${latest.storeVersion}, ${latest.configBytes} bytes, ${latest.auxiliaryFileCount} auxiliary files) written to ${dirs.configFile}`);
  if ((await haproxyVersion()) !== null) {
    const verdict = await checkConfigFile(dirs.configFile);
    console.log(`haproxy -c: ${verdict.ok ? 'valid' : `REJECTED\n${verdict.message}`}`);
    if (!verdict.ok) return 1;
  }
  return bus.droppedCritical === 0 ? 0 : 1;
}

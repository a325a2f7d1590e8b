// The render gate's cost on the main thread (`npm run bench:gate [N ...]`), per render after one
// changed EndpointSlice and after one changed Ingress, measured side by side in one run: the
// direct checker (the controller writes the private copy and forks `haproxy -c` itself,
// haproxyRenderChecker) against the helper process (CheckHelper: the controller sends the
// changes, the helper checks only renders whose structure changed). The renders come from a
// one-thread PoolPipeline, as in the product: a render that patches the one before carries its
// patch, which the helper reads instead of the whole config. "Main thread" is the main thread's
// time while the check runs (main-thread-time.ts: its CPU time where /proc says, which includes
// the blocking fork and every write callback), and the helper's synchronous part alone.
// Also reports haproxy -c per MiB of config. Sizes default to 1,000 and 10,000.
// Writes bench/results/gate.json.
import { mkdir, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/main/core/logger.js';
import { Engine } from '../src/main/engine.js';
import { CheckHelper } from '../src/main/gate/check-helper.js';
import { haproxyRenderChecker, type CheckableRender, type RenderChecker } from '../src/main/gate/render-checker.js';
import { loadTemplateSet } from '../src/main/template-set/template-set.js';
import { SYNTHETIC_CLUSTER_VALUES } from '../src/main/sources/synthetic/synthetic-cluster.js';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../src/worker/store/value-limits.js';
import { benchCommand, sizeArgument } from './bench-command.js';
import { environment, median, OneObjectChanger, populatedStores, printTable, sig, type ChangedKind, type Row } from './lib.js';
import { MAIN_THREAD_TIME_SOURCE, mainThreadTimer } from './main-thread-time.js';

const SAMPLES = 5;
const command = benchCommand('bench:gate', "the render gate's main-thread cost per render: the old checker against the helper process; writes bench/results/gate.json")
  .argument('[sizes...]', 'cluster sizes in Ingresses (default 1000 10000)', sizeArgument)
  .parse();
const N = (command.processedArgs[0] as number[] | undefined) ?? [1_000, 10_000];
const DIRECTORIES = { mapsDir: '/etc/haproxy/maps', filesDir: '/etc/haproxy/files', certsDir: '/etc/haproxy/certs' };
const never = new AbortController().signal;

/** Main-thread active and wall milliseconds of one check. */
async function timed(checker: RenderChecker, render: CheckableRender): Promise<{ activeMs: number; wallMs: number; syncMs: number; ok: boolean }> {
  const mainThread = mainThreadTimer();
  const start = performance.now();
  const pending = checker(render, never);
  const syncMs = performance.now() - start;
  const verdict = await pending;
  const wallMs = performance.now() - start;
  return { activeMs: mainThread(), wallMs, syncMs, ok: verdict.ok };
}

const rows: Row[] = [];
for (const n of N) {
  // Descriptors for every Ingress's server slots, and room for the output past 32 MiB (at 50,000), as in bench:scale.
  const set = await loadTemplateSet(undefined, { ...SYNTHETIC_CLUSTER_VALUES, ...DIRECTORIES, fdHardLimit: Math.max(Number(SYNTHETIC_CLUSTER_VALUES.fdHardLimit), 80 * n), maxOutputBytes: Math.max(DEFAULT_MAX_OUTPUT_BYTES, 4096 * n) });
  const { stores, cluster } = populatedStores(set, n);
  // The product's executor, on one worker thread: its results carry patches.
  const engine = await Engine.create({ templateSet: set, stores, threads: 1, renderTimeoutMs: 600_000, logger: silentLogger() });
  const direct = haproxyRenderChecker({ directories: DIRECTORIES });
  const helper = new CheckHelper({ directories: DIRECTORIES });
  try {
    const pool = engine.pool;
    if (pool === undefined) throw new Error('the engine was expected to run a worker pool');
    let result = await pool.execute(never, stores, 'reconcile');
    // The helper's first check runs haproxy -c (nothing passed before): not a sample.
    const first = await timed(helper.checker, result);
    let allOk = first.ok;
    for (const kind of ['endpointslice', 'ingress'] as const satisfies readonly ChangedKind[]) {
      const changer = new OneObjectChanger(stores, cluster, n, kind);
      const directActive: number[] = [];
      const directWall: number[] = [];
      const helperActive: number[] = [];
      const helperWall: number[] = [];
      const helperSync: number[] = [];
      let patched = 0;
      for (let i = 0; i < SAMPLES; i++) {
        changer.change();
        result = await pool.execute(never, stores, 'reconcile', { baseline: result });
        if (result.patch !== undefined) patched++;
        const render = { renderId: result.renderId, haproxyConfig: result.haproxyConfig, auxiliaryFiles: result.auxiliaryFiles, ...(result.patch === undefined ? {} : { patch: result.patch }) };
        // Interleaved, so drift in the machine's speed hits both alike.
        const a = await timed(direct, render);
        const b = await timed(helper.checker, render);
        allOk &&= a.ok && b.ok;
        directActive.push(a.activeMs);
        directWall.push(a.wallMs);
        helperActive.push(b.activeMs);
        helperWall.push(b.wallMs);
        helperSync.push(b.syncMs);
      }
      const configMiB = Buffer.byteLength(result.haproxyConfig) / 1024 / 1024;
      const row: Row = {
        ingresses: n,
        changed: kind,
        configMiB: sig(configMiB),
        patched: `${patched}/${SAMPLES}`,
        directMainThreadMs: sig(median(directActive)),
        helperMainThreadMs: sig(median(helperActive)),
        mainThreadRatio: sig(median(helperActive) / median(directActive)),
        // The helper's own synchronous part (finding the changes, serializing them).
        helperSyncMs: sig(median(helperSync)),
        directWallMs: sig(median(directWall)),
        helperWallMs: sig(median(helperWall)),
        haproxyCheckMsPerMiB: sig(median(directWall) / configMiB),
        helperSkipped: helper.stats.skipped,
        allPassed: allOk,
      };
      rows.push(row);
      console.error(`N=${n}: ${JSON.stringify(row)}`);
    }
  } finally {
    helper.close();
    await engine.close();
  }
}
printTable(`render gate per render after 1 changed EndpointSlice or Ingress (median of ${SAMPLES}, side by side)`, rows);
const targets = rows.map((r) => ({
  target: `render gate work on the main thread per render, 1 ${String(r.changed)} changed, N=${r.ingresses}`,
  limit: '≤ 2 ms',
  measured: r.helperMainThreadMs,
  before: r.directMainThreadMs,
  met: Number(r.helperMainThreadMs) <= 2,
}));
printTable('targets', targets);
const results = new URL('./results/', import.meta.url);
await mkdir(results, { recursive: true });
await writeFile(new URL('gate.json', results), `${JSON.stringify({ suite: 'gate', mainThreadTime: MAIN_THREAD_TIME_SOURCE, rows, targets, environment: environment() }, null, 2)}\n`);
console.error('wrote bench/results/gate.json');

// The render gate's cost on the main thread (`npm run bench:gate [N ...]`), per render after one
// changed EndpointSlice, measured side by side in one run: the direct checker (the controller
// writes the private copy and forks `haproxy -c` itself, haproxyRenderChecker) against the helper
// process (CheckHelper: the controller sends the changes, the helper checks only renders whose
// structure changed). "Main-thread active" is the event loop's active time while the check runs
// (performance.eventLoopUtilization), which includes the blocking fork and every write callback,
// and the helper's synchronous part alone.
// Also reports haproxy -c per MiB of config. Sizes default to 1,000 and 10,000.
// Writes bench/results/gate.json.
import { mkdir, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { CheckHelper } from '../src/main/gate/check-helper.js';
import { haproxyRenderChecker, type CheckableRender, type RenderChecker } from '../src/main/gate/render-checker.js';
import { InlinePipeline } from '../src/main/pipeline/inline-pipeline.js';
import { loadTemplateSet } from '../src/main/template-set/template-set.js';
import { SYNTHETIC_CLUSTER_VALUES } from '../src/main/sources/synthetic/synthetic-cluster.js';
import { benchCommand, sizeArgument } from './bench-command.js';
import { environment, median, OneObjectChanger, populatedStores, printTable, sig, type Row } from './lib.js';

const SAMPLES = 5;
const command = benchCommand('bench:gate', "the render gate's main-thread cost per render: the old checker against the helper process; writes bench/results/gate.json")
  .argument('[sizes...]', 'cluster sizes in Ingresses (default 1000 10000)', sizeArgument)
  .parse();
const N = (command.processedArgs[0] as number[] | undefined) ?? [1_000, 10_000];
const DIRECTORIES = { mapsDir: '/etc/haproxy/maps', filesDir: '/etc/haproxy/files', certsDir: '/etc/haproxy/certs' };
const never = new AbortController().signal;

/** Main-thread active and wall milliseconds of one check. */
async function timed(checker: RenderChecker, render: CheckableRender): Promise<{ activeMs: number; wallMs: number; syncMs: number; ok: boolean }> {
  const before = performance.eventLoopUtilization();
  const start = performance.now();
  const pending = checker(render, never);
  const syncMs = performance.now() - start;
  const verdict = await pending;
  const wallMs = performance.now() - start;
  const elu = performance.eventLoopUtilization(before);
  return { activeMs: elu.active, wallMs, syncMs, ok: verdict.ok };
}

const set = await loadTemplateSet(undefined, { ...SYNTHETIC_CLUSTER_VALUES, ...DIRECTORIES });
const rows: Row[] = [];
for (const n of N) {
  const { stores, cluster } = populatedStores(set, n);
  const pipeline = new InlinePipeline({ templateSet: set });
  const direct = haproxyRenderChecker({ directories: DIRECTORIES });
  const helper = new CheckHelper({ directories: DIRECTORIES });
  try {
    let result = await pipeline.execute(never, stores, 'reconcile');
    // The helper's first check runs haproxy -c (nothing passed before): not a sample.
    const first = await timed(helper.checker, { ...result, renderId: 'first' });
    const changer = new OneObjectChanger(stores, cluster, n, 'endpointslice');
    const directActive: number[] = [];
    const directWall: number[] = [];
    const helperActive: number[] = [];
    const helperWall: number[] = [];
    const helperSync: number[] = [];
    let allOk = first.ok;
    for (let i = 0; i < SAMPLES; i++) {
      changer.change();
      result = await pipeline.execute(never, stores, 'reconcile', { baseline: result });
      const render = { renderId: `r${i}`, haproxyConfig: result.haproxyConfig, auxiliaryFiles: result.auxiliaryFiles };
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
      configMiB: sig(configMiB),
      directMainThreadMs: sig(median(directActive)),
      helperMainThreadMs: sig(median(helperActive)),
      mainThreadRatio: sig(median(helperActive) / median(directActive)),
      // The helper's own synchronous part (finding the changes, serializing them); the rest of its
      // main-thread time is the event loop's other work meanwhile (a GC of the bench's inline render included).
      helperSyncMs: sig(median(helperSync)),
      directWallMs: sig(median(directWall)),
      helperWallMs: sig(median(helperWall)),
      haproxyCheckMsPerMiB: sig(median(directWall) / configMiB),
      helperSkipped: helper.stats.skipped,
      allPassed: allOk,
    };
    rows.push(row);
    console.error(`N=${n}: ${JSON.stringify(row)}`);
  } finally {
    helper.close();
  }
}
printTable(`render gate per render after 1 changed EndpointSlice (median of ${SAMPLES}, side by side)`, rows);
const targets = rows.map((r) => ({
  target: `render gate work on the main thread per render, N=${r.ingresses}`,
  limit: '≤ 2 ms',
  measured: r.helperMainThreadMs,
  before: r.directMainThreadMs,
  met: Number(r.helperMainThreadMs) <= 2,
}));
printTable('targets', targets);
const results = new URL('./results/', import.meta.url);
await mkdir(results, { recursive: true });
await writeFile(new URL('gate.json', results), `${JSON.stringify({ suite: 'gate', rows, targets, environment: environment() }, null, 2)}\n`);
console.error('wrote bench/results/gate.json');

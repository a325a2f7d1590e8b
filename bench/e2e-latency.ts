// End-to-end latency (`npm run bench:latency [N ...]`): from an EndpointSlice change to its
// acknowledgement by a real HAProxy's Runtime API, through the whole product path: store change
// -> resource.index.updated -> Reconciler -> Coordinator -> PoolPipeline render and validation ->
// template.rendered -> Deployer diff -> runtime `set server` on the admin socket. One synthetic
// cluster per N (default 100, 1,000 and 10,000 Ingresses), one slice changed at a time, each change
// waited for, with the main thread's CPU time from the change to applied (main-thread-time.ts:
// everything the controller's main thread did for it). Health checks are off (a Service annotation): HAProxy reserves a descriptor per
// checked server, and 30,000 checked servers do not fit this machine's 20,000-descriptor limit.
// Then the same apps routed by HTTPRoutes on one Gateway listener (route-cluster.ts; `--routes`
// sizes, default those of the run): an endpoint change on a route backend goes the same way, and
// the run fails if HAProxy's reload count (`show proc` on the master socket) moved during the
// changes, since each must be applied through the Runtime API alone.
// Writes bench/results/e2e-latency.json.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultLogger, silentLogger } from '../src/main/core/logger.js';
import { Engine } from '../src/main/engine.js';
import { HaproxyProcess } from '../src/main/haproxy/haproxy-process.js';
import { LocalHaproxyTarget } from '../src/main/haproxy/local-haproxy-target.js';
import { OutputDirectory } from '../src/main/output/output-directory.js';
import { ChangeBatcher } from '../src/main/sources/change-batcher.js';
import { SyntheticCluster } from '../src/main/sources/synthetic/synthetic-cluster.js';
import { loadOutputTemplateSet } from '../src/main/template-set/output-template-set.js';
import { deployWithLatency } from './applied-latency.js';
import { benchCommand, sizeArgument, sizeList } from './bench-command.js';
import { environment, median, printTable, sig, type Row } from './lib.js';
import { populateRoutes } from './route-cluster.js';
import { MAIN_THREAD_TIME_SOURCE, mainThreadTimer } from './main-thread-time.js';

const SAMPLES = 15;
const DEFAULT_LATENCY_SIZES = [100, 1_000, 10_000];
const command = benchCommand('bench:latency', 'end-to-end latency from an EndpointSlice change to its acknowledgement by a real HAProxy (needs HAProxy); writes bench/results/e2e-latency.json')
  .argument('[sizes...]', `cluster sizes in Ingresses (default ${DEFAULT_LATENCY_SIZES.join(' ')})`, sizeArgument)
  .option('--routes <sizes>', 'sizes of the HTTPRoute cluster measured after the Ingress ones ("none" for none; default: the same sizes)', (text: string) => (text === 'none' ? [] : sizeList(text)))
  .parse();
const N = (command.processedArgs[0] as number[] | undefined) ?? DEFAULT_LATENCY_SIZES;
const ROUTE_N = command.opts<{ routes?: number[] }>().routes ?? N;

/** `routes`: the apps are routed by HTTPRoutes on a Gateway listener instead of Ingresses. */
async function measure(n: number, routes: boolean): Promise<Row> {
  const out = await mkdtemp(join(tmpdir(), 'haptic-latency-'));
  const logger = process.env.BENCH_LOG === '1' ? defaultLogger() : silentLogger();
  const base = 20_000 + Math.floor(Math.random() * 20_000);
  const set = await loadOutputTemplateSet(out, undefined, { set: ['bindAddress=127.0.0.1', `httpPort=${base}`, `httpsPort=${base + 1}`, `statusPort=${base + 2}`], setNew: [] }, {
    runtimeSocket: join(out, 'run', 'admin.sock'),
  });
  const engine = await Engine.create({ templateSet: set, threads: 2, logger, renderTimeoutMs: 600_000 });
  const cluster = new SyntheticCluster({ ingresses: n, seed: 5 });
  if (routes) populateRoutes(engine.stores, cluster, n, base + 3);
  else cluster.populate(engine.stores);
  for (const service of [...engine.stores.store('services').list()]) {
    engine.stores.store('services').upsert({ ...service, metadata: { ...service.metadata, annotations: { 'haproxy.org/check': 'false' } } });
  }
  const haproxy = HaproxyProcess.forOutputDirectory(out, { logger, stdout: 'ignore', startTimeoutMs: 300_000 });
  const target = new LocalHaproxyTarget({ output: new OutputDirectory(out), haproxy, logger });
  const { deployer, applied, nextApplied } = deployWithLatency(engine, out, logger, { target });
  const stop = new AbortController();
  const running = engine.start(stop.signal);
  try {
    const startedAt = performance.now();
    while (!deployer.ready) await new Promise((resolve) => setTimeout(resolve, 50));
    const firstDeployMs = performance.now() - startedAt;
    const batcher = new ChangeBatcher(engine.bus);
    const reloadsBefore = (await haproxy.masterCli.showProc()).master.reloads;
    const active: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const index = Math.floor((i * n) / SAMPLES);
      const done = nextApplied();
      const mainThread = mainThreadTimer();
      // A generation past the slice's endpoint count, so one address really moves (generation g replaces pod g % endpoints).
      engine.stores.store('endpointslices').upsert(cluster.endpointSlice(index, 100 + i));
      batcher.record('endpointslices', 'modified');
      batcher.flush();
      // A change that is never applied (skipped, refused) is an error, not a hang.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`N=${n}: change ${i + 1} not applied within 120 s`)), 120_000);
      });
      await Promise.race([done, late]).finally(() => clearTimeout(timer));
      // Everything the main thread did for this change: the store, the Coordinator, the dispatch
      // to the pool and its result, the render gate, the Deployer, the output directory, events.
      active.push(mainThread());
    }
    const reloadsAfter = (await haproxy.masterCli.showProc()).master.reloads;
    if (reloadsBefore === undefined || reloadsAfter === undefined) throw new Error('show proc on the master socket gave no reload count');
    if (reloadsAfter !== reloadsBefore) throw new Error(`N=${n}${routes ? ' HTTPRoutes' : ''}: HAProxy reloaded during the endpoint changes (${String(reloadsBefore)} -> ${String(reloadsAfter)}); each must go through the Runtime API alone`);
    const sorted = [...applied].sort((a, b) => a - b);
    return {
      cluster: routes ? 'HTTPRoute' : 'Ingress',
      ingresses: n,
      servers: n * 10,
      firstDeployS: sig(firstDeployMs / 1000),
      changeToAppliedP50Ms: sig(median(sorted)),
      changeToAppliedMaxMs: sig(sorted.at(-1) ?? 0),
      mainThreadP50Ms: sig(median(active)),
      samples: sorted.length,
      reloadsDuringChanges: reloadsAfter - reloadsBefore,
    };
  } finally {
    stop.abort();
    await running;
    await engine.close();
    await target.stop();
    await rm(out, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (const n of N) {
  const row = await measure(n, false);
  console.error(`N=${n}: ${JSON.stringify(row)}`);
  rows.push(row);
}
const routeRows: Row[] = [];
for (const n of ROUTE_N) {
  const row = await measure(n, true);
  console.error(`N=${n} HTTPRoutes: ${JSON.stringify(row)}`);
  routeRows.push(row);
}
printTable(`endpoint change -> applied by HAProxy's Runtime API (median and max of ${SAMPLES} changes, one at a time)`, [...rows, ...routeRows]);
const results = new URL('./results/', import.meta.url);
await mkdir(results, { recursive: true });
// The scaling issue's latency targets, as figures of this one run (null: the run lacked a size).
const p50 = (n: number): number | undefined => {
  const row = rows.find((r) => Number(r.ingresses) === n);
  return row === undefined ? undefined : Number(row.changeToAppliedP50Ms);
};
const figure = (value: number | undefined): number | null => (value === undefined || !Number.isFinite(value) ? null : sig(value));
const ratio = figure((p50(10_000) ?? Number.NaN) / (p50(100) ?? Number.NaN));
const at10k = figure(p50(10_000));
const targets = [
  { target: 'endpoint change -> applied, p50 at 10,000 / p50 at 100', limit: '≤ 1.5×', measured: ratio, met: ratio === null ? null : ratio <= 1.5 },
  { target: 'endpoint change -> applied, p50 at 10,000', limit: '≤ 15 ms', measured: at10k, met: at10k === null ? null : at10k <= 15 },
  ...mainThreadTargets(rows),
  // Route backends go through the Runtime API as Ingress backends do: no reload (checked above for every change).
  ...routeRows.map((r) => ({ target: `HTTPRoute endpoint changes at ${r.ingresses} applied without a reload`, limit: '0 reloads', measured: r.reloadsDuringChanges, met: r.reloadsDuringChanges === 0 })),
];
printTable('targets', targets);
// Health checks are off, so no server slot counts against the descriptor budget (values.fdHardLimit / 2).
const slotBudget = 'not applied: health checks are off, so no Ingress loses its servers to the descriptor budget';
await writeFile(new URL('e2e-latency.json', results), `${JSON.stringify({ suite: 'e2e-latency', slotBudget, mainThreadTime: MAIN_THREAD_TIME_SOURCE, rows, routeRows, targets, environment: environment() }, null, 2)}\n`);
console.error('wrote bench/results/e2e-latency.json');

/** The main thread's time per endpoint change at the largest size, and against 1,000 (flat in N). */
function mainThreadTargets(measured: readonly Row[]): Row[] {
  const largest = [...measured].sort((a, b) => Number(b.ingresses) - Number(a.ingresses))[0];
  const small = measured.find((r) => Number(r.ingresses) === 1_000);
  if (largest === undefined) return [];
  const at = figure(Number(largest.mainThreadP50Ms));
  const out: Row[] = [{ target: `main-thread time per endpoint change, p50 at ${largest.ingresses}`, limit: '≤ 1 ms', measured: at, met: at === null ? null : at <= 1 }];
  if (small !== undefined && small !== largest) {
    const flat = figure(Number(largest.mainThreadP50Ms) / Number(small.mainThreadP50Ms));
    out.push({ target: `main-thread time per endpoint change, p50 at ${largest.ingresses} / at 1,000`, limit: '≤ 2×', measured: flat, met: flat === null ? null : flat <= 2 });
  }
  return out;
}

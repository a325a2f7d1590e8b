// Fleet latency (`npm run bench:fleet [N ...]`): an EndpointSlice change until the LAST of three
// agents (each `haptic-reconciler agent` in its own process, as deployed, or with --in-process in
// this one; each with its own HAProxy on 127.0.0.2, .3, .4, over HTTP on loopback) has applied it
// through its Runtime API, side by side with the single local HAProxy of
// `run --haproxy`, in the same run and through the same Deployer; plus the request bytes sent per
// instance for one endpoint change (runtime operation, then the changed files as a config patch).
// Health checks are off (a Service annotation), as in bench:latency. Writes bench/results/fleet-latency.json.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultLogger, silentLogger } from '../src/main/core/logger.js';
import { Engine } from '../src/main/engine.js';
import { fleetTargets } from '../src/main/fleet/fleet-targets.js';
import { HaproxyProcess } from '../src/main/haproxy/haproxy-process.js';
import { LocalHaproxyTarget } from '../src/main/haproxy/local-haproxy-target.js';
import { OutputDirectory } from '../src/main/output/output-directory.js';
import { ChangeBatcher } from '../src/main/sources/change-batcher.js';
import { SyntheticCluster } from '../src/main/sources/synthetic/synthetic-cluster.js';
import { loadOutputTemplateSet } from '../src/main/template-set/output-template-set.js';
import { deployWithLatency } from './applied-latency.js';
import { benchCommand, sizeArgument } from './bench-command.js';
import { startBenchAgents, type BenchAgents } from './fleet-agents.js';
import { environment, median, printTable, sig, type Row } from './lib.js';

const TOKEN = 'bench-token';
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];
const command = benchCommand('bench:fleet', "an EndpointSlice change until the last of 3 agents applied it, side by side with one local HAProxy; writes bench/results/fleet-latency.json")
  .argument('[sizes...]', 'cluster sizes in Ingresses (default 1000 10000)', sizeArgument)
  .option('--in-process', 'run the 3 agents in this process, sharing the leader\'s event loop, instead of one process each (as deployed)')
  .option('--samples <n>', 'endpoint changes per size and mode', (text) => sizeArgument(text, undefined)[0] as number, 15)
  .parse();
const sizes = command.processedArgs[0] as number[] | undefined;
const N = sizes === undefined || sizes.length === 0 ? [1_000, 10_000] : sizes;
const { inProcess = false, samples: SAMPLES } = command.opts<{ inProcess?: boolean; samples: number }>();
const AGENTS = inProcess ? 'in-process' : 'processes';

async function measure(n: number, mode: 'local' | 'fleet'): Promise<Row> {
  const root = await mkdtemp(join(tmpdir(), 'haptic-fleet-bench-'));
  const out = join(root, 'out');
  const logger = process.env.BENCH_LOG === '1' ? defaultLogger() : silentLogger();
  const base = 20_000 + Math.floor(Math.random() * 20_000);
  const set = await loadOutputTemplateSet(out, undefined, { set: ['bindAddress=127.0.0.1', `httpPort=${base}`, `httpsPort=${base + 1}`, `statusPort=${base + 2}`], setNew: [] }, {
    runtimeSocket: join(out, 'run', 'admin.sock'),
  });
  const engine = await Engine.create({ templateSet: set, threads: 2, logger, renderTimeoutMs: 600_000 });
  const cluster = new SyntheticCluster({ ingresses: n, seed: 5 });
  cluster.populate(engine.stores);
  for (const service of [...engine.stores.store('services').list()]) {
    engine.stores.store('services').upsert({ ...service, metadata: { ...service.metadata, annotations: { 'haproxy.org/check': 'false' } } });
  }
  let agents: BenchAgents | undefined;
  let bytes = 0;
  let local: LocalHaproxyTarget | undefined;
  let targets;
  if (mode === 'local') {
    local = new LocalHaproxyTarget({ output: new OutputDirectory(out), haproxy: HaproxyProcess.forOutputDirectory(out, { logger, stdout: 'ignore', startTimeoutMs: 300_000 }), logger });
    targets = { target: local };
  } else {
    agents = await startBenchAgents(root, ADDRESSES, TOKEN, logger, inProcess);
    targets = { targets: fleetTargets({ agents: agents.endpoints, token: TOKEN, timeoutMs: 300_000 }, { out, epoch: () => 0, clock: engine.clock, logger, onRequest: (_kind, _s, sent) => (bytes += sent) }), retry: {} };
  }
  const { deployer, applied, nextApplied } = deployWithLatency(engine, out, logger, targets);
  const stop = new AbortController();
  const running = engine.start(stop.signal);
  try {
    const startedAt = performance.now();
    while (deployer.fleetCounts.in_sync < (mode === 'fleet' ? ADDRESSES.length : 1)) await new Promise((resolve) => setTimeout(resolve, 50));
    const firstDeployMs = performance.now() - startedAt;
    const batcher = new ChangeBatcher(engine.bus);
    const perChange: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const index = Math.floor((i * n) / SAMPLES);
      const done = nextApplied();
      bytes = 0;
      engine.stores.store('endpointslices').upsert(cluster.endpointSlice(index, 100 + i));
      batcher.record('endpointslices', 'modified');
      batcher.flush();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`N=${n} ${mode}: change ${i + 1} not applied within 120 s`)), 120_000);
      });
      await Promise.race([done, late]).finally(() => clearTimeout(timer));
      // The files follow the runtime operation: let them go out before counting.
      while (deployer.fleetCounts.in_sync < (mode === 'fleet' ? ADDRESSES.length : 1)) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 300));
      perChange.push(bytes / ADDRESSES.length);
    }
    const sorted = [...applied].sort((a, b) => a - b);
    return {
      ingresses: n,
      mode,
      firstDeployS: sig(firstDeployMs / 1000),
      changeToAppliedP50Ms: sig(median(sorted)),
      changeToAppliedMaxMs: sig(sorted.at(-1) ?? 0),
      ...(mode === 'fleet' ? { agents: AGENTS, bytesPerInstanceP50: Math.round(median([...perChange].sort((a, b) => a - b))) } : {}),
      samples: sorted.length,
    };
  } finally {
    stop.abort();
    await running;
    await engine.close();
    await Promise.all([local?.stop(), agents?.stop()]);
    await rm(root, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (const n of N) {
  for (const mode of ['local', 'fleet'] as const) {
    const row = await measure(n, mode);
    console.error(`N=${n} ${mode}: ${JSON.stringify(row)}`);
    rows.push(row);
  }
}
printTable(`endpoint change -> applied (local HAProxy, and the last of 3 agents, ${inProcess ? 'in this process' : 'one process each'}; median and max of ${SAMPLES} changes, one at a time)`, rows);
const results = new URL('./results/', import.meta.url);
await mkdir(results, { recursive: true });
await writeFile(new URL('fleet-latency.json', results), `${JSON.stringify({ suite: 'fleet-latency', agents: AGENTS, samples: SAMPLES, rows, environment: environment() }, null, 2)}\n`);
console.error('wrote bench/results/fleet-latency.json');

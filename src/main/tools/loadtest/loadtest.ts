// `haptic-reconciler loadtest`: the synthetic event flood. The same seeded flood runs once per
// executor (InlinePipeline, then PoolPipeline), each in a fresh child process, through the real
// path: SyntheticCluster -> stores -> ChangeBatcher -> bus -> Reconciler -> Coordinator ->
// executor. The child measures its main thread (event-loop delay and utilisation, renders,
// coalescing, critical drops, freshness after the flood, memory over time and whether RSS settles)
// and serves /healthz on 127.0.0.1, which the parent probes every 50 ms over persistent
// connections, so the client's timing is not skewed by the child's blocked loop. The parent writes
// a JSON report, a Markdown summary (always printed), an SVG chart of event-loop delay over time
// and one of memory over time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { createHistogram, monitorEventLoopDelay, performance, type RecordableHistogram } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ChangeBatcher } from '../../sources/change-batcher.js';
import { Coordinator } from '../../reconcile/coordinator.js';
import { EventBus, type Subscription } from '../../bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../events/events.js';
import { InlinePipeline } from '../../pipeline/inline-pipeline.js';
import { silentLogger } from '../../core/logger.js';
import type { PipelineExecutor } from '../../pipeline/pipeline.js';
import { PoolPipeline } from '../../pipeline/pool/pool-pipeline.js';
import { Reconciler } from '../../reconcile/reconciler.js';
import { StoreProvider } from '../../stores/store-provider.js';
import { lineChartSvg, type ChartSeries } from '../svg-chart.js';
import { SyntheticCluster } from '../../sources/synthetic/synthetic-cluster.js';
import { loadTemplateSet } from '../../template-set/template-set.js';

export type LoadtestMode = 'inline' | 'pool';

export interface FloodOptions {
  readonly ingresses: number;
  /** Changes per second. */
  readonly rate: number;
  /** Seconds. */
  readonly duration: number;
  readonly seed: number;
  /** Worker threads of the pool (PoolPipeline's default when undefined). */
  readonly threads?: number;
}

export interface LoadtestOptions extends FloodOptions {
  readonly mode: LoadtestMode | 'both';
  readonly json?: string;
  readonly markdown?: string;
  readonly svg?: string;
  /** SVG chart of RSS and heap over time. */
  readonly rssSvg?: string;
}

/** One window of the memory series. */
export interface MemoryPoint {
  /** End of the window, ms since the flood started. */
  readonly tMs: number;
  /** Max process RSS (all threads) sampled in the window. */
  readonly rssMb: number;
  /** Main-thread V8 heap in use at the window's last sample. */
  readonly heapMb: number;
  /**
   * The pool workers' V8 heap in use, summed over the workers, from the last status they answered
   * in the window (a busy worker answers between renders); null when none arrived, and always for
   * the inline mode.
   */
  readonly workerHeapMb: number | null;
}

/** Whether RSS settles over the flood (see RSS_SETTLED_RULE). */
export interface MemorySettling {
  /** Max RSS of the windows ending in the first half of the flood. */
  readonly rssFirstHalfPeakMb: number;
  /** Max RSS of the windows ending in the second half of the flood. */
  readonly rssSecondHalfPeakMb: number;
  /** rssSecondHalfPeakMb over rssFirstHalfPeakMb, as growth in % (negative when it fell). */
  readonly rssGrowthPct: number;
  /** Least-squares slope of the windows' RSS over the second half of the flood. */
  readonly rssSlopeMbPerMin: number;
  /** rssSlopeMbPerMin in % of the flood's RSS peak (the larger half peak). */
  readonly rssSlopePctPerMin: number;
  /**
   * Standard error of that slope (MB/min): how far garbage-collection swings alone move it. A
   * slope within about two standard errors of the limit is a noise-limited verdict.
   */
  readonly rssSlopeStdErrMbPerMin: number;
  readonly rssSettled: boolean;
  /** The same halves for the main heap (its value at each window's end) and the workers' heap. */
  readonly heapFirstHalfPeakMb: number;
  readonly heapSecondHalfPeakMb: number;
  readonly workerHeapFirstHalfPeakMb: number | null;
  readonly workerHeapSecondHalfPeakMb: number | null;
}

/** What one child measures; the parent adds the probe figures. */
export interface ChildReport extends MemorySettling {
  readonly mode: LoadtestMode;
  readonly threads: number | null;
  /** Changes applied to the stores during the flood (rate x duration, caught up after stalls). */
  readonly changes: number;
  readonly floodMs: number;
  readonly initialRenderMs: number;
  /** Main event-loop delay over the flood, net of the monitor's 1 ms resolution. */
  readonly eldP50Ms: number;
  readonly eldP99Ms: number;
  readonly eldMaxMs: number;
  /** Main event-loop utilisation over the flood, 0..1. */
  readonly elu: number;
  /** From the flood's start until the freshness render (or the wait's end). */
  readonly triggers: number;
  readonly renders: number;
  readonly coalesced: number;
  readonly failures: number;
  readonly criticalDrops: number;
  /** The most executes running at once (pool: worker tasks, abandoned ones included). */
  readonly maxRendersInFlight: number;
  /** The most items the Coordinator's mailbox held when a render ended. */
  readonly maxQueuedTriggers: number;
  readonly lossyDrops: number;
  readonly renderP50Ms: number;
  readonly renderP99Ms: number;
  /** Last change of the flood -> template.rendered covering it; a lower bound when `fresh` is false. */
  readonly freshnessMs: number;
  readonly fresh: boolean;
  /** Process RSS (all threads) and main-thread V8 heap in use, sampled every 100 ms. */
  readonly peakRssMb: number;
  readonly peakHeapMb: number;
  /** Peak of the pool workers' heap in use (summed over the workers); null for the inline mode. */
  readonly peakWorkerHeapMb: number | null;
  /** Max event-loop delay (net) per window, from the flood's start. */
  readonly seriesWindowMs: number;
  readonly series: readonly { readonly tMs: number; readonly eldMaxMs: number }[];
  /**
   * Memory per window from the flood's start until the end of the freshness wait (the window
   * ending at the flood's end is cut there). 1 s windows; shorter for floods under 20 s (at least
   * 20 windows per flood), longer for floods over 30 min (at most MAX_MEMORY_POINTS points).
   */
  readonly memoryWindowMs: number;
  readonly memorySeries: readonly MemoryPoint[];
}

export interface ModeReport extends ChildReport {
  /** Latency of GET /healthz on the child's main thread, probed from the parent during the flood. */
  readonly probeP50Ms: number;
  readonly probeP99Ms: number;
  /** Probes in the percentiles: answered, or timed out (recorded at the timeout). */
  readonly probes: number;
  /** Probes that failed, timed out, or were not sent because too many were outstanding. */
  readonly probeErrors: number;
}

export interface LoadtestReport {
  readonly options: FloodOptions;
  readonly environment: { readonly node: string; readonly platform: string; readonly cpus: number };
  /** How `rssSettled` is decided (RSS_SETTLED_RULE). */
  readonly rssSettledRule: string;
  readonly inline?: ModeReport;
  readonly pool?: ModeReport;
  /** The performance targets this run can judge, with the measured figures. */
  readonly targets?: readonly TargetCheck[];
}

/** Sampling interval of the event-loop delay monitor; reported delays are net of it. */
const ELD_RESOLUTION_MS = 1;
const TICK_MS = 10;
const SERIES_WINDOW_MS = 250;
const MAX_SERIES_POINTS = 20_000;
const MEMORY_SAMPLE_MS = 100;
const MEMORY_WINDOW_MS = 1000;
/** Fewest memory windows per flood (shorter floods get shorter windows, down to MEMORY_SAMPLE_MS). */
const MIN_MEMORY_WINDOWS = 20;
const MAX_MEMORY_POINTS = 2000;
/** A worker status not answered by then no longer holds back the next request. */
const WORKER_STATUS_TIMEOUT_MS = 5000;
/** Settling bounds: the second half of the flood may add this much to the first half's RSS peak ... */
const RSS_SETTLED_MAX_GROWTH_PCT = 5;
/** ... and its RSS trend may rise this fast, in % of the flood's RSS peak per minute. */
const RSS_SETTLED_MAX_SLOPE_PCT_PER_MIN = 5;
export const RSS_SETTLED_RULE =
  `RSS is settled when, splitting the flood (its start to its last change) into halves by the end time of each memory window, ` +
  `the second half's peak RSS is at most ${RSS_SETTLED_MAX_GROWTH_PCT}% above the first half's (rssGrowthPct <= ${RSS_SETTLED_MAX_GROWTH_PCT}) ` +
  `and the least-squares slope of the second half's per-window peak RSS is at most ${RSS_SETTLED_MAX_SLOPE_PCT_PER_MIN}% of the flood's RSS peak per minute ` +
  `(rssSlopePctPerMin <= ${RSS_SETTLED_MAX_SLOPE_PCT_PER_MIN}). The freshness wait after the flood is plotted but not judged.`;
const PROGRESS_MS = 1000;
const INITIAL_RENDER_TIMEOUT_MS = 120_000;
const FRESHNESS_TIMEOUT_MS = 60_000;
const PROBE_TIMEOUT_MS = 30_000;
/** How long a child waits for the parent to finish probing before it shuts down anyway. */
const RELEASE_TIMEOUT_MS = PROBE_TIMEOUT_MS + 10_000;
const SETUP_TIMEOUT_MS = 180_000;
const PROBE_INTERVAL_MS = 50;
/** Persistent connections the parent opens before the flood and probes over. */
const PROBE_CONNECTIONS = 64;
/** The parent's line on the child's stdin once its probe connections are open. */
const WARMED = 'warmed';
const MAX_PROBES_OUTSTANDING = 200;
const MAX_PROBES = 100_000;
const LIMITS = { ingresses: 1_000_000, rate: 1_000_000, duration: 3600, threads: 64 } as const;
/** Lines a child writes on stdout carry this key; anything else is passed through to stderr. */
const PROTOCOL_KEY = 'loadtest';

/** Child -> parent, one JSON line each on stdout. Parent -> child: a `warmed` line, then end of stdin. */
type ChildMessage =
  | { readonly loadtest: 'listening'; readonly port: number }
  | { readonly loadtest: 'flood-start' }
  | { readonly loadtest: 'flood-end' }
  | { readonly loadtest: 'result'; readonly result: ChildReport };

export function validateFloodOptions(options: FloodOptions): void {
  const check = (ok: boolean, message: string): void => {
    if (!ok) throw new RangeError(message);
  };
  check(Number.isInteger(options.ingresses) && options.ingresses >= 1 && options.ingresses <= LIMITS.ingresses, `--ingresses must be an integer in 1..${LIMITS.ingresses}`);
  check(Number.isFinite(options.rate) && options.rate > 0 && options.rate <= LIMITS.rate, `--rate must be a number in (0, ${LIMITS.rate}]`);
  check(Number.isFinite(options.duration) && options.duration > 0 && options.duration <= LIMITS.duration, `--duration must be a number of seconds in (0, ${LIMITS.duration}]`);
  check(Number.isInteger(options.seed), '--seed must be an integer');
  check(options.threads === undefined || (Number.isInteger(options.threads) && options.threads >= 1 && options.threads <= LIMITS.threads), `--threads must be an integer in 1..${LIMITS.threads}`);
}

// ---------------------------------------------------------------------------------------------
// Parent: one child per mode, one after the other; probes, aggregation, reports.

export async function runLoadtest(options: LoadtestOptions): Promise<number> {
  validateFloodOptions(options);
  const modes: LoadtestMode[] = options.mode === 'both' ? ['inline', 'pool'] : [options.mode];
  const flood: FloodOptions = {
    ingresses: options.ingresses,
    rate: options.rate,
    duration: options.duration,
    seed: options.seed,
    ...(options.threads === undefined ? {} : { threads: options.threads }),
  };
  const report: { -readonly [K in keyof LoadtestReport]: LoadtestReport[K] } = {
    options: flood,
    environment: { node: process.version, platform: `${process.platform}-${process.arch}`, cpus: availableParallelism() },
    rssSettledRule: RSS_SETTLED_RULE,
  };
  console.error(
    `loadtest: ${flood.ingresses} Ingresses, ${flood.rate} changes/s for ${flood.duration} s, seed ${flood.seed}; ` +
      `modes ${modes.join(', ')} (each in a fresh child process, one after the other)`,
  );
  for (const mode of modes) report[mode] = await runModeInChild(mode, flood);
  report.targets = evaluateTargets(report);

  const markdown = markdownSummary(report);
  console.log(markdown);
  if (options.json !== undefined) await writeFile(options.json, `${JSON.stringify(report, null, 2)}\n`);
  if (options.markdown !== undefined) await writeFile(options.markdown, markdown);
  if (options.svg !== undefined) await writeFile(options.svg, eventLoopDelayChart(report));
  if (options.rssSvg !== undefined) await writeFile(options.rssSvg, memoryChart(report));

  const problems = modes.flatMap((mode) => {
    const r = report[mode] as ModeReport;
    return [
      ...(r.criticalDrops > 0 ? [`${mode}: ${r.criticalDrops} critical bus drops`] : []),
      ...(r.failures > 0 ? [`${mode}: ${r.failures} failed reconciliations`] : []),
      ...(r.fresh ? [] : [`${mode}: the last change was not rendered within ${FRESHNESS_TIMEOUT_MS} ms`]),
    ];
  });
  for (const problem of problems) console.error(`loadtest: ${problem}`);
  return problems.length === 0 ? 0 : 1;
}

/** Runs one mode in a fresh child process and probes its /healthz during the flood. */
async function runModeInChild(mode: LoadtestMode, flood: FloodOptions): Promise<ModeReport> {
  const { cli, execArgv } = cliEntry();
  const args = [
    ...execArgv,
    cli,
    'loadtest',
    '--child',
    mode,
    '--ingresses',
    String(flood.ingresses),
    '--rate',
    String(flood.rate),
    '--duration',
    String(flood.duration),
    '--seed',
    String(flood.seed),
    ...(flood.threads === undefined ? [] : ['--threads', String(flood.threads)]),
  ];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.on('error', () => undefined); // the child may be gone already; its exit is reported
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  exited.catch(() => undefined); // a spawn error surfaces where `exited` is awaited
  const deadlineMs = SETUP_TIMEOUT_MS + flood.duration * 1000 + FRESHNESS_TIMEOUT_MS + RELEASE_TIMEOUT_MS;
  const killer = setTimeout(() => {
    console.error(`loadtest: ${mode} child ${child.pid} did not finish within ${Math.round(deadlineMs / 1000)} s; killing it`);
    child.kill('SIGKILL');
  }, deadlineMs);
  console.error(`loadtest: ${mode}: child process ${child.pid} started`);

  const maxProbes = Math.min(MAX_PROBES, Math.ceil((flood.duration * 1000) / PROBE_INTERVAL_MS) + 10);
  let prober: HealthProber | undefined;
  let result: ChildReport | undefined;
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const message = parseChildMessage(line);
      if (message === undefined) {
        if (line.trim() !== '') process.stderr.write(`[${mode} child] ${line}\n`);
        continue;
      }
      if (message.loadtest === 'listening') {
        const opened = new HealthProber(message.port, maxProbes);
        prober = opened;
        void opened.warm(PROBE_CONNECTIONS).then(() => child.stdin.write(`${WARMED}\n`));
      } else if (message.loadtest === 'flood-start') {
        prober?.start();
      } else if (message.loadtest === 'flood-end') {
        prober?.stop();
      } else {
        result = message.result;
        // Probes sent while the child was blocked are still in flight: wait for them (each is
        // bounded by its timeout), then let the child close its server and exit.
        prober?.stop();
        await prober?.drained();
        child.stdin.end();
      }
    }
    const [code, signal] = await exited;
    if (result === undefined) throw new Error(`loadtest: the ${mode} child exited (${signal ?? `code ${code}`}) without a result`);
    if (code !== 0) console.error(`loadtest: the ${mode} child exited with code ${code}`);
  } finally {
    clearTimeout(killer);
    prober?.close();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  const probes = prober?.stats ?? { p50Ms: 0, p99Ms: 0, completed: 0, errors: 0 };
  return { ...result, probeP50Ms: probes.p50Ms, probeP99Ms: probes.p99Ms, probes: probes.completed, probeErrors: probes.errors };
}

/** The CLI script and the Node flags a child needs: tsx's loader when running from source. */
function cliEntry(): { cli: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const cli = fileURLToPath(new URL(`../../cli/cli.${fromSource ? 'ts' : 'js'}`, import.meta.url));
  // A debugger port cannot be shared with the child.
  const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--inspect'));
  if (fromSource && !execArgv.some((arg) => arg.includes('tsx'))) execArgv.push('--import', 'tsx');
  return { cli, execArgv };
}

function parseChildMessage(line: string): ChildMessage | undefined {
  if (!line.startsWith(`{"${PROTOCOL_KEY}":`)) return undefined;
  try {
    return JSON.parse(line) as ChildMessage;
  } catch {
    return undefined;
  }
}

/**
 * GET /healthz every PROBE_INTERVAL_MS, open loop: a probe is sent on schedule whether or not
 * the previous ones were answered, so a blocked server shows up as latency, not as fewer samples.
 * Probes go over persistent connections opened before the flood (`warm`): a Node server accepts
 * about one new connection per event-loop turn, so a connection per probe would measure that
 * accept queue, not how long the main thread takes to answer. A probe that times out is counted
 * as an error and also recorded at its elapsed time, so the tail is a lower bound, never hidden.
 */
class HealthProber {
  readonly #port: number;
  readonly #maxProbes: number;
  /** Beyond PROBE_CONNECTIONS busy sockets a probe waits in the agent's queue, timed all along. */
  readonly #agent = new Agent({ keepAlive: true, maxSockets: PROBE_CONNECTIONS });
  /** Microseconds. */
  readonly #latency: RecordableHistogram = createHistogram();
  #timer: NodeJS.Timeout | undefined;
  #issued = 0;
  #outstanding = 0;
  #errors = 0;
  #idleWaiters: (() => void)[] = [];

  constructor(port: number, maxProbes: number) {
    this.#port = port;
    this.#maxProbes = maxProbes;
  }

  /** Opens `connections` keep-alive sockets with concurrent, unrecorded requests. */
  async warm(connections: number): Promise<void> {
    await Promise.all(Array.from({ length: connections }, () => this.#get().catch(() => undefined)));
  }

  start(): void {
    this.#probe();
    this.#timer = setInterval(() => this.#probe(), PROBE_INTERVAL_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Resolves once every probe sent has been answered or has failed (each is bounded by its timeout). */
  async drained(): Promise<void> {
    while (this.#outstanding > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  close(): void {
    this.stop();
    this.#agent.destroy();
  }

  get stats(): { p50Ms: number; p99Ms: number; completed: number; errors: number } {
    return { p50Ms: percentileMs(this.#latency, 50), p99Ms: percentileMs(this.#latency, 99), completed: this.#latency.count, errors: this.#errors };
  }

  #probe(): void {
    if (this.#issued >= this.#maxProbes) {
      this.stop();
      return;
    }
    this.#issued++;
    // Counted as an error rather than sent: the bound keeps sockets and memory finite.
    if (this.#outstanding >= MAX_PROBES_OUTSTANDING) {
      this.#errors++;
      return;
    }
    this.#outstanding++;
    const started = performance.now();
    const settle = (error?: unknown): void => {
      const timedOut = error instanceof ProbeTimeout;
      if (error !== undefined) this.#errors++;
      if (error === undefined || timedOut) this.#latency.record(toMicros(performance.now() - started));
      this.#outstanding--;
      if (this.#outstanding === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    };
    this.#get().then(() => settle(), settle);
  }

  /** One GET /healthz; rejects on a non-200 answer, an error, or ProbeTimeout. */
  #get(): Promise<void> {
    return new Promise((resolve, reject) => {
      const fail = (error: unknown): void => {
        clearTimeout(timer);
        reject(error);
      };
      const req = request({ host: '127.0.0.1', port: this.#port, path: '/healthz', agent: this.#agent }, (res) => {
        res.once('end', () => {
          clearTimeout(timer);
          if (res.statusCode === 200) resolve();
          else reject(new Error(`HTTP ${res.statusCode}`));
        });
        res.once('error', fail);
        res.resume();
      });
      // A whole-request deadline (the `timeout` option only watches an idle socket, and a probe
      // may wait in the agent's queue first).
      const timer = setTimeout(() => {
        reject(new ProbeTimeout());
        req.destroy();
      }, PROBE_TIMEOUT_MS);
      req.once('error', fail);
      req.end();
    });
  }
}

class ProbeTimeout extends Error {
  constructor() {
    super(`probe timed out after ${PROBE_TIMEOUT_MS} ms`);
  }
}

// ---------------------------------------------------------------------------------------------
// Child: one mode, one flood, one result line.

/** Runs the flood for one executor in this process and writes the result as one JSON line. */
export async function runLoadtestChild(mode: LoadtestMode, options: FloodOptions): Promise<number> {
  validateFloodOptions(options);
  const set = await loadTemplateSet();
  const stores = new StoreProvider(set.stores);
  const cluster = new SyntheticCluster({ ingresses: options.ingresses, seed: options.seed });
  cluster.populate(stores);
  const parent = new ParentChannel();
  const server = await startHealthServer();
  emit({ loadtest: 'listening', port: server.port });
  let pool: PoolPipeline | undefined;
  try {
    if (mode === 'pool') {
      const threads = options.threads === undefined ? {} : { threads: options.threads };
      pool = await PoolPipeline.create({ templateSet: set, logger: silentLogger(), ...threads });
    }
    const pipeline = new ConcurrencyProbe(pool ?? new InlinePipeline({ templateSet: set }), pool);
    const workers = pool;
    const workerHeapBytes =
      workers === undefined ? null : async () => (await workers.workerStatus()).reduce((sum, w) => sum + w.heapUsedBytes, 0);
    const result = await floodOnce({ mode, options, cluster, stores, pipeline, threads: pool?.threads ?? null, workerHeapBytes, parent });
    emit({ loadtest: 'result', result });
    // The parent closes our stdin once its last probe is answered.
    await parent.until(() => parent.ended, RELEASE_TIMEOUT_MS);
    return 0;
  } finally {
    parent.close();
    await pool?.destroy();
    await server.close();
  }
}

/** Counts the executes running at once; with a pool, also its worker tasks still running. */
class ConcurrencyProbe implements PipelineExecutor {
  max = 0;
  #running = 0;

  constructor(
    private readonly inner: PipelineExecutor,
    private readonly pool: PoolPipeline | undefined,
  ) {}

  async execute(...args: Parameters<PipelineExecutor['execute']>): ReturnType<PipelineExecutor['execute']> {
    this.#running++;
    this.max = Math.max(this.max, this.#running, (this.pool?.rendersInFlight ?? 0) + 1);
    try {
      return await this.inner.execute(...args);
    } finally {
      this.#running--;
    }
  }
}

interface FloodRig {
  readonly mode: LoadtestMode;
  readonly options: FloodOptions;
  readonly cluster: SyntheticCluster;
  readonly stores: StoreProvider;
  /** The executor, wrapped to count concurrent renders. */
  readonly pipeline: ConcurrencyProbe;
  readonly threads: number | null;
  /** The pool workers' heap in use, summed; null for the inline mode. */
  readonly workerHeapBytes: (() => Promise<number>) | null;
  readonly parent: ParentChannel;
}

/** Starts the engine like the demo, waits for the first render, floods, waits for freshness. */
async function floodOnce(rig: FloodRig): Promise<ChildReport> {
  const { mode, cluster, stores } = rig;
  const log = (text: string): void => void process.stderr.write(`loadtest[${mode}] ${text}\n`);
  const logger = silentLogger();
  const bus = new EventBus<ControllerEvent>({ logger });
  const reconciler = new Reconciler(bus, logger);
  const coordinator = new Coordinator({ eventBus: bus, pipeline: rig.pipeline, storeProvider: stores, logger });
  const observer = new FloodObserver(bus);
  const controller = new AbortController();
  bus.start();
  const running = [reconciler.start(controller.signal), coordinator.start(controller.signal), observer.run()];
  let progress: NodeJS.Timeout | undefined;
  let memory: MemorySampler | undefined;
  try {
    await coordinator.whenReady();
    const initialStarted = performance.now();
    bus.publish(newEvent('index.synchronized', { resourceCounts: stores.counts() }));
    await withTimeout(observer.firstRender, INITIAL_RENDER_TIMEOUT_MS, 'the initial render');
    const initialRenderMs = performance.now() - initialStarted;
    log(`${cluster.size} Ingresses (store version ${stores.version}); initial render ${initialRenderMs.toFixed(0)} ms; flooding`);

    // The parent's probe connections must be open before the clock starts (no wait standalone).
    await rig.parent.until(() => rig.parent.warmed || rig.parent.ended, RELEASE_TIMEOUT_MS);

    // Measurement starts here, after the first render.
    const coalescedBefore = coordinator.stats.coalesced;
    memory = new MemorySampler(memoryWindowMs(rig.options.duration), rig.workerHeapBytes);
    const flood = new FloodDriver(rig, new ChangeBatcher(bus), observer);
    progress = setInterval(
      () =>
        log(
          `t=${flood.elapsedSeconds.toFixed(1)}s changes=${flood.applied}/${flood.total} triggers=${observer.triggers} ` +
            `renders=${observer.renders} coalesced=${coordinator.stats.coalesced - coalescedBefore} failures=${observer.failures}`,
        ),
      PROGRESS_MS,
    );
    observer.counting = true;
    emit({ loadtest: 'flood-start' });
    const measured = await flood.run();
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
      peakRssMb: round(memory.peakRss / 2 ** 20, 1),
      peakHeapMb: round(memory.peakHeap / 2 ** 20, 1),
      peakWorkerHeapMb: memory.peakWorkerHeap === null ? null : round(memory.peakWorkerHeap / 2 ** 20, 1),
      seriesWindowMs: SERIES_WINDOW_MS,
      series: measured.series,
      ...memorySettling(memory.points, memory.floodEndMs),
      memoryWindowMs: memory.windowMs,
      memorySeries: memory.points,
    };
  } finally {
    clearInterval(progress);
    await memory?.stop();
    controller.abort();
    observer.close();
    await Promise.all(running);
  }
}

type ObservedEvent = EventOf<'reconciliation.triggered' | 'template.rendered' | 'reconciliation.failed'>;

/** The load test's view of the bus: counts triggers and renders, and spots the fresh render. */
class FloodObserver {
  /** Counters and the render histogram only move while this is set (the flood and its settling). */
  counting = false;
  triggers = 0;
  renders = 0;
  failures = 0;
  lastFailure = '';
  /** Microseconds. */
  readonly renderMs: RecordableHistogram = createHistogram();
  readonly #subscription: Subscription<ObservedEvent>;
  readonly #firstRender = deferred();
  readonly #fresh = deferred();
  #freshVersion = Number.POSITIVE_INFINITY;
  #freshAt: number | undefined;

  constructor(bus: EventBus<ControllerEvent>) {
    // Lossy, so measuring can never cause a critical drop; large enough never to drop.
    this.#subscription = bus.subscribe('loadtest-observer', {
      types: ['reconciliation.triggered', 'template.rendered', 'reconciliation.failed'],
      lossy: true,
      bufferSize: 100_000,
    });
  }

  /** Resolves with the first successful render; rejects if the first reconciliation fails. */
  get firstRender(): Promise<void> {
    return this.#firstRender.promise;
  }

  /** Resolves with the first render of `expectVersion`'s version or later. */
  get fresh(): Promise<void> {
    return this.#fresh.promise;
  }

  /** When (performance.now) the fresh render was seen. */
  get freshAt(): number | undefined {
    return this.#freshAt;
  }

  /** Must be called synchronously after the last change, before its render can run. */
  expectVersion(version: number): void {
    this.#freshVersion = version;
  }

  async run(): Promise<void> {
    for await (const event of this.#subscription) this.#see(event);
  }

  close(): void {
    this.#subscription.close();
  }

  #see(event: ObservedEvent): void {
    switch (event.type) {
      case 'reconciliation.triggered':
        if (this.counting) this.triggers++;
        return;
      case 'template.rendered':
        this.#firstRender.resolve();
        if (this.counting) {
          this.renders++;
          this.renderMs.record(toMicros(event.durationMs));
        }
        if (this.#freshAt === undefined && event.storeVersion >= this.#freshVersion) {
          this.#freshAt = performance.now();
          this.#fresh.resolve();
        }
        return;
      case 'reconciliation.failed':
        if (this.counting) this.failures++;
        this.lastFailure = `${event.phase}: ${event.error}`;
        this.#firstRender.reject(new Error(`the initial render failed: ${this.lastFailure}`));
        return;
    }
  }
}

interface FloodMeasurement {
  readonly floodMs: number;
  /** performance.now() right after the flood's last change. */
  readonly lastChangeAt: number;
  readonly eldP50Ms: number;
  readonly eldP99Ms: number;
  readonly eldMaxMs: number;
  readonly elu: number;
  readonly series: readonly { readonly tMs: number; readonly eldMaxMs: number }[];
}

/**
 * Applies `rate` changes per second in TICK_MS ticks on a timer, flushing the batcher after each,
 * and measures the main event loop meanwhile. A tick applies every change due by then, so a tick
 * that fires late (an inline render held the loop) catches up, as a watcher would after a stall:
 * both modes apply the same changes.
 */
class FloodDriver {
  readonly total: number;
  applied = 0;
  readonly #rig: FloodRig;
  readonly #batcher: ChangeBatcher;
  readonly #observer: FloodObserver;
  #started = performance.now();

  constructor(rig: FloodRig, batcher: ChangeBatcher, observer: FloodObserver) {
    this.#rig = rig;
    this.#batcher = batcher;
    this.#observer = observer;
    this.total = Math.round(rig.options.rate * rig.options.duration);
  }

  get elapsedSeconds(): number {
    return (performance.now() - this.#started) / 1000;
  }

  async run(): Promise<FloodMeasurement> {
    const { options, cluster, stores } = this.#rig;
    const durationMs = options.duration * 1000;
    const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
    const eldWindow = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
    // One point per window: its end (ms since the flood started) and its max delay.
    const series: { tMs: number; eldMaxMs: number }[] = [];
    const closeWindow = (final = false): void => {
      const point = { tMs: round(performance.now() - this.#started, 0), eldMaxMs: round(netDelayMs(eldWindow.max), 2) };
      eldWindow.reset();
      const last = series.at(-1);
      // A sliver of a window at the end joins the previous one rather than plotting a stray point.
      if (final && last !== undefined && point.tMs - last.tMs < SERIES_WINDOW_MS / 2) {
        last.tMs = point.tMs;
        last.eldMaxMs = Math.max(last.eldMaxMs, point.eldMaxMs);
      } else if (series.length < MAX_SERIES_POINTS) {
        series.push(point);
      }
    };
    let ticker: NodeJS.Timeout | undefined;
    let windows: NodeJS.Timeout | undefined;
    try {
      eld.enable();
      eldWindow.enable();
      const eluStart = performance.eventLoopUtilization();
      this.#started = performance.now();
      windows = setInterval(() => closeWindow(), SERIES_WINDOW_MS);
      const lastChangeAt = await new Promise<number>((resolve) => {
        ticker = setInterval(() => {
          const elapsed = Math.min(performance.now() - this.#started, durationMs);
          const due = Math.min(this.total, Math.floor((options.rate * elapsed) / 1000));
          for (; this.applied < due; this.applied++) {
            const change = cluster.change(stores);
            this.#batcher.record(change.store, change.kind);
          }
          if (elapsed >= durationMs) {
            clearInterval(ticker);
            // Before the flush: the render it triggers must be recognised as the fresh one.
            this.#observer.expectVersion(stores.version);
            resolve(performance.now());
          }
          this.#batcher.flush();
        }, TICK_MS);
      });
      const floodMs = performance.now() - this.#started;
      const elu = performance.eventLoopUtilization(eluStart).utilization;
      clearInterval(windows);
      closeWindow(true);
      return {
        floodMs,
        lastChangeAt,
        eldP50Ms: round(netDelayMs(eld.percentile(50)), 2),
        eldP99Ms: round(netDelayMs(eld.percentile(99)), 2),
        eldMaxMs: round(netDelayMs(eld.max), 2),
        elu: round(elu, 4),
        series,
      };
    } finally {
      clearInterval(ticker);
      clearInterval(windows);
      eld.disable();
      eldWindow.disable();
    }
  }
}

function emit(message: ChildMessage): void {
  // stdout is a pipe: writes are synchronous on Linux, so a line is out before the loop blocks.
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** What the parent says on our stdin: a `warmed` line, then end of input (we may shut down). */
class ParentChannel {
  warmed = false;
  ended = false;
  readonly #lines = createInterface({ input: process.stdin });
  #waiters: (() => void)[] = [];

  constructor() {
    this.#lines.on('line', (line) => {
      if (line.trim() === WARMED) this.warmed = true;
      this.#wake();
    });
    this.#lines.once('close', () => {
      this.ended = true;
      this.#wake();
    });
  }

  /** Resolves once `condition` holds, or after `timeoutMs`. */
  async until(condition: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!condition() && performance.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - performance.now());
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.#lines.close();
    process.stdin.destroy();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

/** A tiny HTTP server on the main thread: what a controller's health endpoint would be. */
async function startHealthServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const ok = req.url === '/healthz';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'text/plain' });
    res.end(ok ? 'ok\n' : 'not found\n');
  });
  // The prober's persistent connections stay open however long the loop is blocked.
  server.keepAliveTimeout = 0;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

/**
 * Memory over the flood and the freshness wait: process RSS and main-thread heap sampled every
 * MEMORY_SAMPLE_MS (their peaks, as before), and one point per window (the window's max RSS, the
 * heap at its end). For the pool mode it also asks the workers for their heap once per window,
 * with at most one request outstanding (a request unanswered for WORKER_STATUS_TIMEOUT_MS stops
 * holding back the next), and keeps the latest answer of each window. Bounded: the points are
 * capped at MAX_MEMORY_POINTS, which memoryWindowMs keeps out of reach.
 */
class MemorySampler {
  readonly windowMs: number;
  peakRss = 0;
  peakHeap = 0;
  peakWorkerHeap: number | null = null;
  readonly points: MemoryPoint[] = [];
  readonly #workerHeapBytes: (() => Promise<number>) | null;
  readonly #started = performance.now();
  readonly #timer: NodeJS.Timeout;
  #windowStart = this.#started;
  #windowRss = 0;
  #heap = 0;
  #windowWorkerHeap: number | null = null;
  #statusSince: number | undefined;
  #floodEndMs: number | undefined;
  #stopped = false;

  constructor(windowMs: number, workerHeapBytes: (() => Promise<number>) | null) {
    this.windowMs = windowMs;
    this.#workerHeapBytes = workerHeapBytes;
    this.#sample();
    void this.#requestWorkerHeap();
    this.#timer = setInterval(() => this.#tick(), MEMORY_SAMPLE_MS);
  }

  /** ms since the start at which the flood ended (the last window of the flood ends there). */
  get floodEndMs(): number {
    return this.#floodEndMs ?? this.#elapsedMs();
  }

  /** Cuts the current window at the flood's end, so the flood's windows end within it. */
  markFloodEnd(): void {
    if (this.#stopped || this.#floodEndMs !== undefined) return;
    this.#sample();
    this.#closeWindow(true);
    this.#floodEndMs = this.points.at(-1)?.tMs ?? round(this.#elapsedMs(), 0);
  }

  /** Stops sampling after a last worker status (bounded) and a last sample. Idempotent. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    clearInterval(this.#timer);
    this.#statusSince = undefined;
    await this.#requestWorkerHeap();
    if (this.#stopped) return;
    this.#stopped = true;
    this.#sample();
    this.#closeWindow(true);
  }

  #tick(): void {
    this.#sample();
    if (performance.now() - this.#windowStart >= this.windowMs) {
      this.#closeWindow(false);
      void this.#requestWorkerHeap();
    }
  }

  #sample(): void {
    const usage = process.memoryUsage();
    this.peakRss = Math.max(this.peakRss, usage.rss);
    this.peakHeap = Math.max(this.peakHeap, usage.heapUsed);
    this.#windowRss = Math.max(this.#windowRss, usage.rss);
    this.#heap = usage.heapUsed;
  }

  /** Resolves once the workers answered, failed, or WORKER_STATUS_TIMEOUT_MS passed. */
  async #requestWorkerHeap(): Promise<void> {
    const query = this.#workerHeapBytes;
    const now = performance.now();
    if (query === null || this.#stopped) return;
    if (this.#statusSince !== undefined && now - this.#statusSince < WORKER_STATUS_TIMEOUT_MS) return;
    this.#statusSince = now;
    let timer: NodeJS.Timeout | undefined;
    const answered = query().then(
      (bytes) => {
        if (this.#statusSince === now) this.#statusSince = undefined;
        if (this.#stopped) return;
        this.#windowWorkerHeap = bytes;
        this.peakWorkerHeap = Math.max(this.peakWorkerHeap ?? 0, bytes);
      },
      () => {
        // A worker being replaced: the next window asks again.
        if (this.#statusSince === now) this.#statusSince = undefined;
      },
    );
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, WORKER_STATUS_TIMEOUT_MS);
    });
    await Promise.race([answered, timeout]).finally(() => clearTimeout(timer));
  }

  /** `final`: a sliver of a window (under half) joins the previous point rather than standing alone. */
  #closeWindow(final: boolean): void {
    const point: MemoryPoint = {
      tMs: round(this.#elapsedMs(), 0),
      rssMb: toMb(this.#windowRss),
      heapMb: toMb(this.#heap),
      workerHeapMb: this.#windowWorkerHeap === null ? null : toMb(this.#windowWorkerHeap),
    };
    this.#windowStart = performance.now();
    this.#windowRss = 0;
    this.#windowWorkerHeap = null;
    const last = this.points.at(-1);
    if (final && last !== undefined && point.tMs - last.tMs < this.windowMs / 2 && last.tMs !== this.#floodEndMs) {
      this.points[this.points.length - 1] = {
        tMs: point.tMs,
        rssMb: Math.max(last.rssMb, point.rssMb),
        heapMb: point.heapMb,
        workerHeapMb: point.workerHeapMb ?? last.workerHeapMb,
      };
    } else if (this.points.length < MAX_MEMORY_POINTS) {
      this.points.push(point);
    }
  }

  #elapsedMs(): number {
    return performance.now() - this.#started;
  }
}

/** 1 s; shorter for short floods (MIN_MEMORY_WINDOWS per flood); whole seconds, longer, for long ones. */
export function memoryWindowMs(durationSeconds: number): number {
  const short = Math.floor((durationSeconds * 1000) / MIN_MEMORY_WINDOWS / MEMORY_SAMPLE_MS) * MEMORY_SAMPLE_MS;
  const window = Math.max(MEMORY_SAMPLE_MS, Math.min(MEMORY_WINDOW_MS, short));
  // The series runs until the end of the freshness wait; keep well under the cap.
  const longestMs = durationSeconds * 1000 + FRESHNESS_TIMEOUT_MS;
  const budget = MAX_MEMORY_POINTS - 100;
  return longestMs / window <= budget ? window : Math.ceil(longestMs / budget / 1000) * 1000;
}

/**
 * The settling figures of a memory series (see RSS_SETTLED_RULE). Points ending after
 * `floodEndMs` (the freshness wait) are left out; each point counts in the half its window ends in.
 */
export function memorySettling(points: readonly MemoryPoint[], floodEndMs: number): MemorySettling {
  const flood = points.filter((p) => p.tMs <= floodEndMs);
  const first = flood.filter((p) => p.tMs <= floodEndMs / 2);
  const second = flood.filter((p) => p.tMs > floodEndMs / 2);
  const peak = (of: readonly MemoryPoint[], value: (p: MemoryPoint) => number | null): number | null => {
    const values = of.map(value).filter((v): v is number => v !== null);
    return values.length === 0 ? null : Math.max(...values);
  };
  const rssFirst = peak(first, (p) => p.rssMb) ?? 0;
  const rssSecond = peak(second, (p) => p.rssMb) ?? rssFirst;
  const rssPeak = Math.max(rssFirst, rssSecond);
  const growthPct = rssFirst > 0 ? (rssSecond / rssFirst - 1) * 100 : 0;
  const { slope: slopeMbPerMin, stdErr: slopeStdErr } = leastSquaresSlope(second.map((p) => [p.tMs / 60_000, p.rssMb] as const));
  const slopePctPerMin = rssPeak > 0 ? (slopeMbPerMin / rssPeak) * 100 : 0;
  return {
    rssFirstHalfPeakMb: round(rssFirst, 1),
    rssSecondHalfPeakMb: round(rssSecond, 1),
    rssGrowthPct: round(growthPct, 2),
    rssSlopeMbPerMin: round(slopeMbPerMin, 2),
    rssSlopePctPerMin: round(slopePctPerMin, 2),
    rssSlopeStdErrMbPerMin: round(slopeStdErr, 2),
    rssSettled: growthPct <= RSS_SETTLED_MAX_GROWTH_PCT && slopePctPerMin <= RSS_SETTLED_MAX_SLOPE_PCT_PER_MIN,
    heapFirstHalfPeakMb: round(peak(first, (p) => p.heapMb) ?? 0, 1),
    heapSecondHalfPeakMb: round(peak(second, (p) => p.heapMb) ?? 0, 1),
    workerHeapFirstHalfPeakMb: peak(first, (p) => p.workerHeapMb),
    workerHeapSecondHalfPeakMb: peak(second, (p) => p.workerHeapMb),
  };
}

/**
 * Slope of the least-squares line through [x, y] points, with its standard error (0 and 0 with
 * fewer than two distinct x; the error needs at least three points).
 */
function leastSquaresSlope(points: readonly (readonly [number, number])[]): { slope: number; stdErr: number } {
  if (points.length < 2) return { slope: 0, stdErr: 0 };
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - meanX) * (y - meanY);
    sxx += (x - meanX) ** 2;
  }
  if (sxx === 0) return { slope: 0, stdErr: 0 };
  const slope = sxy / sxx;
  if (points.length < 3) return { slope, stdErr: 0 };
  let residuals = 0;
  for (const [x, y] of points) residuals += (y - (meanY + slope * (x - meanX))) ** 2;
  return { slope, stdErr: Math.sqrt(residuals / (points.length - 2) / sxx) };
}

// ---------------------------------------------------------------------------------------------
// Reports.

interface Row {
  readonly label: string;
  readonly value: (r: ModeReport) => number;
  readonly digits: number;
  /** Shown instead of the number, e.g. for a timed-out wait. */
  readonly note?: (r: ModeReport) => string | undefined;
  /** No pool/inline ratio (a verdict, or a figure that may be negative). */
  readonly noRatio?: boolean;
}

const ROWS: readonly Row[] = [
  { label: 'changes applied', value: (r) => r.changes, digits: 0 },
  { label: 'main event-loop delay p50 (ms)', value: (r) => r.eldP50Ms, digits: 2 },
  { label: 'main event-loop delay p99 (ms)', value: (r) => r.eldP99Ms, digits: 2 },
  { label: 'main event-loop delay max (ms)', value: (r) => r.eldMaxMs, digits: 1 },
  { label: 'main event-loop utilisation', value: (r) => r.elu, digits: 3 },
  { label: '/healthz latency p50 (ms)', value: (r) => r.probeP50Ms, digits: 2 },
  { label: '/healthz latency p99 (ms)', value: (r) => r.probeP99Ms, digits: 2 },
  { label: 'triggers published', value: (r) => r.triggers, digits: 0 },
  { label: 'renders executed', value: (r) => r.renders, digits: 0 },
  { label: 'triggers coalesced', value: (r) => r.coalesced, digits: 0 },
  { label: 'critical bus drops', value: (r) => r.criticalDrops, digits: 0 },
  { label: 'renders in flight, max', value: (r) => r.maxRendersInFlight, digits: 0 },
  { label: 'triggers queued behind a render, max', value: (r) => r.maxQueuedTriggers, digits: 0 },
  { label: 'render p50 (ms)', value: (r) => r.renderP50Ms, digits: 1 },
  { label: 'render p99 (ms)', value: (r) => r.renderP99Ms, digits: 1 },
  {
    label: 'freshness after the last change (ms)',
    value: (r) => r.freshnessMs,
    digits: 0,
    note: (r) => (r.fresh ? undefined : `> ${r.freshnessMs.toFixed(0)} (timed out)`),
  },
  { label: 'peak RSS (MB)', value: (r) => r.peakRssMb, digits: 0 },
  { label: 'peak main heap (MB)', value: (r) => r.peakHeapMb, digits: 0 },
  {
    label: "peak workers' heap, all workers (MB)",
    value: (r) => r.peakWorkerHeapMb ?? 0,
    digits: 0,
    note: (r) => (r.peakWorkerHeapMb === null ? '–' : undefined),
  },
  { label: 'RSS peak, first half of the flood (MB)', value: (r) => r.rssFirstHalfPeakMb, digits: 0 },
  { label: 'RSS peak, second half of the flood (MB)', value: (r) => r.rssSecondHalfPeakMb, digits: 0 },
  { label: 'RSS growth, second half over first (%)', value: (r) => r.rssGrowthPct, digits: 1, noRatio: true },
  {
    label: 'RSS slope over the second half (MB/min)',
    value: (r) => r.rssSlopeMbPerMin,
    digits: 1,
    note: (r) => `${r.rssSlopeMbPerMin.toFixed(1)} ± ${r.rssSlopeStdErrMbPerMin.toFixed(1)} (${r.rssSlopePctPerMin.toFixed(1)} % of peak)`,
    noRatio: true,
  },
  { label: 'RSS settled', value: (r) => (r.rssSettled ? 1 : 0), digits: 0, note: (r) => (r.rssSettled ? 'yes' : '**no**'), noRatio: true },
  {
    label: 'main heap, first / second half peak (MB)',
    value: (r) => r.heapSecondHalfPeakMb,
    digits: 0,
    note: (r) => `${r.heapFirstHalfPeakMb.toFixed(0)} / ${r.heapSecondHalfPeakMb.toFixed(0)}`,
    noRatio: true,
  },
  {
    label: "workers' heap, first / second half peak (MB)",
    value: (r) => r.workerHeapSecondHalfPeakMb ?? 0,
    digits: 0,
    note: (r) => `${r.workerHeapFirstHalfPeakMb?.toFixed(0) ?? '–'} / ${r.workerHeapSecondHalfPeakMb?.toFixed(0) ?? '–'}`,
    noRatio: true,
  },
];

export function markdownSummary(report: LoadtestReport): string {
  const o = report.options;
  const modes = (['inline', 'pool'] as const).filter((m) => report[m] !== undefined);
  const both = report.inline !== undefined && report.pool !== undefined;
  const threads = report.pool?.threads;
  const lines = [
    '## haptic-reconciler loadtest',
    '',
    `${o.ingresses} Ingresses, ${o.rate} changes/s for ${o.duration} s, seed ${o.seed}` +
      `${threads === undefined || threads === null ? '' : `, pool of ${threads} worker thread${threads === 1 ? '' : 's'}`}; ` +
      `Node ${report.environment.node}, ${report.environment.cpus} CPUs. Each mode ran in a fresh child process.`,
    '',
    `| metric | ${modes.join(' | ')}${both ? ' | pool/inline |' : ' |'}`,
    `|---|${modes.map(() => '---:').join('|')}|${both ? '---:|' : ''}`,
  ];
  for (const row of ROWS) {
    const cells = modes.map((m) => {
      const r = report[m] as ModeReport;
      return row.note?.(r) ?? row.value(r).toFixed(row.digits);
    });
    if (both) cells.push(row.noRatio === true ? '–' : ratio(row.value(report.pool as ModeReport), row.value(report.inline as ModeReport)));
    lines.push(`| ${row.label} | ${cells.join(' | ')} |`);
  }
  const targets = report.targets ?? evaluateTargets(report);
  if (targets.length > 0) {
    lines.push('', '| target | limit | measured | met |', '|---|---|---|---|');
    for (const t of targets) lines.push(`| ${t.target} | ${t.limit} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`);
  }
  const windows = [...new Set(modes.map((m) => (report[m] as ModeReport).memoryWindowMs))].join(' / ');
  lines.push(
    '',
    `Memory is sampled every ${MEMORY_SAMPLE_MS} ms and kept per ${windows} ms window (max RSS, heap at the window's end). ` +
      report.rssSettledRule,
  );
  return `${lines.join('\n')}\n`;
}

export interface TargetCheck {
  readonly target: string;
  readonly limit: string;
  readonly measured: string;
  readonly met: boolean;
}

/**
 * The performance targets a load test run can judge: event-loop delay of the pool against
 * inline (needs both modes), no critical drops, at most one render in flight plus one trigger
 * queued, freshness of the pool within twice its render p50 plus 50 ms, and RSS settling.
 */
export function evaluateTargets(report: Pick<LoadtestReport, 'inline' | 'pool'>): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const { inline, pool } = report;
  if (inline !== undefined && pool !== undefined) {
    const r = inline.eldP99Ms > 0 ? pool.eldP99Ms / inline.eldP99Ms : Number.POSITIVE_INFINITY;
    checks.push({
      target: 'main event-loop delay p99, pool / inline',
      limit: '≤ 0.1',
      measured: `${pool.eldP99Ms.toFixed(2)} / ${inline.eldP99Ms.toFixed(2)} ms = ${r.toPrecision(2)}`,
      met: r <= 0.1,
    });
  }
  for (const [mode, m] of [['inline', inline], ['pool', pool]] as const) {
    if (m === undefined) continue;
    checks.push({ target: `critical bus drops (${mode})`, limit: '0', measured: String(m.criticalDrops), met: m.criticalDrops === 0 });
    checks.push({
      target: `renders in flight / triggers queued (${mode})`,
      limit: '≤ 1 / ≤ 1',
      measured: `${m.maxRendersInFlight} / ${m.maxQueuedTriggers}`,
      met: m.maxRendersInFlight <= 1 && m.maxQueuedTriggers <= 1,
    });
  }
  if (pool !== undefined) {
    const limit = 2 * pool.renderP50Ms + 50;
    checks.push({
      target: 'freshness (pool)',
      limit: `≤ 2 × render p50 + 50 ms = ${limit.toFixed(0)} ms`,
      measured: `${pool.freshnessMs.toFixed(0)} ms${pool.fresh ? '' : ' (timed out)'}`,
      met: pool.fresh && pool.freshnessMs <= limit,
    });
    checks.push({
      target: 'RSS settles during the flood (pool)',
      limit: 'growth ≤ 5 %, slope ≤ 5 %/min',
      measured: `${pool.rssGrowthPct.toFixed(1)} %, ${pool.rssSlopePctPerMin.toFixed(1)} %/min`,
      met: pool.rssSettled,
    });
  }
  return checks;
}

function ratio(pool: number, inline: number): string {
  if (inline === 0) return '–';
  const r = pool / inline;
  return r >= 100 ? r.toFixed(0) : r >= 0.1 ? r.toFixed(2) : r.toPrecision(2);
}

export function eventLoopDelayChart(report: LoadtestReport): string {
  const colors: Record<LoadtestMode, string> = { inline: '#d62728', pool: '#1f77b4' };
  const series = (['inline', 'pool'] as const).flatMap((mode) => {
    const r = report[mode];
    if (r === undefined) return [];
    return [{ name: `${mode} (max ${r.eldMaxMs.toFixed(0)} ms)`, color: colors[mode], points: r.series.map((p) => [p.tMs / 1000, p.eldMaxMs] as const) }];
  });
  const windowMs = report.inline?.seriesWindowMs ?? report.pool?.seriesWindowMs ?? SERIES_WINDOW_MS;
  const o = report.options;
  return lineChartSvg({
    title: `Main event-loop delay: ${o.ingresses} Ingresses, ${o.rate} changes/s`,
    xLabel: 'time since the flood started (s)',
    yLabel: `event-loop delay, max per ${windowMs} ms (ms, log scale)`,
    series,
    logY: { floor: 0.1 },
  });
}

/** RSS (solid), main heap (dashed) and, for the pool, the workers' heap (dotted) over time, both modes on one plot. */
export function memoryChart(report: LoadtestReport): string {
  const colors: Record<LoadtestMode, { rss: string; heap: string; workers: string }> = {
    inline: { rss: '#d62728', heap: '#d62728', workers: '#ff9896' },
    pool: { rss: '#1f77b4', heap: '#1f77b4', workers: '#2ca02c' },
  };
  const series: ChartSeries[] = [];
  const floodEnds: number[] = [];
  for (const mode of ['inline', 'pool'] as const) {
    const r = report[mode];
    if (r === undefined) continue;
    const at = (p: MemoryPoint): number => p.tMs / 1000;
    floodEnds.push(r.floodMs / 1000);
    series.push({
      name: `${mode} RSS (${r.rssSettled ? 'settled' : 'not settled'})`,
      color: colors[mode].rss,
      points: r.memorySeries.map((p) => [at(p), p.rssMb] as const),
    });
    series.push({ name: `${mode} main heap`, color: colors[mode].heap, dash: '6 3', points: r.memorySeries.map((p) => [at(p), p.heapMb] as const) });
    const workers = r.memorySeries.flatMap((p) => (p.workerHeapMb === null ? [] : [[at(p), p.workerHeapMb] as const]));
    if (workers.length > 0) series.push({ name: `${mode} workers' heap`, color: colors[mode].workers, dash: '2 3', points: workers });
  }
  const windowMs = report.inline?.memoryWindowMs ?? report.pool?.memoryWindowMs ?? MEMORY_WINDOW_MS;
  const o = report.options;
  return lineChartSvg({
    title: `Memory during the flood: ${o.ingresses} Ingresses, ${o.rate} changes/s`,
    xLabel: 'time since the flood started (s)',
    yLabel: `MB (RSS: max per ${windowMs} ms; heaps: at its end)`,
    series,
    markers: floodEnds.length === 0 ? [] : [{ x: Math.max(...floodEnds), label: 'flood end' }],
  });
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

function toMb(bytes: number): number {
  return round(bytes / 2 ** 20, 1);
}

function netDelayMs(nanoseconds: number): number {
  return Math.max(0, nanoseconds / 1e6 - ELD_RESOLUTION_MS);
}

/** A percentile of a histogram recorded in microseconds, in ms; 0 when empty. */
function percentileMs(histogram: RecordableHistogram, q: number): number {
  return histogram.count === 0 ? 0 : histogram.percentile(q) / 1000;
}

function toMicros(ms: number): number {
  return Math.max(1, Math.round(ms * 1000));
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: Error): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A rejection nobody awaits (a failure after the initial render) is not an error here.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

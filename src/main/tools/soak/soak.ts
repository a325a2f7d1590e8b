// `haptic-reconciler soak`: the synthetic flood for minutes or hours with a fault every interval,
// through the real engine (bus, Reconciler, Coordinator, a pool of fault-capable workers, and an
// OutputWriter to a scratch directory). Faults rotate through a worker crash, hang and
// out-of-memory, leadership lost and won back, and the output directory unwritable and back; one
// at a time, the next waiting until the previous has recovered (fault-log.ts says what counts) or
// has been given up as failed, with its reason, for missing its bound (fault-injector.ts).
// Memory and event-loop delay are sampled throughout; the report goes to soak.json and soak.svg,
// a summary to stdout, and the exit code is 0 when every fault recovered and memory is bounded.
// With `--haproxy` (haproxy-soak.ts), the renders are deployed to a real HAProxy serving traffic to
// local echo backends; HAProxy's own faults join the rotation, a fault recovers once HAProxy serves
// the store version, and the report (soak-haproxy.json and .svg) adds HAProxy's processes and the
// traffic; it passes only when no request failed outside a HAProxy fault.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withTimeout } from '../../core/async.js';
import { every, sleep, systemClock, type Clock } from '../../core/clock.js';
import { silentLogger } from '../../core/logger.js';
import { Engine } from '../../engine.js';
import { ObjectExclusions } from '../../gate/object-exclusions.js';
import { OutputWriter } from '../../output/output-writer.js';
import { PoolPipeline } from '../../pipeline/pool/pool-pipeline.js';
import { ChangeBatcher } from '../../sources/change-batcher.js';
import { SyntheticChurn } from '../../sources/synthetic/synthetic-churn.js';
import { SYNTHETIC_CLUSTER_VALUES, SyntheticCluster } from '../../sources/synthetic/synthetic-cluster.js';
import { loadOutputTemplateSet } from '../../template-set/output-template-set.js';
import { loadTemplateSet } from '../../template-set/template-set.js';
import { round, toMb } from '../loadtest/units.js';
import { FaultInjector } from './fault-injector.js';
import { FaultLog, type Success } from './fault-log.js';
import { HaproxySoak, prepareHaproxySoak, RESTART_TIMEOUT_MS, TRAFFIC_HOSTS, type PreparedHaproxySoak } from './haproxy-soak.js';
import { ObservedOutputDirectory } from './observed-output.js';
import { soakChart } from './soak-chart.js';
import { SoakObserver } from './soak-observer.js';
import { HAPROXY_FAULTS, validateSoakOptions, type FaultKind, type SoakOptions } from './soak-options.js';
import { soakReport, textSummary, type SoakMeasurement, type SoakReport } from './soak-report.js';
import { samplePeriodMs, SoakSampler } from './soak-sampler.js';
import { SwitchableElector } from './switchable-elector.js';
import { WorkerFaultSwitch } from './worker-faults.js';

export interface SoakEnvironment {
  /** @default systemClock */
  readonly clock?: Clock;
  /** Ends the flood early (Ctrl-C); the report still covers what ran. */
  readonly signal?: AbortSignal;
  /** Progress lines. @default stderr */
  readonly progress?: (line: string) => void;
}

const INITIAL_RENDER_TIMEOUT_MS = 120_000;
/** After the flood's duration, how long a recovery still open may take, beyond one render timeout. */
const DRAIN_MS = 30_000;
/** A leadership or output fault lasts this long, or a quarter of the interval when that is shorter. */
const HOLD_MS = 2000;
const STATUS_EVERY_MS = 15_000;
/** The OutputWriter's first retry after a failed write: short, so recovery is seen promptly. */
const WRITE_RETRY_MS = 100;

/** Runs the soak, writes soak.json and soak.svg into `outDir`, prints the summary; returns the exit code. */
export async function runSoak(options: SoakOptions, environment: SoakEnvironment = {}): Promise<number> {
  validateSoakOptions(options);
  const report = await soakOnce(options, environment);
  await mkdir(options.outDir, { recursive: true });
  const name = options.haproxy === undefined ? 'soak' : 'soak-haproxy';
  const json = join(options.outDir, `${name}.json`);
  const svg = join(options.outDir, `${name}.svg`);
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(svg, soakChart(report));
  process.stdout.write(textSummary(report));
  process.stdout.write(`report: ${json}\nchart: ${svg}\n`);
  return report.verdict.pass ? 0 : 1;
}

/** Sets up the engine on a fault-capable pool, floods it with faults, and tears it all down. */
async function soakOnce(options: SoakOptions, environment: SoakEnvironment = {}): Promise<SoakReport> {
  const clock = environment.clock ?? systemClock;
  const progress = environment.progress ?? ((line: string) => void process.stderr.write(`soak ${line}\n`));
  const logger = silentLogger();
  const workers = new WorkerFaultSwitch();
  const scratch = await mkdtemp(join(tmpdir(), 'haptic-soak-'));
  const outputRoot = join(scratch, 'out');
  let pool: PoolPipeline | undefined;
  let prepared: PreparedHaproxySoak | undefined;
  try {
    if (options.haproxy !== undefined) prepared = await prepareHaproxySoak(outputRoot);
    // With HAProxy, the set `run --haproxy` renders: the output directory's paths and certificate.
    const set =
      prepared === undefined ? await loadTemplateSet(undefined, SYNTHETIC_CLUSTER_VALUES) : await loadOutputTemplateSet(outputRoot, undefined, {}, { ...SYNTHETIC_CLUSTER_VALUES, ...prepared.values });
    pool = await PoolPipeline.create({
      templateSet: set,
      logger,
      clock,
      worker: workers.worker,
      renderTimeoutMs: options.renderTimeoutMs,
      resourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb },
      ...(options.threads === undefined ? {} : { threads: options.threads }),
    });
    const elector = new SwitchableElector();
    const exclusions = new ObjectExclusions();
    const engine = await Engine.create({ templateSet: set, pipeline: pool, elector, clock, logger, exclusions });
    return await flood({ options, clock, progress, signal: environment.signal, engine, pool, workers, elector, outputRoot, haproxy: prepared === undefined ? undefined : { prepared, exclusions } });
  } finally {
    await pool?.destroy();
    await prepared?.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

interface FloodRig {
  readonly options: SoakOptions;
  readonly clock: Clock;
  readonly progress: (line: string) => void;
  readonly signal: AbortSignal | undefined;
  /** Runs `pool` under `elector`; its stores are empty. */
  readonly engine: Engine;
  readonly pool: PoolPipeline;
  readonly workers: WorkerFaultSwitch;
  readonly elector: SwitchableElector;
  readonly outputRoot: string;
  /** With `--haproxy`: the ports and echo backends, and the render gate's exclusions the engine reads. */
  readonly haproxy: { readonly prepared: PreparedHaproxySoak; readonly exclusions: ObjectExclusions } | undefined;
}

/** Starts the engine, waits for the first render, then floods with faults for the duration. */
async function flood(rig: FloodRig): Promise<SoakReport> {
  const { options, clock, progress, engine, pool } = rig;
  const { bus, stores } = engine;
  const faults = new FaultLog({ serving: rig.haproxy !== undefined });
  let startedMs = clock.monotonic();
  const elapsedMs = (): number => Math.round(clock.monotonic() - startedMs);
  const at = (): string => `t=${(elapsedMs() / 1000).toFixed(1)}s`;
  const succeeded = (success: Success, version: number): void => {
    const open = faults.open;
    faults.succeeded(success, elapsedMs(), version);
    if (open !== undefined && faults.open === undefined) {
      progress(`${at()} ${open.kind} recovered: a ${success} of store version ${version}, ${((elapsedMs() - open.injectedMs) / 1000).toFixed(1)} s after injection`);
    }
  };
  const cluster = new SyntheticCluster({
    ingresses: options.ingresses,
    seed: options.seed,
    ...(rig.haproxy === undefined
      ? {}
      : { podAddress: rig.haproxy.prepared.podAddress, podPort: rig.haproxy.prepared.podPort, annotations: rig.haproxy.prepared.annotations, stable: TRAFFIC_HOSTS }),
  });
  const sink = new ChangeBatcher(bus, clock);
  const served =
    rig.haproxy === undefined || options.haproxy === undefined
      ? undefined
      : new HaproxySoak(
          {
            engine,
            exclusions: rig.haproxy.exclusions,
            out: rig.outputRoot,
            prepared: rig.haproxy.prepared,
            options: options.haproxy,
            cluster,
            sink,
            clock,
            logger: silentLogger(),
            faultOpen: () => faults.open !== undefined && HAPROXY_FAULTS.includes(faults.open.kind),
            note: (line) => progress(`${at()} ${line}`),
          },
          samplePeriodMs(options.durationSeconds),
        );
  const injector = new FaultInjector({
    log: faults,
    workers: rig.workers,
    elector: rig.elector,
    outputRoot: rig.outputRoot,
    stores,
    clock,
    holdMs: Math.min(HOLD_MS, (options.faultIntervalSeconds * 1000) / 4),
    elapsedMs,
    renderTimeoutMs: options.renderTimeoutMs,
    ...(served === undefined ? {} : { haproxy: { kill: (which: 'worker' | 'master') => served.kill(which), boundMs: RESTART_TIMEOUT_MS } }),
    onFailed: (record) => progress(`${at()} ${record.kind} failed: ${record.failure ?? 'no reason given'}; the rotation goes on`),
  });
  const observer = new SoakObserver(bus, {
    rendered: (version) => succeeded('render', version),
    failed: () => injector.renderFailed(),
    deployed: (version) => succeeded('deploy', version),
  });
  // Without HAProxy, the renders are written to a scratch output directory.
  const directory =
    served === undefined
      ? new ObservedOutputDirectory(rig.outputRoot, (config) => {
          const version = observer.versionOf(config);
          if (version !== undefined) succeeded('write', version);
        })
      : undefined;
  const writer = directory === undefined ? undefined : new OutputWriter({ bus, directory, clock, logger: silentLogger(), retryMs: WRITE_RETRY_MS });
  if (writer !== undefined) engine.addLeaderComponent(writer);
  cluster.populate(stores);

  const controller = new AbortController();
  const engineRunning = engine.start(controller.signal);
  const running = [engineRunning, observer.run()];
  let sampler: SoakSampler | undefined;
  let churn: SyntheticChurn | undefined;
  const stopTimers: (() => void)[] = [];
  try {
    await Promise.race([engine.whenStarted(), engineRunning]);
    await withTimeout(observer.firstRender, INITIAL_RENDER_TIMEOUT_MS, 'the initial render', clock);
    const initialRenderMs = elapsedMs();
    progress(`${cluster.size} Ingresses (store version ${stores.version}); initial render ${initialRenderMs.toFixed(0)} ms`);
    if (served !== undefined) {
      await withTimeout(observer.firstDeploy, INITIAL_RENDER_TIMEOUT_MS, 'HAProxy serving the first render', clock).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}${observer.lastDeployFailure === '' ? '' : ` (last deployment failure: ${observer.lastDeployFailure})`}`, { cause: error });
      });
      progress(`HAProxy serves the first render after ${elapsedMs().toFixed(0)} ms; traffic at ${options.haproxy?.trafficRate ?? 0} requests/s`);
    }
    progress(`flooding for ${options.durationSeconds} s`);

    // The soak's time starts here, after the initial render.
    startedMs = clock.monotonic();
    const startedAt = new Date(clock.now()).toISOString();
    const durationMs = options.durationSeconds * 1000;
    sampler = new SoakSampler({
      clock,
      durationSeconds: options.durationSeconds,
      counters: () => ({ renders: observer.renders, failures: observer.failures, criticalDrops: bus.droppedCritical, lossyDrops: bus.droppedLossy }),
      workerHeapBytes: async () => (await pool.workerStatus()).reduce((sum, w) => sum + w.heapUsedBytes, 0),
      ...(served === undefined ? {} : { haproxy: { processes: () => served.processes.latest, takeTraffic: () => served.traffic.takePeriod() } }),
    });
    const flooding = new SyntheticChurn({ cluster, stores, sink, rate: options.rate, clock });
    churn = flooding;
    void flooding.start();
    served?.start();

    // Faults on a fixed beat; none in the last interval, so the last one has time to act and recover.
    let nextFault = 0;
    let postponed = 0;
    let beat = 0;
    const intervalMs = options.faultIntervalSeconds * 1000;
    if (options.faults.length > 0) {
      stopTimers.push(
        every(clock, intervalMs, () => {
          // By beat number, not elapsed time, so that timer drift never drops the last beat.
          beat++;
          if (beat * intervalMs > durationMs - intervalMs) return;
          const open = faults.open;
          if (open !== undefined) {
            postponed++;
            progress(`${at()} ${open.kind} has not recovered yet; the next fault waits an interval`);
            return;
          }
          const kind = options.faults[nextFault++ % options.faults.length] as FaultKind;
          progress(`${at()} injecting ${kind}`);
          // Never rejects: a fault that fails is reported through onFailed.
          void injector.inject(kind);
        }),
      );
    }
    stopTimers.push(
      every(clock, STATUS_EVERY_MS, () => {
        const last = sampler?.samples.at(-1);
        progress(
          `${at()} changes=${flooding.applied} renders=${observer.renders} failures=${observer.failures} ` +
            `faults=${faults.records.length} recovered=${faults.records.filter((f) => f.recoveredMs !== null).length}` +
            (last === undefined ? '' : ` rss=${last.rssMb.toFixed(0)}MB heap=${last.heapUsedMb.toFixed(0)}MB eld-p99=${last.eldP99Ms.toFixed(1)}ms`) +
            (served === undefined ? '' : ` ${haproxyStatus(served, observer)}`),
        );
      }),
    );

    await sleep(clock, durationMs, rig.signal).catch(() => progress(`${at()} interrupted; reporting what ran`));
    for (const stop of stopTimers.splice(0)) stop();
    await injector.restore();
    // The churn goes on until the last fault has recovered: the engine renders again only when
    // something changes (a failed render is not retried), so in a quiet cluster a fault that hit
    // the render of the final store version would leave the output stale until the next change.
    const drained = await withTimeout(faults.settled(), options.renderTimeoutMs + DRAIN_MS, 'the last recovery', clock).then(
      () => true,
      () => false,
    );
    if (!drained) {
      progress(`${at()} ${faults.open?.kind ?? 'a fault'} did not recover`);
      faults.failed(elapsedMs(), `still open ${((options.renderTimeoutMs + DRAIN_MS) / 1000).toFixed(0)} s after the flood's end`);
    }
    flooding.stop();
    const floodMs = elapsedMs();
    await served?.stop();
    await sampler.stop();
    if (observer.lastDeployFailure !== '') progress(`last deployment failure: ${observer.lastDeployFailure}`);
    if (observer.lastFailure !== '') progress(`last render failure: ${observer.lastFailure}`);

    const measurement: SoakMeasurement = {
      options,
      threads: pool.threads,
      startedAt,
      initialRenderMs: round(initialRenderMs, 1),
      floodMs: round(floodMs, 0),
      samplePeriodMs: sampler.periodMs,
      samples: sampler.samples,
      eventLoopDelay: sampler.eventLoopDelay,
      // The 100 ms sampler may miss a spike that a period's sample caught.
      peakRssMb: Math.max(toMb(sampler.memory.peakRss), ...sampler.samples.map((s) => s.rssMb)),
      peakHeapUsedMb: Math.max(toMb(sampler.memory.peakHeap), ...sampler.samples.map((s) => s.heapUsedMb)),
      peakWorkerHeapMb: sampler.memory.peakWorkerHeap === null ? null : toMb(sampler.memory.peakWorkerHeap),
      totals: {
        changes: flooding.applied,
        renders: observer.renders,
        failures: observer.failures,
        writes: writer?.stats.writes ?? 0,
        writeFailures: writer?.stats.failures ?? 0,
        criticalDrops: bus.droppedCritical,
        lossyDrops: bus.droppedLossy,
        workersReplaced: pool.stats.workersReplaced,
        faultsPostponed: postponed,
      },
      faults: faults.records,
      ...(served === undefined ? {} : { haproxy: served.measurement(observer.deployments) }),
    };
    return soakReport(measurement);
  } finally {
    for (const stop of stopTimers) stop();
    churn?.stop();
    await sampler?.stop();
    await injector.restore().catch(() => undefined);
    injector.close();
    await served?.stop();
    controller.abort();
    observer.close();
    await Promise.all(running);
    await directory?.idle();
    await served?.close();
  }
}

/** The status line's HAProxy part: deployments, processes and traffic so far. */
function haproxyStatus(served: HaproxySoak, observer: SoakObserver): string {
  const d = observer.deployments;
  const p = served.processes.latest;
  const t = served.traffic.totals;
  return (
    `reloads=${d.reloads} runtime=${d.runtime} deploy-failures=${d.failed} haproxy-workers=${p?.workers ?? '?'} haproxy-rss=${p === null ? '?' : p.rssMb.toFixed(0)}MB ` +
    `requests=${t.ok}/${t.sent} errors=${t.errors} refused=${t.refused} fault-failures=${t.faultErrors + t.faultRefused}`
  );
}

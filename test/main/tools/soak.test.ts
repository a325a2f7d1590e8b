// The soak: a short real run through the CLI (faults injected every 1.5 s into a small flood),
// checking the report is complete and every fault recovered; then the recovery rule, the fault
// injector (on a fake clock) and the memory growth verdict on made-up inputs.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { FaultInjector } from '../../../src/main/tools/soak/fault-injector.js';
import { FaultLog } from '../../../src/main/tools/soak/fault-log.js';
import { seriesGrowth, warmupMs } from '../../../src/main/tools/soak/growth.js';
import { soakReport, textSummary, type SoakReport } from '../../../src/main/tools/soak/soak-report.js';
import { MAX_SAMPLES, samplePeriodMs } from '../../../src/main/tools/soak/soak-sampler.js';
import { SwitchableElector } from '../../../src/main/tools/soak/switchable-elector.js';
import { takeWorkerFault, WorkerFaultSwitch, type WorkerFaultData } from '../../../src/main/tools/soak/worker-faults.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = join(ROOT, 'src', 'main', 'cli', 'cli.ts');
const ROTATION = ['crash', 'leadership', 'output', 'oom', 'hang'] as const;

describe('soak (smoke)', () => {
  let dir: string;
  let stdout: string;
  let stderr = '';
  let exitCode: number;
  let report: SoakReport;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'haptic-soak-test-'));
    const args = ['--import', 'tsx', CLI, 'soak', '--seconds', '12', '--ingresses', '150', '--rate', '300'];
    // The quick faults early, so that a loaded machine, where a worker takes seconds to come
    // back, still sees three; an idle one sees all five. The render timeout (how long a hang
    // lasts) leaves a cold render on a loaded machine room to finish.
    const faults = ['--faults', ROTATION.join(','), '--fault-interval', '1.5', '--render-timeout', '3000', '--worker-heap-mb', '96', '--out-dir', dir];
    try {
      ({ stdout, stderr } = await run(process.execPath, [...args, ...faults], { cwd: ROOT, timeout: 90_000, maxBuffer: 16 * 2 ** 20 }));
      exitCode = 0;
    } catch (error) {
      // Exit code 1 is a verdict, asserted below; anything else fails here.
      const failed = error as { code?: unknown; stdout?: string; stderr?: string };
      if (failed.code !== 1) throw new Error(`the soak did not finish: ${String(failed.code)}\n${failed.stderr ?? ''}`, { cause: error });
      stdout = failed.stdout ?? '';
      stderr = failed.stderr ?? '';
      exitCode = 1;
    }
    const json = await readFile(join(dir, 'soak.json'), 'utf8').catch((error: unknown) => {
      throw new Error(`the soak wrote no report:\n${stderr}`, { cause: error });
    });
    report = JSON.parse(json) as SoakReport;
  }, 120_000);

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('injects faults in rotation, one at a time, and each one recovers', () => {
    // The soak's progress lines say when each fault was injected and recovered.
    const progress = `\n${stderr}`;
    expect(report.faults.length, progress).toBeGreaterThanOrEqual(3);
    expect(report.faults.map((f) => f.kind)).toEqual(ROTATION.slice(0, report.faults.length));
    let previousRecovery = 0;
    for (const f of report.faults) {
      expect(f.injectedMs, `${f.kind} injected after the previous fault recovered`).toBeGreaterThanOrEqual(previousRecovery);
      expect(f.clearedMs, `${f.kind} cleared${progress}`).not.toBeNull();
      expect(f.recoveredMs, `${f.kind} recovered${progress}`).not.toBeNull();
      expect(f.clearedMs as number).toBeGreaterThanOrEqual(f.injectedMs);
      expect(f.recoveredMs as number).toBeGreaterThanOrEqual(f.clearedMs as number);
      expect(f.recoveredVersion as number).toBeGreaterThanOrEqual(f.clearedVersion as number);
      previousRecovery = f.recoveredMs as number;
    }
    expect(report.faultSummary.recovered).toBe(report.faults.length);
    expect(report.verdict.allFaultsRecovered).toBe(true);
    // The crash, first in the rotation, cost a worker and a render.
    expect(report.totals.workersReplaced).toBeGreaterThanOrEqual(1);
    expect(report.totals.failures).toBeGreaterThanOrEqual(1);
  });

  it('samples memory, event-loop delay and renders every second of the flood', () => {
    const samples = report.samples;
    expect(report.samplePeriodMs).toBe(1000);
    expect(samples.length).toBeGreaterThanOrEqual(10);
    let previous = 0;
    for (const s of samples) {
      expect(s.tMs).toBeGreaterThan(previous);
      previous = s.tMs;
      for (const key of ['rssMb', 'heapUsedMb', 'heapTotalMb', 'externalMb'] as const) expect(s[key], key).toBeGreaterThan(0);
      expect(s.arrayBuffersMb).toBeGreaterThanOrEqual(0);
      for (const key of ['eldP50Ms', 'eldP99Ms', 'eldMaxMs', 'rendersPerSecond', 'gcMs'] as const) expect(Number.isFinite(s[key]), key).toBe(true);
      expect(s.liveHeapMb === null || (s.liveHeapMb > 0 && s.liveHeapMb <= s.heapTotalMb)).toBe(true);
      expect(s.workerHeapMb === null || s.workerHeapMb > 0).toBe(true);
    }
    expect(samples.some((s) => s.workerHeapMb !== null)).toBe(true);
    expect(report.totals.renders).toBeGreaterThan(0);
    expect((samples.at(-1)?.renders ?? 0) > 0).toBe(true);
    expect(report.totals.criticalDrops).toBe(0);
    expect(report.memory.peakRssMb).toBeGreaterThanOrEqual(Math.max(...samples.map((s) => s.rssMb)) - 1);
  });

  it('writes the SVG chart with memory, event-loop delay and a marker per fault, and prints the summary', async () => {
    expect((await stat(join(dir, 'soak.json'))).size).toBeGreaterThan(0);
    const svg = await readFile(join(dir, 'soak.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('Memory during the soak');
    expect(svg).toContain('Main event-loop delay during the soak');
    // RSS, heap used and total, external, workers' heap, and the live heap if a full GC ran; p50, p99, max.
    const lines = report.samples.some((s) => s.liveHeapMb !== null) ? 9 : 8;
    expect(svg.match(/<polyline /g)).toHaveLength(lines);
    // One dashed marker line per fault in each of the two charts.
    expect(svg.match(/stroke-dasharray="4 4"/g)).toHaveLength(2 * report.faults.length);
    expect(stdout).toContain(`faults: ${report.faults.length} injected, ${report.faults.length} recovered`);
    expect(stdout).toContain(report.verdict.memoryRule);
    expect(stdout).toMatch(/verdict: (PASS|FAIL)/);
  });

  it('exits 0 exactly when every fault recovered and memory was judged bounded', () => {
    expect(['bounded', 'growing', 'unjudged']).toContain(report.verdict.memory);
    expect(report.verdict.pass).toBe(report.verdict.allFaultsRecovered && report.verdict.memory === 'bounded');
    expect(exitCode).toBe(report.verdict.pass ? 0 : 1);
  });
});

describe('FaultLog', () => {
  it('recovers a fault only with a render of the store version at clearing or newer', () => {
    const log = new FaultLog();
    log.injected('crash', 100);
    log.succeeded('render', 150, 40);
    expect(log.open?.kind).toBe('crash');
    log.cleared(200, 50);
    log.succeeded('render', 250, 49);
    expect(log.open).toBeDefined();
    log.succeeded('render', 300, 50);
    expect(log.open).toBeUndefined();
    expect(log.records).toEqual([{ kind: 'crash', injectedMs: 100, clearedMs: 200, clearedVersion: 50, recoveredMs: 300, recoveredVersion: 50, failedMs: null, failure: null }]);
  });

  it('waits for a written render, not just a render, after an output fault', () => {
    const log = new FaultLog();
    log.injected('output', 0);
    log.cleared(10, 7);
    log.succeeded('render', 20, 9);
    expect(log.open).toBeDefined();
    log.succeeded('write', 30, 8);
    expect(log.records[0]?.recoveredVersion).toBe(8);
  });

  it('keeps the first clearing and refuses a second fault while one is open', async () => {
    const log = new FaultLog();
    log.injected('leadership', 0);
    log.cleared(10, 5);
    log.cleared(20, 9);
    expect(log.open?.clearedVersion).toBe(5);
    expect(() => log.injected('hang', 30)).toThrow(/leadership has not recovered/);
    const settled = log.settled();
    log.succeeded('render', 40, 5);
    await settled;
    log.injected('hang', 50);
    expect(log.records.map((r) => r.kind)).toEqual(['leadership', 'hang']);
  });

  it('gives the open fault up as failed with its reason, which ends it and lets the next fault in', async () => {
    const log = new FaultLog();
    log.injected('haproxy-worker', 0);
    const settled = log.settled();
    log.failed(90, 'show proc failed: ECONNREFUSED');
    await settled;
    log.succeeded('render', 100, 1);
    log.injected('crash', 120);
    expect(log.records[0]).toMatchObject({ kind: 'haproxy-worker', clearedMs: null, recoveredMs: null, failedMs: 90, failure: 'show proc failed: ECONNREFUSED' });
    expect(log.open?.kind).toBe('crash');
  });
});

describe('soak report', () => {
  it('counts failed faults apart and names each one with its reason in the summary; the run does not pass', () => {
    const options = { durationSeconds: 60, ingresses: 10, rate: 1, faultIntervalSeconds: 20, faults: ['crash', 'haproxy-worker'] as const, renderTimeoutMs: 5000, workerHeapMb: 64, seed: 1, outDir: '/x' };
    const record = { clearedMs: null, clearedVersion: null, recoveredMs: null, recoveredVersion: null, failedMs: null, failure: null };
    const report = soakReport({
      options: { ...options, faults: [...options.faults] },
      threads: 1,
      startedAt: '2026-01-01T00:00:00.000Z',
      initialRenderMs: 1,
      floodMs: 60_000,
      samplePeriodMs: 1000,
      samples: [],
      eventLoopDelay: { p50Ms: 0, p99Ms: 0, maxMs: 0 },
      peakRssMb: 1,
      peakHeapUsedMb: 1,
      peakWorkerHeapMb: null,
      totals: { changes: 0, renders: 0, failures: 0, writes: 0, writeFailures: 0, criticalDrops: 0, lossyDrops: 0, workersReplaced: 0, faultsPostponed: 0 },
      faults: [
        { ...record, kind: 'crash', injectedMs: 20_000, clearedMs: 21_000, clearedVersion: 3, recoveredMs: 22_000, recoveredVersion: 3 },
        { ...record, kind: 'haproxy-worker', injectedMs: 40_000, failedMs: 40_100, failure: "HAProxy's worker was not found and killed within 60 s (show proc failed: ECONNREFUSED)" },
      ],
    });
    expect(report.faultSummary).toMatchObject({ injected: 2, recovered: 1, failed: 1 });
    expect(report.faultSummary.byKind['haproxy-worker']).toMatchObject({ injected: 1, recovered: 0, failed: 1 });
    expect(report.verdict.allFaultsRecovered).toBe(false);
    expect(report.verdict.pass).toBe(false);
    const text = textSummary(report);
    expect(text).toContain('faults: 2 injected, 1 recovered, 1 failed');
    expect(text).toContain("  failed: haproxy-worker injected at 40.0 s: HAProxy's worker was not found and killed within 60 s (show proc failed: ECONNREFUSED)\n");
  });
});

describe('FaultInjector', () => {
  const stores = new StoreProvider();
  const scratch: string[] = [];

  afterEach(async () => {
    for (const d of scratch.splice(0)) await rm(d, { recursive: true, force: true });
  });

  function rig(outputRoot = '/nonexistent/soak-test') {
    const clock = new FakeClock();
    const log = new FaultLog();
    const workers = new WorkerFaultSwitch();
    const elector = new SwitchableElector();
    const injector = new FaultInjector({ log, workers, elector, outputRoot, stores, clock, holdMs: 1000, elapsedMs: () => clock.monotonic(), renderTimeoutMs: 5000 });
    const workerData = workers.worker.workerData as WorkerFaultData;
    return { clock, log, workers, elector, injector, workerData };
  }

  it.each(['crash', 'hang', 'oom'] as const)('arms a %s for exactly one render and clears it at the first failure after a worker took it', async (kind) => {
    const { log, injector, workerData } = rig();
    await injector.inject(kind);
    injector.renderFailed();
    expect(log.open?.clearedMs).toBeNull();
    expect(takeWorkerFault(workerData)).toBe(kind);
    expect(takeWorkerFault(workerData)).toBeUndefined();
    injector.renderFailed();
    expect(log.open?.clearedVersion).toBe(stores.version);
  });

  it('steps leadership down for the hold time, then back up, clearing the fault then', async () => {
    const { clock, log, elector, injector } = rig();
    const transitions: string[] = [];
    const running = new AbortController();
    void elector.run({ onBecameLeader: () => transitions.push('became'), onLostLeadership: (reason) => transitions.push(`lost: ${reason}`) }, running.signal);
    await injector.inject('leadership');
    expect(elector.leading).toBe(false);
    await clock.advance(999);
    expect(log.open?.clearedMs).toBeNull();
    await clock.advance(1);
    expect(elector.leading).toBe(true);
    expect(log.open?.clearedMs).toBe(1000);
    expect(transitions).toEqual(['became', 'lost: soak: leadership fault', 'became']);
    running.abort();
  });

  it('puts a file in the output directory’s place for the hold time, then removes it', async () => {
    const base = await mkdtemp(join(tmpdir(), 'soak-injector-'));
    scratch.push(base);
    const root = join(base, 'out');
    const { clock, log, injector } = rig(root);
    await injector.inject('output');
    expect((await stat(root)).isFile()).toBe(true);
    await clock.advance(1000);
    await eventually(() => log.open?.clearedMs === 1000, 'the output fault cleared');
    await expect(stat(root)).rejects.toThrow(/ENOENT/);
  });

  it('on restore withdraws a worker fault nobody took, and ends a hold at once', async () => {
    const { log, elector, injector, workerData } = rig();
    await injector.inject('oom');
    await injector.restore();
    expect(takeWorkerFault(workerData)).toBeUndefined();
    expect(log.open?.clearedMs).toBe(0);
    log.succeeded('render', 1, stores.version);
    const running = new AbortController();
    void elector.run({ onBecameLeader: () => undefined, onLostLeadership: () => undefined }, running.signal);
    await injector.inject('leadership');
    await injector.restore();
    expect(elector.leading).toBe(true);
    expect(log.open?.clearedMs).not.toBeNull();
    running.abort();
  });
});

describe('memory growth verdict', () => {
  /** One point per second for `seconds`, MB by `mb(t)` (t in s). */
  const series = (seconds: number, mb: (t: number) => number): [number, number][] => Array.from({ length: seconds }, (_, i) => [(i + 1) * 1000, mb(i + 1)]);

  it('is bounded for a flat level with a garbage-collection sawtooth and a fault spike late in the run', () => {
    const g = seriesGrowth(series(180, (t) => (t === 170 ? 600 : 300 + (t % 10) * 8)), warmupMs(180_000));
    expect(g?.growing).toBe(false);
    expect(Math.abs(g?.growthMb ?? Infinity)).toBeLessThan(5);
  });

  it('is growing when the floor over the second half is more than the limit above the first half’s', () => {
    const g = seriesGrowth(series(180, (t) => 100 + t * 0.5), warmupMs(180_000));
    expect(g?.growing).toBe(true);
    // 10% of the first half's floor (137.5 MB): more than the 5 MB minimum.
    expect(g?.firstHalfFloorMb).toBe(137.5);
    expect(g?.limitMb).toBe(13.8);
    expect(g?.slopeMbPerMin).toBeCloseTo(30, 0);
  });

  it('judges the floor, so a heap that swings wider between collections is not growing', () => {
    // Collections every 8 s bring the heap back to 60 MB; between them it climbs ever higher.
    const g = seriesGrowth(series(180, (t) => 60 + (t % 8) * (5 + t / 10)), warmupMs(180_000));
    expect(g?.firstHalfFloorMb).toBe(60);
    expect(g?.secondHalfFloorMb).toBe(60);
    expect(g?.growing).toBe(false);
  });

  it('leaves out the warm-up, where caches fill', () => {
    const rampThenFlat = series(180, (t) => Math.min(400, 100 + t * 5));
    expect(warmupMs(180_000)).toBe(45_000);
    expect(seriesGrowth(rampThenFlat, warmupMs(180_000))?.growing).toBe(false);
    expect(seriesGrowth(rampThenFlat, 0)?.growing).toBe(true);
  });

  it('allows a few MB on a small heap, and gives no verdict without samples in both halves', () => {
    expect(seriesGrowth(series(60, (t) => (t > 40 ? 24 : 20)), 15_000)?.growing).toBe(false);
    expect(seriesGrowth(series(3, () => 50), 0)).toBeNull();
  });

  it('samples every second for an hour, and in whole seconds beyond, within MAX_SAMPLES', () => {
    expect(samplePeriodMs(10)).toBe(1000);
    expect(samplePeriodMs(3600)).toBe(1000);
    expect(samplePeriodMs(3601)).toBe(2000);
    // With room left for the wait for the last recovery.
    for (const seconds of [60, 3600, 7200, 86_400]) expect((seconds * 1000) / samplePeriodMs(seconds)).toBeLessThanOrEqual(MAX_SAMPLES - 300);
  });
});

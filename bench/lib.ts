// Shared plumbing for the benchmark suites: the cluster sizes, tinybench option presets, turning a
// finished tinybench task into plain numbers, console tables with rounded figures, and writing
// each suite's report to bench/results/<suite>.json (through a .tmp file, which git ignores).
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, platform, release } from 'node:os';
import type { Bench, BenchOptions, Task } from 'tinybench';
import { StoreProvider } from '../src/main/stores/store-provider.js';
import { SyntheticCluster } from '../src/main/sources/synthetic/synthetic-cluster.js';
import type { KubeObject, TemplateSetSource } from '../src/worker/protocol.js';
import { httpRouteOf } from './route-cluster.js';

/** Cluster sizes (Ingresses, each with a Service and an EndpointSlice of 3 endpoints). */
export const DEFAULT_SIZES: readonly number[] = [100, 1_000, 10_000];

export interface SuiteContext {
  /** The N values to run, from `--sizes` or DEFAULT_SIZES. */
  readonly sizes: readonly number[];
  readonly templateSet: TemplateSetSource;
}

/** One row of a report: plain numbers and strings, as written to JSON. */
export type Row = Record<string, string | number | boolean | null>;

export interface SuiteReport {
  readonly suite: string;
  readonly description: string;
  /** How the figures were timed (tinybench, tinybench with overridden durations, by hand). */
  readonly timing: string;
  readonly parameters: Record<string, unknown>;
  /** One row per measured task. */
  readonly results: Row[];
  /** Alternatives side by side, with their ratios. */
  readonly comparisons: Row[];
  readonly notes: readonly string[];
  /** Further per-suite data (one-shot runs, split timings). */
  readonly details?: Record<string, unknown>;
}

export interface Suite {
  readonly name: string;
  readonly description: string;
  run(context: SuiteContext): Promise<SuiteReport>;
}

/**
 * Picks an iteration count by cluster size, so the large sizes stay affordable.
 * Sizes outside the defaults use the bracket they fall in.
 */
export function bySize<T>(n: number, small: T, medium: T, large: T): T {
  return n <= 100 ? small : n <= 1_000 ? medium : large;
}

/**
 * Options for a bench that runs exactly `iterations` samples after `warmupIterations` warm-up
 * calls. tinybench treats `iterations` as a minimum next to a time budget; a zero budget makes
 * the counts exact, which is what slow tasks (a 10,000-Ingress render) need.
 */
export function fixedIterations(name: string, iterations: number, warmupIterations: number): BenchOptions {
  return { name, iterations, time: 0, warmup: warmupIterations > 0, warmupIterations, warmupTime: 0, throws: true };
}

/** Options for a bench of fast tasks: a time budget per task with a minimum number of samples. */
export function timeBudget(name: string, timeMs: number, minIterations = 10): BenchOptions {
  return { name, time: timeMs, iterations: minIterations, warmup: true, warmupTime: Math.min(100, timeMs / 2), warmupIterations: 5, throws: true };
}

export interface LatencyStats {
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
  /** Relative margin of error of the mean, in percent. */
  readonly rmePct: number;
  readonly samples: number;
}

/** The latency statistics of a finished task (tinybench 6: `task.result.latency`, in ms). */
export function latencyOf(task: Task): LatencyStats {
  const result = task.result;
  if (result.state === 'errored') throw new Error(`task ${JSON.stringify(task.name)} failed: ${result.error.message}`);
  if (result.state !== 'completed' && result.state !== 'aborted-with-statistics') {
    throw new Error(`task ${JSON.stringify(task.name)} has no statistics (state ${result.state})`);
  }
  const l = result.latency;
  return { meanMs: l.mean, p50Ms: l.p50, p99Ms: l.p99, minMs: l.min, maxMs: l.max, rmePct: l.rme, samples: l.samplesCount };
}

export function taskOf(bench: Bench, name: string): Task {
  const task = bench.getTask(name);
  if (task === undefined) throw new Error(`bench ${bench.name ?? ''} has no task ${JSON.stringify(name)}`);
  return task;
}

/** A finished task as a JSON row; `perOp` divides every latency by the operations of one sample. */
export function latencyRow(task: Task, extra: Row = {}, perOp = 1): Row {
  const s = latencyOf(task);
  return {
    task: task.name,
    ...extra,
    meanMs: s.meanMs / perOp,
    p50Ms: s.p50Ms / perOp,
    p99Ms: s.p99Ms / perOp,
    minMs: s.minMs / perOp,
    maxMs: s.maxMs / perOp,
    rmePct: s.rmePct,
    samples: s.samples,
    ...(perOp === 1 ? {} : { opsPerSample: perOp, opsPerSec: (1000 * perOp) / s.meanMs }),
  };
}

/** Three significant digits, for tables. */
export function sig(value: number, digits = 3): number {
  if (!Number.isFinite(value) || value === 0) return value;
  return Number(value.toPrecision(digits));
}

/** `a / b` to three significant digits, or null when undefined. */
export function ratio(a: number, b: number): number | null {
  return b > 0 && Number.isFinite(a) ? sig(a / b) : null;
}

/** Prints rows with every fractional number rounded to three significant digits (counts stay exact). */
export function printTable(title: string, rows: readonly Row[]): void {
  console.log(`\n${title}`);
  console.table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'number' && !Number.isInteger(v) ? sig(v) : v]))));
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** A StoreProvider shaped like the template set's watched resources, holding N synthetic apps. */
export function populatedStores(set: TemplateSetSource, n: number, seed = 1): { stores: StoreProvider; cluster: SyntheticCluster } {
  const stores = new StoreProvider(set.stores);
  const cluster = new SyntheticCluster({ ingresses: n, seed });
  cluster.populate(stores);
  return { stores, cluster };
}

/** The objects of N synthetic apps, in the order SyntheticCluster creates them. */
export function syntheticObjects(n: number): { store: string; object: KubeObject }[] {
  const cluster = new SyntheticCluster({ ingresses: n });
  const out: { store: string; object: KubeObject }[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ store: 'services', object: cluster.service(i) });
    out.push({ store: 'endpointslices', object: cluster.endpointSlice(i) });
    out.push({ store: 'ingresses', object: cluster.ingress(i) });
  }
  return out;
}

/**
 * Changes exactly one object: a new generation of one app's EndpointSlice (one endpoint moves,
 * as in a rolling deploy) or of its Ingress or HTTPRoute (a path changes, so its routes and map
 * or match lines change; see route-cluster.ts for the HTTPRoute cluster).
 * Deterministic: app indices step through the cluster.
 */
/** What a OneObjectChanger changes. */
export type ChangedKind = 'endpointslice' | 'ingress' | 'ingress-backend' | 'httproute';

export class OneObjectChanger {
  /** Which kind of object each change touches. */
  readonly kind: ChangedKind;
  #generation = 0;
  #cursor = 0;

  constructor(
    private readonly stores: StoreProvider,
    private readonly cluster: SyntheticCluster,
    private readonly apps: number,
    kind: ChangedKind = 'endpointslice',
  ) {
    this.kind = kind;
  }

  /**
   * An EndpointSlice: one endpoint moves. An Ingress or HTTPRoute: one of its paths changes
   * (`/api/vN`). `ingress-backend`: an Ingress's server timeout annotation changes, which edits
   * its backend's section of the config (not only map lines).
   */
  change(): void {
    const index = (this.#cursor = (this.#cursor + 7919) % this.apps);
    const generation = ++this.#generation;
    if (this.kind === 'ingress') this.stores.store('ingresses').upsert(this.cluster.ingress(index, generation));
    else if (this.kind === 'ingress-backend') this.stores.store('ingresses').upsert(withServerTimeout(this.cluster.ingress(index, 1), generation));
    else if (this.kind === 'httproute') this.stores.store('httproutes').upsert(httpRouteOf(this.cluster, index, generation));
    else this.stores.store('endpointslices').upsert(this.cluster.endpointSlice(index, generation));
  }
}

/** `ingress` with a `haproxy.org/timeout-server` annotation that differs per generation, as a new version of it. */
function withServerTimeout(ingress: KubeObject, generation: number): KubeObject {
  const { metadata } = ingress;
  const annotations = { ...(metadata.annotations ?? {}), 'haproxy.org/timeout-server': `${10 + (generation % 50)}s` };
  return { ...ingress, metadata: { ...metadata, annotations, resourceVersion: `${String(metadata.resourceVersion ?? '1')}-t${generation}` } };
}

export function environment(): Row {
  return {
    node: process.version,
    platform: `${platform()} ${release()}`,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    /** 1, 5 and 15 minute load averages when the suite finished: other work on the host skews timings. */
    loadAverage: loadavg().map((l) => sig(l)).join(' '),
    date: new Date().toISOString(),
  };
}

const RESULTS_DIR = new URL('./results/', import.meta.url);

/** Writes the report to bench/results/<suite>.json; returns the path. */
export async function writeReport(report: SuiteReport): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const target = new URL(`${report.suite}.json`, RESULTS_DIR);
  const temp = new URL(`${report.suite}.json.tmp`, RESULTS_DIR);
  const body = { ...report, environment: { ...environment(), tinybench: await tinybenchVersion() } };
  await writeFile(temp, `${JSON.stringify(body, null, 2)}\n`);
  await rename(temp, target);
  return target.pathname;
}

async function tinybenchVersion(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(new URL('../node_modules/tinybench/package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The calling thread's [on-CPU ns, run-queue wait ns], or undefined off Linux. */
export function threadSchedstat(): [number, number] | undefined {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return run !== undefined && wait !== undefined && Number.isFinite(run) && Number.isFinite(wait) ? [run, wait] : undefined;
  } catch {
    return undefined;
  }
}

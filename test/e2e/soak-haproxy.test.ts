// `soak --haproxy`, a short real run through the CLI: a small synthetic cluster deployed to a real
// HAProxy serving traffic to local echo backends, with paced reload edits and a SIGKILL of
// HAProxy's worker. The report must show traffic served without a failure outside the fault, at
// least one reload after the first start, the HAProxy fault recovered (HAProxy serving the store
// version again), and HAProxy's processes and the traffic in every sample.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SoakReport } from '../../src/main/tools/soak/soak-report.js';
import { SKIP_HAPROXY } from '../helpers/haproxy-harness.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'src', 'main', 'cli', 'cli.ts');

describe.skipIf(SKIP_HAPROXY)('soak --haproxy (smoke)', () => {
  let dir: string;
  let stderr = '';
  let report: SoakReport;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'haptic-soak-haproxy-test-'));
    const args = ['--import', 'tsx', CLI, 'soak', '--haproxy', '--seconds', '8', '--ingresses', '60', '--rate', '2', '--traffic-rate', '50'];
    const faults = ['--faults', 'haproxy-worker', '--fault-interval', '2', '--reload-interval', '1.5', '--out-dir', dir];
    try {
      ({ stderr } = await run(process.execPath, [...args, ...faults], { cwd: ROOT, timeout: 90_000, maxBuffer: 16 * 2 ** 20 }));
    } catch (error) {
      // Exit code 1 is a verdict (this short a run leaves memory unjudged); anything else fails here.
      const failed = error as { code?: unknown; stderr?: string };
      if (failed.code !== 1) throw new Error(`the soak did not finish: ${String(failed.code)}\n${failed.stderr ?? ''}`, { cause: error });
      stderr = failed.stderr ?? '';
    }
    const json = await readFile(join(dir, 'soak-haproxy.json'), 'utf8').catch((error: unknown) => {
      throw new Error(`the soak wrote no report:\n${stderr}`, { cause: error });
    });
    report = JSON.parse(json) as SoakReport;
  }, 120_000);

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('serves the traffic through HAProxy with no failure outside the HAProxy fault', () => {
    const traffic = report.haproxy?.traffic;
    expect(traffic, stderr).toBeDefined();
    expect(traffic?.ok).toBeGreaterThan(100);
    expect(traffic?.errors, JSON.stringify(traffic?.failureSamples)).toBe(0);
    expect(traffic?.refused).toBe(0);
    expect(report.haproxyVerdict?.trafficClean).toBe(true);
    expect(traffic?.latency.p50Ms).toBeGreaterThan(0);
  });

  it('reloads HAProxy for the paced Ingress edits, and applies endpoint changes without reloading', () => {
    const d = report.haproxy?.deployments;
    expect(report.haproxy?.reloadEdits).toBeGreaterThanOrEqual(2);
    // The first reload starts HAProxy; the edits ask for more.
    expect(d?.reloads, stderr).toBeGreaterThanOrEqual(2);
    expect(d?.runtime).toBeGreaterThan(0);
  });

  it('kills the HAProxy worker and recovers once HAProxy serves the store version again', () => {
    const kill = report.faults.find((f) => f.kind === 'haproxy-worker');
    expect(kill, stderr).toBeDefined();
    expect(kill?.clearedMs).not.toBeNull();
    expect(kill?.recoveredMs, stderr).not.toBeNull();
    expect(kill?.recoveredVersion as number).toBeGreaterThanOrEqual(kill?.clearedVersion as number);
    expect(report.haproxy?.restarts).toBeGreaterThanOrEqual(1);
  });

  it("samples HAProxy's workers and memory and the traffic in every period, and writes the chart", async () => {
    const samples = report.samples;
    expect(samples.length).toBeGreaterThanOrEqual(5);
    for (const s of samples) expect(s.traffic, `sample at ${s.tMs} ms`).toBeDefined();
    const processes = samples.flatMap((s) => (s.haproxy === undefined || s.haproxy === null ? [] : [s.haproxy]));
    // A period whose latest poll met HAProxy killed or restarting has none (a killed worker takes
    // its master down, and the supervisor restarts both); the periods between kills have one.
    expect(processes.length).toBeGreaterThanOrEqual(3);
    for (const p of processes) expect(p.workers).toBeGreaterThanOrEqual(1);
    // A poll that lands between a kill and the reaping of the killed process reads no memory for
    // it; the periods around it read the live processes' memory.
    expect(processes.filter((p) => p.rssMb > 1).length).toBeGreaterThanOrEqual(Math.ceil(processes.length / 2));
    expect(report.haproxy?.peakWorkers).toBeLessThanOrEqual(1 + (report.haproxy?.maxOldWorkers ?? 0) + 1);
    expect(report.memory.growth).toHaveProperty('rss');
    expect(report.haproxyVerdict).toHaveProperty('workers');
    const svg = await readFile(join(dir, 'soak-haproxy.svg'), 'utf8');
    expect(svg).toContain('HAProxy RSS (master + workers)');
    expect(svg).toContain('Request latency through HAProxy');
    expect((await stat(join(dir, 'soak-haproxy.json'))).size).toBeGreaterThan(0);
  });
});

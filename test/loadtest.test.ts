// Smoke test of `haptic-reconciler loadtest`: a very short flood in both modes, each in its own
// child process, through the real CLI. Checks the reports are complete, not the numbers' size.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'src', 'main', 'cli.ts');

const KEYS = [
  'eldP50Ms',
  'eldP99Ms',
  'eldMaxMs',
  'elu',
  'probeP50Ms',
  'probeP99Ms',
  'triggers',
  'renders',
  'coalesced',
  'criticalDrops',
  'renderP50Ms',
  'renderP99Ms',
  'freshnessMs',
  'peakRssMb',
  'peakHeapMb',
] as const;

let dir: string;
let stdout: string;
let report: Record<string, Record<string, unknown>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'haptic-loadtest-'));
  const args = ['--import', 'tsx', CLI, 'loadtest', '--ingresses', '200', '--rate', '500', '--duration', '2', '--mode', 'both'];
  const outputs = ['--json', join(dir, 'report.json'), '--markdown', join(dir, 'summary.md'), '--svg', join(dir, 'eld.svg')];
  // Rejects (failing the test) on a non-zero exit: critical drops, failed renders, no freshness.
  ({ stdout } = await run(process.execPath, [...args, ...outputs], { cwd: ROOT, timeout: 150_000, maxBuffer: 16 * 2 ** 20 }));
  report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as typeof report;
}, 180_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('loadtest (smoke)', () => {
  it.each(['inline', 'pool'])('reports every stable metric as a number for the %s mode, with no critical drop', (mode) => {
    const r = report[mode];
    expect(r, `${mode} report`).toBeDefined();
    for (const key of KEYS) {
      expect(typeof r?.[key], `${mode}.${key}`).toBe('number');
      expect(Number.isFinite(r?.[key]), `${mode}.${key} is finite`).toBe(true);
    }
    expect(r?.criticalDrops).toBe(0);
    expect(r?.changes).toBe(1000);
    expect(r?.renders as number).toBeGreaterThan(0);
    expect(r?.triggers as number).toBeGreaterThan(0);
    expect(r?.fresh).toBe(true);
    expect(Array.isArray(r?.series) && (r?.series as unknown[]).length > 0).toBe(true);
  });

  it('prints the Markdown summary with both modes side by side, and writes it and the SVG chart', async () => {
    expect(stdout).toContain('| metric | inline | pool | pool/inline |');
    expect(stdout).toContain('critical bus drops');
    expect(stdout).toContain(await readFile(join(dir, 'summary.md'), 'utf8'));
    const svg = await readFile(join(dir, 'eld.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg).toContain('inline (max');
    expect(svg).toContain('pool (max');
  });
});

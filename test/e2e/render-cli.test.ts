// `haptic-reconciler render` as a user runs it: exit 0 for a clean directory; exit 2 with every
// rejected object or dropped part printed with its file:line and true counts; `--check` asks
// HAProxy before anything is written, so a refused render leaves the previous output in place.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { SKIP_HAPROXY } from '../helpers/haproxy-harness.js';

const exec = promisify(execFile);
const CLI = join(REPO_ROOT, 'src', 'main', 'cli', 'cli.ts');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function render(...args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', CLI, 'render', ...args], { cwd: REPO_ROOT, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const PARTLY_BAD = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: partly-bad
  namespace: shop
spec:
  ingressClassName: haproxy
  rules:
  - host: partly.example.com
    http:
      paths:
      - path: /good
        pathType: Prefix
        backend: { service: { name: web, port: { number: 80 } } }
      - path: "/has space"
        pathType: Prefix
        backend: { service: { name: web, port: { number: 80 } } }
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: all-bad
  namespace: shop
spec: "evil.example.com/ should never route"
`;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'render-cli-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('render', () => {
  it('exits 0 for the example cluster and writes the output', async () => {
    const out = join(dir, 'clean');
    const run = await render('--manifests', EXAMPLES_DIR, '--out', out);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/0 objects rejected, 0 parts of objects dropped/);
    expect(await readFile(join(out, 'haproxy.cfg'), 'utf8')).toContain('frontend http');
  });

  it('exits 2 and names file:line, the object and the reason for each rejection, while the rest is written', async () => {
    const manifests = join(dir, 'manifests-bad');
    await cp(EXAMPLES_DIR, manifests, { recursive: true });
    await writeFile(join(manifests, 'zz-bad.yaml'), PARTLY_BAD);
    await writeFile(join(manifests, 'zz-typo.yaml'), 'apiVersion: v1\nkind: Servce\nmetadata: { name: typo, namespace: shop }\n');
    const out = join(dir, 'partly');
    const run = await render('--manifests', manifests, '--out', out);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/rejected: .*zz-bad\.yaml:1: Ingress shop\/partly-bad \(path dropped\): .*has space/);
    expect(run.stderr).toMatch(/rejected: .*zz-bad\.yaml:19: Ingress shop\/all-bad: spec/);
    expect(run.stderr).toMatch(/rejected: .*zz-typo\.yaml:1: kind "Servce" is not a watched kind; did you mean Service\?/);
    expect(run.stderr).toMatch(/1 documents refused by the loader, 1 objects rejected, 1 parts of objects dropped/);
    const prefixMap = await readFile(join(out, 'maps', 'host-prefix.map'), 'utf8');
    expect(prefixMap).toContain('partly.example.com/good');
    expect(prefixMap).not.toContain('evil.example.com');
  });

  it.skipIf(SKIP_HAPROXY)('with --check, leaves the previous output in place when HAProxy refuses the render', async () => {
    const out = join(dir, 'checked');
    expect((await render('--manifests', EXAMPLES_DIR, '--out', out, '--check')).code).toBe(0);
    const before = await readFile(join(out, 'haproxy.cfg'), 'utf8');
    // A template set whose config HAProxy refuses but our structural checks cannot tell.
    const base = await readFile(join(REPO_ROOT, 'templates', 'default.yaml'), 'utf8');
    const templates = join(dir, 'refused.yaml');
    await writeFile(templates, base.replace('  frontend http\n', '  frontend http\n    http-response set-header X-Bad %[no_such_fetch]\n'));
    const run = await render('--manifests', EXAMPLES_DIR, '--out', out, '--check', '--templates', templates);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/REJECTED/);
    expect(run.stderr).toMatch(/previous output .* was left as it was/);
    expect(await readFile(join(out, 'haproxy.cfg'), 'utf8')).toBe(before);
  });
});

// `haptic-reconciler render` never replaces a good output because of what it could not read: a
// manifest file that does not parse (the objects it holds are unknown, not absent) exits 1 naming
// the file and line, and writes nothing; `--check` without HAProxy exits 1 and says so. Its
// messages say what was really left out.
import { execFile } from 'node:child_process';
import { access, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { REPO_ROOT } from '../helpers/cli-process.js';

const exec = promisify(execFile);
const CLI = join(REPO_ROOT, 'src', 'main', 'cli', 'cli.ts');

async function render(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', CLI, 'render', '--threads', '1', ...args], { cwd: REPO_ROOT, timeout: 60_000, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const BROKEN = 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: { name: [broken\n';

const BAD_ANNOTATION = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: maybe
  namespace: shop
  annotations:
    haproxy.org/ssl-redirect: "maybe"
spec:
  ingressClassName: haproxy
  rules:
  - host: maybe.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: { service: { name: web, port: { number: 80 } } }
`;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'render-cli-errors-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('render with a file it cannot read whole', () => {
  it('exits 1 naming the file and line, and leaves the previous output as it was', async () => {
    const manifests = join(dir, 'manifests');
    const out = join(dir, 'out');
    await cp(EXAMPLES_DIR, manifests, { recursive: true });
    expect((await render(['--manifests', manifests, '--out', out])).code).toBe(0);
    const before = await readFile(join(out, 'haproxy.cfg'), 'utf8');
    await writeFile(join(manifests, 'zz-broken.yaml'), BROKEN);

    const run = await render(['--manifests', manifests, '--out', out]);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: .*zz-broken\.yaml:\d+: invalid YAML/m);
    expect(run.stderr).toMatch(/nothing was written, the previous output in .* was left as it was/);
    expect(await readFile(join(out, 'haproxy.cfg'), 'utf8')).toBe(before);
  });

  it('writes no empty config when the only file is broken', async () => {
    const manifests = join(dir, 'only-broken');
    const out = join(dir, 'out-only-broken');
    await mkdir(manifests);
    await writeFile(join(manifests, 'broken.yaml'), BROKEN);

    const run = await render(['--manifests', manifests, '--out', out]);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: .*broken\.yaml:\d+: invalid YAML/m);
    await expect(access(join(out, 'haproxy.cfg'))).rejects.toThrow(/ENOENT/);
  });
});

describe('render that cannot start', () => {
  it('exits 1 with one line naming a manifest directory that does not exist', async () => {
    const missing = join(dir, 'no-such-dir');
    const run = await render(['--manifests', missing, '--out', join(dir, 'out-no-dir')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: manifest directory ${missing} does not exist\n`);
  });

  it('exits 1 with one line naming an --out it cannot write', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    const run = await render(['--manifests', EXAMPLES_DIR, '--out', join(file, 'out')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: cannot write the output directory .*a-file\/out \(--out\): ENOTDIR: not a directory\n$/);
  });
});

describe('render messages', () => {
  it('say that a bad annotation value left its whole Ingress out, and count it as a rejected object', async () => {
    const manifests = join(dir, 'bad-annotation');
    await cp(EXAMPLES_DIR, manifests, { recursive: true });
    await writeFile(join(manifests, 'zz-annotated.yaml'), BAD_ANNOTATION);

    const run = await render(['--manifests', manifests, '--out', join(dir, 'out-annotation')]);

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^rejected: .*zz-annotated\.yaml:1: Ingress shop\/maybe \(annotation; the Ingress is left out\): metadata\.annotations\["haproxy\.org\/ssl-redirect"\] "maybe"/m);
    expect(run.stderr).not.toMatch(/annotation dropped/);
    expect(run.stderr).toMatch(/0 documents refused by the loader, 1 objects rejected, 0 parts of objects dropped/);
  });
});

describe('render --check', () => {
  it('exits 1 and says so when HAProxy cannot be run, writing nothing', async () => {
    const out = join(dir, 'out-check');
    const run = await render(['--manifests', EXAMPLES_DIR, '--out', out, '--check'], { HAPROXY_BIN: join(dir, 'no-haproxy-here') });

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: --check: HAProxy is not installed or cannot run \(".*no-haproxy-here"; set HAPROXY_BIN to its path\); nothing was written$/m);
    await expect(access(join(out, 'haproxy.cfg'))).rejects.toThrow(/ENOENT/);
  });
});

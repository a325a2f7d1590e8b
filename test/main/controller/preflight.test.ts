// preflight, what the controller and `render` check before starting anything: each setting that
// can never work is a StartupError with one line naming what and where; a good setting passes and
// leaves nothing behind in --out but the directory itself.
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartupError } from '../../../src/main/core/errors.js';
import { preflight } from '../../../src/main/controller/preflight.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'preflight-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('preflight', () => {
  it('passes for a manifest directory and a new --out, which it creates empty', async () => {
    const manifests = join(dir, 'manifests');
    await mkdir(manifests);
    const out = join(dir, 'out', 'nested');
    await preflight({ manifests, out, haproxy: false });
    expect(await readdir(out)).toEqual([]);
  });

  it('names a manifest directory that does not exist', async () => {
    const missing = join(dir, 'missing');
    const error = await preflight({ manifests: missing, out: join(dir, 'out-1'), haproxy: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toBe(`manifest directory ${missing} does not exist`);
  });

  it('names a manifest path that is a file', async () => {
    const file = join(dir, 'file.yaml');
    await writeFile(file, '');
    await expect(preflight({ manifests: file, out: join(dir, 'out-2'), haproxy: false })).rejects.toThrow(`manifest directory ${file} is not a directory`);
  });

  it('names an --out that cannot be created', async () => {
    const file = join(dir, 'plain-file');
    await writeFile(file, '');
    await expect(preflight({ out: join(file, 'out'), haproxy: false })).rejects.toThrow(/^cannot write the output directory .*plain-file\/out \(--out\): ENOTDIR: not a directory$/);
  });

  it.skipIf(process.getuid?.() === 0)('names an --out it may not write', async () => {
    const out = join(dir, 'read-only');
    await mkdir(out);
    await chmod(out, 0o500);
    await expect(preflight({ out, haproxy: false })).rejects.toThrow(/^cannot write the output directory .*read-only \(--out\): EACCES/);
  });

  it('names a HAProxy binary that cannot run, and how to point at another', async () => {
    const binary = join(dir, 'no-haproxy');
    await expect(preflight({ out: join(dir, 'out-3'), haproxy: true, haproxyBinary: binary })).rejects.toThrow(
      `HAProxy is not installed or cannot run (${JSON.stringify(binary)}): --haproxy needs it; install it or set HAPROXY_BIN to its path`,
    );
  });
});

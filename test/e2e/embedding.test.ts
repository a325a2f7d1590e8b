// The README's embedding example (examples/embed.ts), run as a user runs it: an Engine with a
// manifest source and an OutputWriter keeps --out current and stops cleanly on SIGTERM.
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';

let dir: string | undefined;
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the embedding example', () => {
  it('keeps the output directory current as manifests change and exits 0 on SIGTERM', async () => {
    dir = await mkdtemp(join(tmpdir(), 'embed-'));
    const manifests = join(dir, 'manifests');
    const out = join(dir, 'out');
    await cp(join(REPO_ROOT, 'examples', 'local'), manifests, { recursive: true });
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'examples', 'embed.ts'), manifests, out], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    const config = (): Promise<string> => readFile(join(out, 'haproxy.cfg'), 'utf8').catch(() => '');
    await eventually(async () => (await config()).includes('backend ing_demo_echo_web_80'), 'the first config written', 30_000, 50);

    const manifest = await readFile(join(manifests, 'echo.yaml'), 'utf8');
    await writeFile(join(manifests, 'echo.yaml'), manifest.replace('path: /api', 'path: /v2'));
    await eventually(async () => (await readFile(join(out, 'maps', 'host-prefix.map'), 'utf8').catch(() => '')).includes('echo.localhost/v2'), 'the edit written', 30_000, 50);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 90_000);
});

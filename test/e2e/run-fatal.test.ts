// `haptic-reconciler run` that cannot start stops at once: exit 1, one `error:` line on stderr
// saying what is wrong and where, and no stack trace. A controller that kept running would serve
// /healthz 200 while it watches nothing, writes nowhere or supervises no HAProxy.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { startCli } from '../helpers/cli-process.js';
import { freePorts, SKIP_HAPROXY } from '../helpers/haproxy-harness.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-fatal-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `run` with these arguments; it must exit by itself within the timeout. */
async function run(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | string; output: string }> {
  const cli = startCli(['run', '--metrics-addr', '127.0.0.1:0', '--threads', '1', ...args], env);
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), 30_000);
  const code = await cli.exited;
  clearTimeout(timer);
  return { code, output: cli.output() };
}

/** One `error:` line, and nothing that looks like a stack trace anywhere in what it printed. */
function expectOneLine(output: string, message: RegExp): void {
  const errors = output.split('\n').filter((line) => line.startsWith('error: '));
  expect(errors, output).toHaveLength(1);
  expect(errors[0]).toMatch(message);
  expect(output).not.toMatch(/\n\s+at |"stack"/);
}

async function hold(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return server;
}

describe('run that cannot start', () => {
  it('exits 1 naming a manifest directory that does not exist', async () => {
    const missing = join(dir, 'no-such-dir');
    const { code, output } = await run(['--manifests', missing, '--out', join(dir, 'out-missing')]);
    expect(code).toBe(1);
    expectOneLine(output, new RegExp(`^error: manifest directory ${missing} does not exist$`));
  }, 40_000);

  it('exits 1 naming an --out it cannot write', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    const { code, output } = await run(['--manifests', EXAMPLES_DIR, '--out', join(file, 'out')]);
    expect(code).toBe(1);
    expectOneLine(output, /^error: cannot write the output directory .*a-file\/out \(--out\): ENOTDIR/);
  }, 40_000);

  it('exits 1 when the metrics address is in use', async () => {
    const [port] = (await freePorts(1)) as [number];
    const holder = await hold(port);
    try {
      const { code, output } = await run(['--manifests', EXAMPLES_DIR, '--out', join(dir, 'out-metrics'), '--metrics-addr', `127.0.0.1:${port}`]);
      expect(code).toBe(1);
      expectOneLine(output, new RegExp(`^error: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    } finally {
      holder.close();
    }
  }, 40_000);

  it('exits 1 with --haproxy when HAProxy cannot be run', async () => {
    const { code, output } = await run(['--manifests', EXAMPLES_DIR, '--out', join(dir, 'out-nohaproxy'), '--haproxy'], { HAPROXY_BIN: join(dir, 'no-haproxy-here') });
    expect(code).toBe(1);
    expectOneLine(output, /^error: HAProxy is not installed or cannot run \(".*no-haproxy-here"\): --haproxy needs it/);
  }, 40_000);

  it.skipIf(SKIP_HAPROXY)('exits 1 with --haproxy when HAProxy cannot bind its frontend port for the first config', async () => {
    const [httpPort, httpsPort, statusPort] = (await freePorts(3)) as [number, number, number];
    const holder = await hold(httpPort);
    const out = join(dir, 'out-port');
    await mkdir(out);
    try {
      const { code, output } = await run([
        '--manifests', EXAMPLES_DIR, '--out', out, '--haproxy',
        '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${httpPort}`, '--set', `httpsPort=${httpsPort}`, '--set', `statusPort=${statusPort}`,
      ]);
      expect(code).toBe(1);
      expectOneLine(output, new RegExp(`^error: HAProxy could not start its first config: .*cannot bind socket .*127\\.0\\.0\\.1:${httpPort}`));
    } finally {
      holder.close();
    }
  }, 40_000);
});

// `run`'s fleet flags, refused at start with a message that says what is wrong and where.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../helpers/cli-process.js';

let dir: string;

async function run(...args: string[]): Promise<{ code: number | string; output: string }> {
  const cli = startCli(['run', '--manifests', dir, '--out', join(dir, 'out'), '--metrics-addr', 'off', ...args]);
  const code = await cli.exited;
  return { code, output: cli.output() };
}

describe('run with fleet flags', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-cli-'));
    await writeFile(join(dir, 'token'), 'secret\n');
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stops at start on a malformed --agents address, naming it', async () => {
    const { code, output } = await run('--agents', '127.0.0.2:5555,127.0.0.3', '--agent-token-file', join(dir, 'token'));
    expect(code).toBe(1);
    expect(output).toContain('--agents: "127.0.0.3" is not HOST:PORT');
  });

  it('refuses --leader-elect with --haproxy, pointing to the fleet', async () => {
    const { code, output } = await run('--leader-elect', '--haproxy');
    expect(code).toBe(1);
    expect(output).toContain("run --leader-elect --haproxy is refused: only the leader deploys, so a follower's local HAProxy would serve nothing");
    expect(output).toContain('--agents HOST:PORT');
  });

  it('refuses plain HTTP to an agent outside loopback without --agent-insecure', async () => {
    const { code, output } = await run('--agents', '10.20.30.40:5555', '--agent-token-file', join(dir, 'token'));
    expect(code).toBe(1);
    expect(output).toContain('agent 10.20.30.40:5555 is outside loopback: give --agent-ca');
  });
});

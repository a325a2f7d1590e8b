// The agent's writes behind its answers, against a real HAProxy on 127.0.0.6: an apply without a
// reload is answered once its fence is saved and HAProxy runs it, while its files and the state
// naming it are still being written; a reload waits for those writes; and an agent stopped with a
// write still pending comes back on the last render fully written, still refusing the
// (epoch, sequence) it acknowledged.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/main/agent/agent.js';
import { parseApplyRequest, type ApplyRequest } from '../../../src/main/agent/agent-protocol.js';
import { AgentStore } from '../../../src/main/agent/agent-store.js';
import { silentLogger } from '../../../src/main/core/logger.js';
import { haproxyRenderChecker, type RenderChecker } from '../../../src/main/gate/render-checker.js';
import { OutputDirectory, outputPathsIn, type WriteHint, type WriteSummary } from '../../../src/main/output/output-directory.js';
import { send } from '../../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../../helpers/e2e-echo.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../../helpers/haproxy-harness.js';
import { agentConfig } from '../../helpers/agent-config.js';

skipNotice('test/main/agent/agent-writes.test.ts');

const ADDRESS = '127.0.0.6';
const leader = { mapsDir: '/leader/out/maps', filesDir: '/leader/out/files', certsDir: '/leader/out/certs', runDir: '/leader/out/run' };

/** An OutputDirectory whose writes wait while the gate is closed; it records the config of each write it was asked for. */
class GatedOutput extends OutputDirectory {
  readonly asked: string[] = [];
  #open = true;
  #waiting: (() => void)[] = [];

  close(): void {
    this.#open = false;
  }

  open(): void {
    this.#open = true;
    for (const go of this.#waiting.splice(0)) go();
  }

  override async write(haproxyConfig: string, aux: Parameters<OutputDirectory['write']>[1], hint?: WriteHint): Promise<WriteSummary> {
    this.asked.push(haproxyConfig);
    if (!this.#open) await new Promise<void>((go) => this.#waiting.push(go));
    return super.write(haproxyConfig, aux, hint);
  }
}

let root: string;
let httpPort: number;
const echoes = new EchoFleet();
let one: EchoServer;
let two: EchoServer;
let sequence = 0;
const agents: Agent[] = [];

function config(port: number, header = 'none'): string {
  return agentConfig({ runDir: leader.runDir, httpPort, port, frontend: [`    http-response set-header X-Render ${header}`, '    default_backend be_shop'] });
}

function parseRequest(body: Record<string, unknown>): ApplyRequest {
  const parsed = parseApplyRequest({ runtimeOps: [], reload: false, ...body });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.request;
}

async function apply(agent: Agent, body: Record<string, unknown>): Promise<{ status: number; checksum: string | null }> {
  const outcome = await agent.apply(parseRequest({ epoch: 3, sequence: ++sequence, paths: leader, ...body }));
  return { status: outcome.status, checksum: outcome.answer.state.checksum };
}

const served = async (): Promise<{ name: string | undefined; render: unknown }> => {
  const reply = await send({ address: ADDRESS, port: httpPort, host: 'shop.test', timeoutMs: 2000 });
  return { name: reply.echo?.name, render: reply.headers['x-render'] };
};
const onDisk = (dir: string): Promise<string> => readFile(join(dir, 'haproxy.cfg'), 'utf8');
const moveTo = (port: number): Record<string, unknown> => ({ runtimeOps: [{ type: 'server-addr', backend: 'be_shop', server: 's1', address: '127.0.0.1', port }] });

describe.skipIf(SKIP_HAPROXY)('the agent writes files and state behind its answers', () => {
  let dir: string;
  let output: GatedOutput;
  let agent: Agent;
  let checked: (() => void) | undefined;
  let checker: RenderChecker;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'agent-writes-'));
    dir = join(root, 'agent');
    // `haproxy -c` as the agent runs it, telling the test when it has judged.
    const real = haproxyRenderChecker({ directories: outputPathsIn(dir) });
    checker = async (render, signal) => {
      const verdict = await real(render, signal);
      checked?.();
      return verdict;
    };
    [httpPort] = (await freePorts(1)) as [number];
    one = await echoes.start('one');
    two = await echoes.start('two');
    output = new GatedOutput(dir);
    agent = new Agent({ dir, bindAddress: ADDRESS, logger: silentLogger(), output, checker });
    agents.push(agent);
    await agent.start();
    expect(await apply(agent, { full: true, checksum: 'c1', baseChecksum: null, config: config(one.port), reload: true })).toEqual({ status: 200, checksum: 'c1' });
  }, 30_000);

  afterAll(async () => {
    // The first agent's last write stays pending (it "died" with it): only the HAProxy processes end.
    for (const a of agents) await a.haproxy.stop();
    await echoes.stopAll();
    await rm(root, { recursive: true, force: true });
  });

  it('answers a runtime change once HAProxy runs it, and writes its files and then its state behind the answer', async () => {
    output.close();
    const answer = await apply(agent, { checksum: 'c2', baseChecksum: 'c1', config: config(two.port), ...moveTo(two.port) });
    expect(answer).toEqual({ status: 200, checksum: 'c2' });
    expect(agent.state()).toMatchObject({ checksum: 'c2', sequence });
    expect((await served()).name).toBe('two');
    // Not written yet: a restart would find the fence of this apply, and the render before it.
    expect(await onDisk(dir)).toContain(`server s1 127.0.0.1:${one.port}`);
    expect(await new AgentStore(dir).load()).toMatchObject({ fence: { epoch: 3, sequence }, render: { checksum: 'c1' } });
    output.open();
    await agent.written();
    expect(await onDisk(dir)).toContain(`server s1 127.0.0.1:${two.port}`);
    expect(await new AgentStore(dir).load()).toMatchObject({ fence: { epoch: 3, sequence }, render: { checksum: 'c2' } });
  });

  it('holds a reload until the files written behind earlier answers are in place', async () => {
    output.close();
    expect(await apply(agent, { checksum: 'c3', baseChecksum: 'c2', config: config(one.port), ...moveTo(one.port) })).toEqual({ status: 200, checksum: 'c3' });
    const checkedOnce = new Promise<void>((resolve) => (checked = resolve));
    const asked = output.asked.length;
    const reload = apply(agent, { checksum: 'c4', baseChecksum: 'c3', config: config(one.port, 'c4'), reload: true });
    await checkedOnce;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    // Checked and waiting: the reload's files are not even asked for while the earlier write is pending.
    expect(output.asked.length).toBe(asked);
    output.open();
    expect(await reload).toEqual({ status: 200, checksum: 'c4' });
    expect(output.asked.slice(asked - 1).map((text) => text.includes('X-Render c4'))).toEqual([false, true]);
    expect(await served()).toEqual({ name: 'one', render: 'c4' });
    expect(await onDisk(dir)).toContain('X-Render c4');
  });

  it('refuses an apply whose fence cannot be saved, and applies nothing of it', async () => {
    const other = join(root, 'unsaved');
    // A directory where the fence file goes: it cannot be opened for writing.
    await mkdir(join(other, '.haptic-agent-fence'), { recursive: true });
    const blocked = new Agent({ dir: other, bindAddress: ADDRESS, logger: silentLogger(), checker });
    await blocked.start();
    const answer = await blocked.apply(parseRequest({ epoch: 3, sequence: 1, paths: leader, checksum: 'b1', baseChecksum: null, full: true, config: config(two.port), reload: true }));
    expect(answer).toMatchObject({ status: 500, answer: { ok: false, error: 'state_not_saved', state: { checksum: null, sequence: 0, haproxy: { running: false } } } });
    expect(blocked.haproxy.state).toBe('stopped');
    expect(await served()).toEqual({ name: 'one', render: 'c4' });
  });

  it('comes back, after it stopped with a write pending, on the last render fully written and still fencing what it acknowledged', async () => {
    output.close();
    expect(await apply(agent, { checksum: 'c5', baseChecksum: 'c4', config: config(two.port, 'c5'), ...moveTo(two.port) })).toEqual({ status: 200, checksum: 'c5' });
    const acknowledged = sequence;
    // The process ends here: its HAProxy with it, its pending write never done.
    await agent.haproxy.stop();
    const restarted = new Agent({ dir, bindAddress: ADDRESS, logger: silentLogger(), checker });
    agents.push(restarted);
    await restarted.start();
    expect(restarted.state()).toMatchObject({ checksum: 'c4', epoch: 3, sequence: acknowledged, ready: true });
    expect(await served()).toEqual({ name: 'one', render: 'c4' });
    sequence = acknowledged - 1;
    expect((await apply(restarted, { checksum: 'old', full: true, baseChecksum: null, config: config(two.port), reload: true })).status).toBe(409);
    sequence = acknowledged;
    // The leader sees c4 and brings it up to date.
    expect(await apply(restarted, { checksum: 'c5', baseChecksum: 'c4', config: config(two.port, 'c5'), reload: true })).toEqual({ status: 200, checksum: 'c5' });
    expect(await served()).toEqual({ name: 'two', render: 'c5' });
  }, 30_000);
});

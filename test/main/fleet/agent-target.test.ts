import { afterEach, describe, expect, it } from 'vitest';
import { FILE_KINDS, recordPath, type AgentState, type ApplyAnswer, type ApplyRequest } from '../../../src/main/agent/agent-protocol.js';
import { startAgentServer, type AgentServer } from '../../../src/main/agent/agent-server.js';
import { sha256 } from '../../../src/main/agent/agent-store.js';
import { BearerAuth } from '../../../src/main/agent/bearer-auth.js';
import type { DeployableRender } from '../../../src/main/deploy/deploy-target.js';
import { parseAgentAddresses } from '../../../src/main/fleet/agent-address.js';
import { AgentClient } from '../../../src/main/fleet/agent-client.js';
import { AgentTarget } from '../../../src/main/fleet/agent-target.js';
import { ConcurrencyLimit } from '../../../src/main/fleet/concurrency-limit.js';
import { FencingToken } from '../../../src/main/fleet/fencing-token.js';
import { fleetTargets } from '../../../src/main/fleet/fleet-targets.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

const TOKEN = 'unit-token';
const PATHS = { mapsDir: '/out/maps', filesDir: '/out/files', certsDir: '/out/certs', runDir: '/out/run' };

/** An agent API that records what it is sent and keeps digests the way the agent does. */
class RecordingAgent {
  readonly requests: ApplyRequest[] = [];
  /** Statuses to answer next, in order (then 200). */
  readonly answers: number[] = [];
  current: AgentState = { epoch: 0, sequence: 0, checksum: null, files: {}, haproxy: { version: null, running: false }, ready: false };
  readonly ready = false;

  state(): AgentState {
    return this.current;
  }

  async apply(request: ApplyRequest): Promise<{ status: number; answer: ApplyAnswer }> {
    this.requests.push(request);
    const status = this.answers.shift() ?? 200;
    if (status !== 200) return { status, answer: { ok: false, error: status === 412 ? 'full_sync_required' : status === 409 ? 'fenced' : 'refused', message: 'no', state: this.current } };
    const files: Record<string, string> = request.full ? {} : { ...this.current.files };
    for (const kind of FILE_KINDS) {
      for (const [name, text] of Object.entries(request.files[kind])) {
        if (text === null) delete files[recordPath(kind, name)];
        else files[recordPath(kind, name)] = sha256(text);
      }
    }
    if (request.config !== undefined) files['haproxy.cfg'] = sha256(request.config);
    if (request.configPatch !== undefined) files['haproxy.cfg'] = request.configPatch.digest;
    for (const kind of ['maps', 'files'] as const) for (const [name, patch] of Object.entries(request.filePatches[kind])) files[recordPath(kind, name)] = patch.digest;
    this.current = { ...this.current, epoch: request.epoch, sequence: request.sequence, checksum: request.checksum, files };
    return { status: 200, answer: { ok: true, applied: request.runtimeOps.length, reloaded: request.reload, state: this.current } };
  }
}

function render(checksum: string, maps: Record<string, string>, certificates: Record<string, string> = {}): DeployableRender {
  return { renderId: checksum, checksum, haproxyConfig: `global # ${checksum.length > 2 ? 'v2' : 'v1'}\n`, auxiliaryFiles: { maps, files: {}, certificates } };
}

let server: AgentServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setUp(keysAllowed = true): Promise<{ agent: RecordingAgent; target: AgentTarget }> {
  const agent = new RecordingAgent();
  server = await startAgentServer({ listen: '127.0.0.1:0', agent, auth: new BearerAuth(TOKEN, silentLogger()), logger: silentLogger() });
  const [host, port] = server.address.split(':') as [string, string];
  const client = new AgentClient({ endpoint: { host, port: Number(port) }, token: TOKEN, limit: new ConcurrencyLimit(2), timeoutMs: 2000 });
  const target = new AgentTarget({ client, fence: new FencingToken(() => 4, new FakeClock()), paths: PATHS, keysAllowed, logger: silentLogger() });
  return { agent, target };
}

describe('AgentTarget', () => {
  it('sends the whole render to an empty agent, then only the files that changed, relative to its checksum', async () => {
    const { agent, target } = await setUp();
    await target.writeFiles(render('c1', { 'a.map': 'a\n', 'b.map': 'b\n' }), 'reload');
    expect(await target.reload()).toEqual({ ok: true, detail: 'reloaded' });
    await target.writeFiles(render('c2x', { 'a.map': 'a\n', 'c.map': 'c\n' }), 'reload');
    expect((await target.reload()).ok).toBe(true);
    const [first, second] = agent.requests as [ApplyRequest, ApplyRequest];
    expect(first).toMatchObject({ full: true, reload: true, checksum: 'c1', baseChecksum: null, config: 'global # v1\n', paths: PATHS });
    expect(first.files.maps).toEqual({ 'a.map': 'a\n', 'b.map': 'b\n' });
    expect(second).toMatchObject({ full: false, reload: true, checksum: 'c2x', baseChecksum: 'c1' });
    // The config goes as the change to the one the agent holds.
    expect(second.config).toBeUndefined();
    expect(second.configPatch).toEqual({ start: 0, end: 'global # v1\n'.length, text: 'global # v2\n', digest: sha256('global # v2\n') });
    expect(second.files.maps).toEqual({ 'c.map': 'c\n', 'b.map': null });
    expect(second.epoch).toBe(4);
    expect(second.sequence).toBeGreaterThan(first.sequence);
    expect(await target.currentChecksum()).toBe('c2x');
  });

  it('sends runtime operations at once, unchanged files not at all, and the whole render when the agent answers 412', async () => {
    const { agent, target } = await setUp();
    await target.writeFiles(render('c1', { 'a.map': 'a\n' }), 'reload');
    await target.reload();
    expect(await target.applyRuntime([{ type: 'map-del', file: '/out/maps/a.map', key: 'a' }])).toEqual({ applied: 1 });
    expect(agent.requests[1]).toMatchObject({ reload: false, checksum: 'c1', baseChecksum: 'c1', runtimeOps: [{ type: 'map-del', key: 'a' }] });
    expect(agent.requests[1]?.config).toBeUndefined();
    agent.answers.push(412);
    await target.writeFiles(render('c1b', { 'a.map': '' }), 'serving');
    expect(agent.requests.slice(2).map((r) => r.full)).toEqual([false, true]);
    expect(agent.requests[3]?.files.maps).toEqual({ 'a.map': '' });
  });

  it('sends a change to a large map as a patch of the text the agent holds', async () => {
    const { agent, target } = await setUp();
    const lines = Array.from({ length: 500 }, (_, i) => `host-${i}.test be_${i}\n`);
    await target.writeFiles(render('c1', { 'hosts.map': lines.join('') }), 'reload');
    await target.reload();
    lines[250] = 'host-250.test be_moved\n';
    await target.writeFiles(render('c1b', { 'hosts.map': lines.join('') }), 'serving');
    const sent = agent.requests[1] as ApplyRequest;
    expect(sent.files.maps).toEqual({});
    const patch = sent.filePatches.maps['hosts.map'];
    expect(patch?.text.length).toBeLessThan(20);
    const before = (agent.requests[0] as ApplyRequest).files.maps['hosts.map'] as string;
    expect(before.slice(0, patch?.start) + patch?.text + before.slice(patch?.end)).toBe(lines.join(''));
  });

  it('sends a render given as a patch of the one the agent holds as the files the patch names, and the config as the window of its edits', async () => {
    const { agent, target } = await setUp();
    const before = 'global\n\nbackend a\n  server s1 10.0.0.1:80\n\nbackend b\n  server s1 10.0.0.2:80\n\n';
    const c1: DeployableRender = { renderId: 'r1', checksum: 'c1', haproxyConfig: before, auxiliaryFiles: { maps: { 'a.map': 'a\n', 'b.map': 'b\n' }, files: {}, certificates: {} } };
    await target.writeFiles(c1, 'reload');
    await target.reload();
    const edits = [
      { at: before.indexOf('10.0.0.1'), remove: 8, text: '10.0.0.9' },
      { at: before.indexOf('10.0.0.2'), remove: 8, text: '10.0.0.22' },
    ];
    const after = before.slice(0, edits[0]!.at) + edits[0]!.text + before.slice(edits[0]!.at + 8, edits[1]!.at) + edits[1]!.text + before.slice(edits[1]!.at + 8);
    // a.map is named but the same text; b.map changed.
    const c2: DeployableRender = {
      renderId: 'r2', checksum: 'c2', haproxyConfig: after,
      auxiliaryFiles: { maps: { 'a.map': 'a\n', 'b.map': 'b2\n' }, files: {}, certificates: {} },
      patch: { from: 'r1', edits: { config: edits, 'maps/a.map': [], 'maps/b.map': [{ at: 0, remove: 2, text: 'b2\n' }] } },
    };
    await target.writeFiles(c2, 'serving');
    const sent = agent.requests[1] as ApplyRequest;
    expect(sent).toMatchObject({ full: false, checksum: 'c2', baseChecksum: 'c1', reload: false });
    expect(sent.files.maps).toEqual({ 'b.map': 'b2\n' });
    const patch = sent.configPatch!;
    expect(patch.text).toBe(after.slice(edits[0]!.at, edits[1]!.at + 9));
    expect(before.slice(0, patch.start) + patch.text + before.slice(patch.end)).toBe(after);
    expect(patch.digest).toBe(sha256(after));
    expect(agent.current.files).toEqual({ 'haproxy.cfg': sha256(after), 'maps/a.map': sha256('a\n'), 'maps/b.map': sha256('b2\n') });
  });

  it('reports a refused reload as failed, a fenced one as fenced, and an agent that does not answer as unreachable', async () => {
    const { agent, target } = await setUp();
    agent.answers.push(422);
    await target.writeFiles(render('c1', {}), 'reload');
    expect(await target.reload()).toMatchObject({ ok: false, detail: expect.stringContaining('422') });
    expect(target.health()).toBe('ok');
    agent.answers.push(409);
    await target.writeFiles(render('c1', {}), 'reload');
    expect((await target.reload()).ok).toBe(false);
    expect(target.health()).toBe('fenced');
    await server?.close();
    server = undefined;
    await target.writeFiles(render('c1', {}), 'reload');
    await expect(target.reload()).rejects.toThrow(/agent 127\.0\.0\.1:\d+/);
    expect(target.health()).toBe('unreachable');
  });

  it('never sends certificates where private keys may not go in clear', async () => {
    const { agent, target } = await setUp(false);
    await target.writeFiles(render('c1', {}, { 'site.pem': '-----BEGIN PRIVATE KEY-----\n' }), 'reload');
    await expect(target.reload()).rejects.toThrow('refusing to send private keys in clear');
    expect(agent.requests).toEqual([]);
  });
});

describe('fleet set-up', () => {
  it('names a malformed --agents entry, and a duplicate', () => {
    expect(parseAgentAddresses('127.0.0.2:5555,[::1]:5556,agent-0.haproxy:5555')).toEqual([
      { host: '127.0.0.2', port: 5555 },
      { host: '::1', port: 5556 },
      { host: 'agent-0.haproxy', port: 5555 },
    ]);
    expect(() => parseAgentAddresses('127.0.0.2:5555,127.0.0.3')).toThrow('--agents: "127.0.0.3" is not HOST:PORT');
    expect(() => parseAgentAddresses('127.0.0.2:99999')).toThrow('"127.0.0.2:99999"');
    expect(() => parseAgentAddresses('300.1.1.1:80')).toThrow('"300.1.1.1:80"');
    expect(() => parseAgentAddresses('127.0.0.2:80,127.0.0.2:80')).toThrow('twice');
  });

  it('refuses plain HTTP to an agent outside loopback unless insecure', () => {
    const context = { out: '/out', epoch: () => 0, clock: new FakeClock(), logger: silentLogger() };
    expect(() => fleetTargets({ agents: [{ host: '10.1.2.3', port: 5555 }], token: 't' }, context)).toThrow('agent 10.1.2.3:5555 is outside loopback');
    expect(fleetTargets({ agents: [{ host: '10.1.2.3', port: 5555 }], token: 't', insecure: true }, context)).toHaveLength(1);
    expect(fleetTargets({ agents: [{ host: '10.1.2.3', port: 5555 }], token: 't', ca: 'PEM' }, context)).toHaveLength(1);
  });

  it('runs at most the limit of tasks at once', async () => {
    const limit = new ConcurrencyLimit(2);
    const gates: (() => void)[] = [];
    let peak = 0;
    const task = () => limit.run(() => new Promise<void>((resolve) => {
      peak = Math.max(peak, limit.running);
      gates.push(resolve);
    }));
    const all = Promise.all([task(), task(), task(), task()]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(gates).toHaveLength(2);
    while (gates.length > 0) {
      gates.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await all;
    expect(peak).toBe(2);
  });
});

// `haptic-reconciler agent` end to end: the real CLI on 127.0.0.2 supervising a real HAProxy, fed
// through its API the way a leader feeds it. Not ready before its first config; a full sync starts
// HAProxy on the bind address with the leader's paths moved under --dir; a runtime operation moves
// traffic with no reload; a replayed (epoch, sequence) gets 409, a config `haproxy -c` refuses
// 422, a partial apply on the wrong base 412, bad bodies 400/413, no token 401, each changing
// nothing; a SIGKILLed agent restarted on its --dir serves the kept render at once, and still
// refuses the (epoch, sequence) it acknowledged last.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterCli } from '../../src/main/haproxy/master-cli.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { eventually } from '../helpers/eventually.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';
import { agentConfig } from '../helpers/agent-config.js';

skipNotice('test/e2e/agent.test.ts');

const ADDRESS = '127.0.0.2';
const TOKEN = 'agent-test-token';
const leader = { mapsDir: '/leader/out/maps', filesDir: '/leader/out/files', certsDir: '/leader/out/certs', runDir: '/leader/out/run' };
let dir: string;
let agent: CliProcess;
let api: string;
let httpPort: number;
let master: MasterCli;
let metricsPort: number;
const echoes = new EchoFleet();
let one: EchoServer;
let two: EchoServer;
let sequence = 0;

function config(port: number, extra = ''): string {
  return agentConfig({
    runDir: leader.runDir,
    httpPort,
    port,
    frontend: [`    use_backend %[req.hdr(host),lower,map(${leader.mapsDir}/hosts.map,be_none)]`, extra],
    tail: ['backend be_none', '    http-request return status 404'],
  });
}

function apply(body: Record<string, unknown>, token = TOKEN): Promise<{ status: number; body: Record<string, unknown> }> {
  return post(JSON.stringify({ epoch: 1, sequence: ++sequence, paths: leader, baseChecksum: null, runtimeOps: [], reload: false, ...body }), token);
}

async function post(text: string, token = TOKEN): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://${api}/v1/apply`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: text });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const state = async (): Promise<Record<string, unknown>> => (await fetch(`http://${api}/v1/state`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as Promise<Record<string, unknown>>;
const served = async (): Promise<string | undefined> => (await send({ address: ADDRESS, port: httpPort, host: 'shop.test', timeoutMs: 2000 }).catch(() => undefined))?.echo?.name;
const proc = () => eventually(() => master.showProc(), 'show proc on the agent master socket', 10_000);

function startAgent(listen: string): CliProcess {
  return startCli(['agent', '--dir', dir, '--listen', listen, '--token-file', join(dir, '..', 'token'), '--bind-address', ADDRESS, '--max-body-bytes', '100000', '--metrics-addr', `${ADDRESS}:${metricsPort}`]);
}

describe.skipIf(SKIP_HAPROXY)('haptic-reconciler agent', () => {
  beforeAll(async () => {
    const root = await mkdtemp(join(tmpdir(), 'agent-e2e-'));
    dir = join(root, 'agent');
    await writeFile(join(root, 'token'), `${TOKEN}\n`);
    one = await echoes.start('one');
    two = await echoes.start('two');
    const [apiPort, port, metrics] = (await freePorts(3)) as [number, number, number];
    httpPort = port;
    metricsPort = metrics;
    agent = startAgent(`${ADDRESS}:${apiPort}`);
    api = `${ADDRESS}:${apiPort}`;
    await eventually(async () => (await fetch(`http://${api}/healthz`)).status === 200, 'the agent listening', 30_000);
    master = new MasterCli({ socketPath: join(dir, 'run', 'master.sock') });
  }, 60_000);

  afterAll(async () => {
    await agent?.stop('SIGTERM');
    await echoes.stopAll();
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('answers /readyz 503 and a null checksum before its first config, and 401 without the token', async () => {
    expect((await fetch(`http://${api}/readyz`)).status).toBe(503);
    expect(await state()).toMatchObject({ checksum: null, epoch: 0, sequence: 0, haproxy: { running: false } });
    expect((await fetch(`http://${api}/v1/state`)).status).toBe(401);
    expect((await apply({ full: true, checksum: 'c0', config: config(one.port), reload: true }, 'wrong')).status).toBe(401);
    expect(agent.output()).not.toContain('wrong');
  });

  it('starts HAProxy on a full sync, on its bind address, with the map under its own --dir', async () => {
    const answer = await apply({ full: true, checksum: 'c1', config: config(one.port), files: { maps: { 'hosts.map': 'shop.test be_shop\n' } }, reload: true });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, reloaded: true, state: { checksum: 'c1', ready: true, haproxy: { running: true } } });
    expect((await fetch(`http://${api}/readyz`)).status).toBe(200);
    expect(await served()).toBe('one');
    const written = await readFile(join(dir, 'haproxy.cfg'), 'utf8');
    expect(written).toContain(`bind ${ADDRESS}:${httpPort}`);
    expect(written).toContain(`map(${join(dir, 'maps')}/hosts.map,be_none)`);
    expect(written).toContain(`stats socket ${join(dir, 'run')}/admin.sock`);
  });

  it('applies a runtime operation through the admin socket without a reload, and writes the files behind its answer', async () => {
    const before = await proc();
    const answer = await apply({ checksum: 'c2', baseChecksum: 'c1', config: config(two.port), runtimeOps: [{ type: 'server-addr', backend: 'be_shop', server: 's1', address: '127.0.0.1', port: two.port }] });
    expect(answer).toMatchObject({ status: 200, body: { ok: true, applied: 1, reloaded: false } });
    expect(await served()).toBe('two');
    const after = await proc();
    expect(after.master.reloads).toBe(before.master.reloads);
    expect(after.workers.map((w) => w.pid)).toEqual(before.workers.map((w) => w.pid));
    await eventually(async () => (await readFile(join(dir, 'haproxy.cfg'), 'utf8')).includes(`server s1 127.0.0.1:${two.port}`), 'the files of the runtime change written', 10_000);
  });

  it('applies a config patch to the config it holds, and answers 412 to one that does not match it', async () => {
    const base = config(two.port);
    const next = config(two.port, '    http-response set-header X-Patched yes');
    const start = base.indexOf('backend be_shop');
    const patch = { start: 0, end: base.length, text: next, digest: createHash('sha256').update(next).digest('hex') };
    const wrong = await apply({ checksum: 'c2p', baseChecksum: 'c2', configPatch: { ...patch, digest: 'f'.repeat(64) }, reload: true });
    expect(wrong).toMatchObject({ status: 412, body: { error: 'full_sync_required' } });
    const tail = next.slice(next.indexOf('backend be_shop'));
    const answer = await apply({ checksum: 'c2p', baseChecksum: 'c2', configPatch: { start: 0, end: start, text: next.slice(0, next.length - tail.length), digest: patch.digest }, reload: true });
    expect(answer).toMatchObject({ status: 200, body: { ok: true, state: { checksum: 'c2p' } } });
    expect((await send({ address: ADDRESS, port: httpPort, host: 'shop.test' })).headers['x-patched']).toBe('yes');
    // Back to the config the later tests expect, as a patch again.
    const back = await apply({ checksum: 'c2', baseChecksum: 'c2p', configPatch: { start: 0, end: next.length, text: base, digest: createHash('sha256').update(base).digest('hex') }, reload: true });
    expect(back.status).toBe(200);
  });

  it('answers 409 to an apply whose (epoch, sequence) is not above the highest accepted, and changes nothing', async () => {
    const replay = await post(JSON.stringify({ epoch: 1, sequence, paths: leader, checksum: 'old', full: true, config: config(one.port), reload: true }));
    expect(replay).toMatchObject({ status: 409, body: { ok: false, error: 'fenced' } });
    const older = await post(JSON.stringify({ epoch: 0, sequence: 99, paths: leader, checksum: 'old', full: true, config: config(one.port), reload: true }));
    expect(older.status).toBe(409);
    expect(await state()).toMatchObject({ checksum: 'c2', epoch: 1, sequence });
    expect(await served()).toBe('two');
  });

  it('answers 422 to a config haproxy -c refuses, and the previous config keeps serving', async () => {
    const before = await proc();
    const answer = await apply({ checksum: 'bad', baseChecksum: 'c2', config: config(one.port, '    no_such_keyword here'), reload: true });
    expect(answer).toMatchObject({ status: 422, body: { ok: false, error: 'refused' } });
    expect(String(answer.body.message)).toContain('no_such_keyword');
    expect(await state()).toMatchObject({ checksum: 'c2' });
    expect((await proc()).master.reloads).toBe(before.master.reloads);
    expect(await served()).toBe('two');
  });

  it('answers 412 to changes made against another base, so the leader sends the whole render', async () => {
    const answer = await apply({ checksum: 'c3', baseChecksum: 'not-what-it-serves', config: config(one.port), reload: true });
    expect(answer).toMatchObject({ status: 412, body: { error: 'full_sync_required', state: { checksum: 'c2' } } });
  });

  it('answers 400 to malformed JSON and to an unknown operation, and 413 to an oversized body', async () => {
    expect((await post('{"epoch": 1,')).status).toBe(400);
    const unknown = await apply({ checksum: 'c3', baseChecksum: 'c2', runtimeOps: [{ type: 'shutdown frontend', name: 'web' }] });
    expect(unknown).toMatchObject({ status: 400, body: { error: 'invalid' } });
    expect(String(unknown.body.message)).toContain('unknown operation');
    const big = await apply({ checksum: 'c3', baseChecksum: 'c2', files: { maps: { 'big.map': 'x'.repeat(200_000) } } });
    expect(big.status).toBe(413);
    expect(await state()).toMatchObject({ checksum: 'c2' });
    expect(await served()).toBe('two');
  });

  it('counts its applies by answer on --metrics-addr', async () => {
    const text = await (await fetch(`http://${ADDRESS}:${metricsPort}/metrics`)).text();
    expect(Number(/^haptic_agent_applies_total\{status="409"\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^haptic_agent_applies_total\{status="422"\} 1$/m);
    expect(text).toMatch(/^haptic_agent_ready 1$/m);
  });

  it('serves its kept render at once after a SIGKILL right after an answer, and still fences what it acknowledged', async () => {
    const { master: m } = await proc();
    // A runtime-only apply, killed as soon as it is answered: its fence was saved before the answer.
    const last = await apply({ checksum: 'c2', baseChecksum: 'c2', runtimeOps: [{ type: 'server-addr', backend: 'be_shop', server: 's1', address: '127.0.0.1', port: two.port }] });
    await agent.stop('SIGKILL');
    expect(last.status).toBe(200);
    const kept = { sequence: sequence };
    // The pod's HAProxy dies with the pod; here it outlives the agent, so end it the same way.
    process.kill(m.pid, 'SIGKILL');
    await eventually(async () => (await served()) === undefined, 'the old HAProxy gone', 10_000);
    agent = startAgent(api);
    await eventually(async () => (await fetch(`http://${api}/readyz`).catch(() => undefined))?.status === 200, 'the restarted agent ready', 30_000);
    expect(await served()).toBe('two');
    expect(await state()).toMatchObject({ checksum: 'c2', epoch: 1, sequence: kept.sequence });
    // Still fenced after the restart.
    expect((await post(JSON.stringify({ epoch: 1, sequence: kept.sequence, paths: leader, checksum: 'old', full: true, config: config(one.port), reload: true }))).status).toBe(409);
  }, 40_000);
});

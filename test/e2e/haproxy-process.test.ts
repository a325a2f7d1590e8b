// A real HAProxy 2.6 in master-worker mode, supervised by HaproxyProcess: the default template's
// output for the example cluster starts on this host (descriptor limits included), the master CLI
// proves reloads, the Runtime API applies changes and reports `[err]`, a killed master comes back
// (a reload asked meanwhile waits for it), and stop() is bounded. Every test uses its own
// loopback ports and output directory. With CI=true these tests always run; elsewhere they are
// skipped, with a notice, without HAProxy.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { checkConfigFile, haproxyBinary } from '../../src/main/haproxy/haproxy-check.js';
import { HaproxyProcess, type HaproxyProcessOptions } from '../../src/main/haproxy/haproxy-process.js';
import { DEFAULT_FD_HARD_LIMIT, defaultThreads, derivedMaxconn, descriptorsNeeded, fdShapeOfConfig, readFdLimit, type FdLimit } from '../../src/main/haproxy/fd-limits.js';
import { cliArg } from '../../src/main/haproxy/runtime-api.js';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import { OutputDirectory } from '../../src/main/output/output-directory.js';
import { loadManifests } from '../../src/main/sources/manifest/manifest-loader.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import { eventually } from '../helpers/eventually.js';
import { ON_CI, SKIP_HAPROXY, freePorts, healthy, httpGet, skipNotice } from '../helpers/haproxy-harness.js';
import { silentLogger } from '../helpers/loggers.js';

skipNotice('test/e2e/haproxy-process.test.ts');

let root: string;
let counter = 0;
let fdLimit: FdLimit;
const running: HaproxyProcess[] = [];
const blockers: Server[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hp-'));
  fdLimit = (await readFdLimit()) ?? { soft: 1_024, hard: 1_024 };
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
  await Promise.all(blockers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

afterAll(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

interface Rendered {
  readonly out: string;
  readonly configFile: string;
  readonly config: string;
  readonly mapsDir: string;
  readonly ports: { readonly http: number; readonly https: number; readonly status: number };
}

/** The example cluster through the default template into a fresh output directory, on loopback ports. */
async function renderExamples(values: Record<string, unknown> = {}): Promise<Rendered> {
  const out = join(root, `o${++counter}`);
  const [http, https, status] = (await freePorts(3)) as [number, number, number];
  const directory = new OutputDirectory(out);
  const { mapsDir, filesDir, certsDir, configFile } = directory.paths;
  const set = await loadTemplateSet(undefined, {
    bindAddress: '127.0.0.1',
    httpPort: http,
    httpsPort: https,
    statusPort: status,
    runtimeSocket: join(out, 'run', 'admin.sock'),
    mapsDir,
    filesDir,
    certsDir,
    ...values,
  });
  const stores = new StoreProvider(set.stores);
  for (const { store, object } of (await loadManifests(EXAMPLES_DIR, set.stores)).objects) stores.store(store).upsert(object);
  const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
  await directory.write(result.haproxyConfig, result.auxiliaryFiles);
  return { out, configFile, config: result.haproxyConfig, mapsDir, ports: { http, https, status } };
}

function supervise(rendered: Rendered, options: Partial<HaproxyProcessOptions> = {}): HaproxyProcess {
  const haproxy = HaproxyProcess.forOutputDirectory(rendered.out, { stdout: 'ignore', logger: silentLogger(), ...options });
  running.push(haproxy);
  return haproxy;
}

async function started(rendered: Rendered, options: Partial<HaproxyProcessOptions> = {}): Promise<HaproxyProcess> {
  const haproxy = supervise(rendered, options);
  await haproxy.start();
  expect(await healthy(rendered.ports.status)).toBe('ok');
  return haproxy;
}

/** Rewrites the config on disk (what a deployer does before a reload). */
async function editConfig(rendered: Rendered, edit: (config: string) => string): Promise<void> {
  const text = edit(await readFile(rendered.configFile, 'utf8'));
  await writeFile(rendered.configFile, text);
}

const healthzSays = (body: string) => (config: string) => config.replace('string ok if { path /healthz }', `string ${body} if { path /healthz }`);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function occupy(port: number): Promise<void> {
  const server = createServer();
  blockers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
}

describe.skipIf(SKIP_HAPROXY)('a supervised HAProxy (master-worker)', () => {
  it.runIf(ON_CI)('finds HAProxy installed when CI=true', () => {
    expect(SKIP_HAPROXY, `CI=true requires a runnable HAProxy (${haproxyBinary()})`).toBe(false);
  });

  it('starts the default template output for the example cluster, with maxconn derived from the descriptor limit', async () => {
    const rendered = await renderExamples();
    expect(rendered.config).not.toMatch(/^\s*maxconn /m);
    expect(rendered.config).toContain(`fd-hard-limit ${DEFAULT_FD_HARD_LIMIT}\n`);
    const verdict = await checkConfigFile(rendered.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await started(rendered);
    expect((await stat(haproxy.runDir)).mode & 0o777).toBe(0o700);
    const info = (await haproxy.runtimeApi.send('show info')).output;
    const shape = fdShapeOfConfig(rendered.config);
    expect(shape).toMatchObject({ statsSockets: 1, threads: defaultThreads() });
    expect(info).toContain(`\nMaxconn: ${derivedMaxconn(fdLimit, shape, DEFAULT_FD_HARD_LIMIT)}\n`);
    expect(info).toContain(`\nNbthread: ${shape.threads}\n`);
  });

  it('refuses a maxconn that cannot fit the descriptor limit before starting, with the count HAProxy itself asks for', async () => {
    const shape = fdShapeOfConfig((await renderExamples()).config);
    const largest = derivedMaxconn(fdLimit, shape, DEFAULT_FD_HARD_LIMIT);
    const tooMany = await renderExamples({ maxconn: largest + 1 });
    const needed = descriptorsNeeded(largest + 1, shape);
    // haproxy -c has no objection: the limit only bites when HAProxy runs.
    expect((await checkConfigFile(tooMany.configFile)).ok).toBe(true);
    const haproxy = supervise(tooMany);
    await expect(haproxy.start()).rejects.toMatchObject({
      code: 'FD_LIMIT_EXCEEDED',
      needed,
      message: expect.stringMatching(new RegExp(`^maxconn ${largest + 1} needs ${needed} file descriptors .* set maxconn to at most ${largest}`, 'i')),
    });
    expect(haproxy.pid).toBeUndefined();
    await expect(httpGet(tooMany.ports.status, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    // Started by hand, HAProxy refuses it with exactly that count.
    const stderr = await new Promise<string>((resolve) => {
      const args = ['-W', '-S', join(tooMany.out, 'manual.sock'), '-f', tooMany.configFile];
      execFile(haproxyBinary(), args, { timeout: 10_000 }, (_error, _stdout, err) => resolve(err));
    });
    expect(stderr).toContain(`Cannot raise FD limit to ${needed}`);
    // One connection fewer fits, and starts.
    await started(await renderExamples({ maxconn: largest }));
  });

  it("parses the master CLI's show proc: the supervised master and its one worker, no reloads yet", async () => {
    const haproxy = await started(await renderExamples());
    const snapshot = await haproxy.masterCli.showProc();
    expect(snapshot.master).toMatchObject({ pid: haproxy.pid, reloads: 0, failedReloads: 0, version: expect.stringMatching(/^2\.\d+/) });
    expect(snapshot.workers).toHaveLength(1);
    expect(snapshot.workers[0]).toMatchObject({ reloads: 0 });
    expect(snapshot.oldWorkers).toEqual([]);
    const stat = await readFile(`/proc/${snapshot.workers[0]?.pid}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])).toBe(haproxy.pid);
  });

  it('verifies a reload through the master CLI: the reload count goes up by one and a new worker serves the new config', async () => {
    const rendered = await renderExamples();
    const haproxy = await started(rendered);
    const before = await haproxy.masterCli.showProc();
    await editConfig(rendered, healthzSays('ok-v2'));
    const result = await haproxy.reload();
    expect(result, result.detail).toMatchObject({ ok: true, reloads: before.master.reloads + 1 });
    expect(result.workerPid).not.toBe(before.workers[0]?.pid);
    const after = await haproxy.masterCli.showProc();
    expect(after.master).toMatchObject({ pid: before.master.pid, reloads: before.master.reloads + 1, failedReloads: 0 });
    expect(after.workers.map((w) => w.pid)).toEqual([result.workerPid]);
    expect(await healthy(rendered.ports.status)).toBe('ok-v2');
  });

  it('runs a Runtime API batch after a reload on the new worker, not on the session kept with the old one', async () => {
    const rendered = await renderExamples();
    const haproxy = await started(rendered);
    const workerPid = async (): Promise<number> => Number(/^Pid: (\d+)$/m.exec((await haproxy.runtimeApi.sendBatch(['show info']))[0]?.output ?? '')?.[1]);
    const before = await haproxy.masterCli.showProc();
    expect(await workerPid()).toBe(before.workers[0]?.pid);
    expect(await workerPid()).toBe(before.workers[0]?.pid);
    const result = await haproxy.reload();
    expect(result, result.detail).toMatchObject({ ok: true });
    expect(await workerPid()).toBe(result.workerPid);
  });

  it('reports a reload whose config cannot bind its port as failed, while the old worker keeps serving', async () => {
    const rendered = await renderExamples();
    const haproxy = await started(rendered);
    const before = await haproxy.masterCli.showProc();
    const [taken] = (await freePorts(1)) as [number];
    await occupy(taken);
    await editConfig(rendered, (config) => healthzSays('ok-v2')(config).replace(`127.0.0.1:${rendered.ports.http}\n`, `127.0.0.1:${taken}\n`));
    const result = await haproxy.reload();
    expect(result.ok).toBe(false);
    expect(result.detail).toMatch(/refused the new configuration \(failed reloads: 1\)/);
    expect(result.detail).toMatch(/Address already in use/);
    expect(result.workerPid).toBe(before.workers[0]?.pid);
    const after = await haproxy.masterCli.showProc();
    expect(after.master).toMatchObject({ reloads: before.master.reloads + 1, failedReloads: 1 });
    expect(after.workers.map((w) => w.pid)).toEqual([before.workers[0]?.pid]);
    expect(await httpGet(rendered.ports.status, '/healthz')).toEqual({ status: 200, body: 'ok' });
  });

  it('applies set server, add map and del map through the Runtime API, and treats [err] replies as failures', async () => {
    const rendered = await renderExamples();
    const api = (await started(rendered)).runtimeApi;
    const backend = 'ing_blog_blog_blog_80';
    await api.send(`set server ${backend}/srv3 addr 127.0.0.7 port 8080`);
    await api.send(`set server ${backend}/srv3 state ready`);
    const row = (await api.send(`show servers state ${backend}`)).output.split('\n').find((line) => line.split(' ')[3] === 'srv3');
    const fields = row?.split(' ') ?? [];
    // srv_addr, srv_op_state (2: running) and srv_port, as `show servers state` orders them; the
    // forced-maintenance bit of srv_admin_state is clear (4, "disabled in the config", stays).
    expect([fields[4], fields[5], fields[18]]).toEqual(['127.0.0.7', '2', '8080']);
    expect(Number(fields[6]) & 1).toBe(0);

    const map = `${rendered.mapsDir}/host-exact.map`;
    const key = 'runtime.example.com/x';
    await api.send(`add map ${map} ${cliArg(key)} ${backend}`);
    expect((await api.send(`show map ${map}`)).output).toMatch(new RegExp(`^0x[0-9a-f]+ ${key} ${backend}$`, 'm'));
    await api.send(`del map ${map} ${cliArg(key)}`);
    expect((await api.send(`show map ${map}`)).output).not.toContain(key);

    await expect(api.send('set server no_such_backend/srv1 state ready')).rejects.toMatchObject({
      code: 'HAPROXY_COMMAND_FAILED',
      command: 'set server no_such_backend/srv1 state ready',
      reply: '[err]: No such backend.',
    });
    await expect(api.send(`del map ${map} not-there`)).rejects.toMatchObject({ reply: '[err]: Key not found.' });
    await expect(api.send('frobnicate')).rejects.toMatchObject({ reply: expect.stringMatching(/Unknown command/) });

    // A batch stops at its failure; HAProxy still ran the rest of that connection's commands.
    const batch = [`add map ${map} a.example.com/ ${backend}`, `set weight ${backend}/srv1 abc`, `add map ${map} b.example.com/ ${backend}`];
    await expect(api.sendBatch(batch)).rejects.toMatchObject({ index: 1, executed: 3, reply: '[err]: Empty weight string empty or preceded by garbage' });
    const replies = await api.sendBatch([`set weight ${backend}/srv1 5`, `get weight ${backend}/srv1`, `show map ${map}`]);
    expect(replies[1]?.output).toBe('5 (initial 1)');
    expect(replies[2]?.output).toMatch(/a\.example\.com\/ .*\n.*b\.example\.com\/ /);
  });

  it('restarts a SIGKILLed master with the config on disk and counts the restart', async () => {
    const rendered = await renderExamples();
    const onRestart = vi.fn();
    const haproxy = await started(rendered, { onRestart, backoff: { initialMs: 100 } });
    const killed = haproxy.pid as number;
    await editConfig(rendered, healthzSays('ok-after-restart'));
    process.kill(killed, 'SIGKILL');
    await eventually(() => haproxy.state === 'running' && haproxy.pid !== undefined && haproxy.pid !== killed, 'a new master', 15_000);
    expect(haproxy.restarts).toBe(1);
    expect(onRestart).toHaveBeenCalledExactlyOnceWith({ restarts: 1, exitCode: null, signal: 'SIGKILL', delayMs: 100 });
    expect(await healthy(rendered.ports.status)).toBe('ok-after-restart');
    expect((await haproxy.masterCli.showProc()).master.pid).toBe(haproxy.pid);
  });

  it('waits for a restart under way before it reloads, and reloads the restarted HAProxy', async () => {
    const rendered = await renderExamples();
    const haproxy = await started(rendered, { backoff: { initialMs: 500 } });
    const killed = haproxy.pid as number;
    process.kill(killed, 'SIGKILL');
    await eventually(() => haproxy.state === 'restarting', 'the restart under way');
    await editConfig(rendered, healthzSays('ok-after-reload'));
    const result = await haproxy.reload();
    expect(result, result.detail).toMatchObject({ ok: true, reloads: 1 });
    expect(haproxy.pid).not.toBe(killed);
    expect(await healthy(rendered.ports.status)).toBe('ok-after-reload');
  });

  it('stops HAProxy (master and worker) well within the 10-second shutdown bound', async () => {
    const rendered = await renderExamples();
    const haproxy = await started(rendered);
    const { master, workers } = await haproxy.masterCli.showProc();
    const began = performance.now();
    await haproxy.stop();
    expect(performance.now() - began).toBeLessThan(10_000);
    expect(haproxy.state).toBe('stopped');
    expect(isAlive(master.pid)).toBe(false);
    await eventually(() => !isAlive(workers[0]?.pid as number) || isZombie(workers[0]?.pid as number), 'the worker to exit');
    await expect(httpGet(rendered.ports.status, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('escalates to SIGKILL when a stuck master ignores SIGUSR1 and SIGTERM, still within the bound', async () => {
    const haproxy = await started(await renderExamples(), { softStopMs: 300, killAfterMs: 300 });
    const pid = haproxy.pid as number;
    process.kill(pid, 'SIGSTOP');
    const began = performance.now();
    await haproxy.stop();
    expect(performance.now() - began).toBeLessThan(3_000);
    expect(isAlive(pid)).toBe(false);
  });

  it("reports HAProxy's alert lines when the config cannot start because its port is taken", async () => {
    const rendered = await renderExamples();
    await occupy(rendered.ports.http);
    const haproxy = supervise(rendered);
    await expect(haproxy.start()).rejects.toMatchObject({ code: 'HAPROXY_START_FAILED', message: expect.stringMatching(/cannot bind socket \(Address already in use\)/) });
    expect(haproxy.state).toBe('stopped');
    expect(haproxy.restarts).toBe(0);
  });
});

/** A worker orphaned by a killed master may linger as a zombie where PID 1 does not reap. */
function isZombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

// agent-apply: what one runtime-only apply (one server address moved, as an endpoint change sends
// it) costs a `haptic-reconciler agent` process as deployed: the CLI on 127.0.0.5 with its own
// HAProxy, fed over HTTP with keep-alive. Per apply: the agent's CPU (all its threads, from
// /proc/<pid>/task/*/schedstat, so Linux only; time on the CPU, not waiting for it: the figure
// to compare on a shared machine) and the round trip. The agent is cold at first, as in
// bench:fleet's 15 changes: the first 30 applies get a median of their own.
//   npm run bench:agent-apply -- [--applies N] [--log-level LEVEL]     default 150 applies, info
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent as HttpAgent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from 'commander';
import { benchCommand } from './bench-command.js';
import { median, printTable, sig } from './lib.js';

const CLI = fileURLToPath(new URL('../src/main/cli/cli.ts', import.meta.url));
const ADDRESS = '127.0.0.5';
const TOKEN = 'bench-token';
const LEADER = { mapsDir: '/leader/out/maps', filesDir: '/leader/out/files', certsDir: '/leader/out/certs', runDir: '/leader/out/run' };
const SERVERS = 50;

const command = benchCommand('bench:agent-apply', "one agent process's CPU and round trip per runtime-only apply")
  .option('--applies <n>', 'runtime-only applies after the full sync', (text) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 30) throw new InvalidArgumentError(`expected an integer of at least 30, got ${JSON.stringify(text)}`);
    return value;
  }, 150)
  .option('--log-level <level>', "the agent's LOG_LEVEL", 'info')
  .parse();
const { applies: APPLIES, logLevel } = command.opts<{ applies: number; logLevel: string }>();

const root = await mkdtemp(join(tmpdir(), 'haptic-agent-apply-'));
const port = 20_000 + Math.floor(Math.random() * 20_000);
await writeFile(join(root, 'token'), `${TOKEN}\n`, { mode: 0o600 });
const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'agent', '--dir', join(root, 'agent'), '--listen', `${ADDRESS}:${port}`, '--token-file', join(root, 'token'), '--bind-address', ADDRESS], {
  stdio: 'ignore',
  env: { ...process.env, LOG_LEVEL: logLevel },
});
const pool = new HttpAgent({ keepAlive: true });

function exchange(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers = { authorization: `Bearer ${TOKEN}`, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': payload.length }) };
  return new Promise((resolve, reject) => {
    const sent = request({ host: ADDRESS, port, method, path, agent: pool, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    sent.on('error', reject);
    sent.end(payload);
  });
}

/** The agent's CPU so far, in ms: the run time of each of its threads. */
function agentCpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return ns / 1e6;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

try {
  const deadline = Date.now() + 60_000;
  while ((await exchange('GET', '/healthz').catch(() => undefined))?.status !== 200) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('the agent did not start within 60 s');
    await pause(100);
  }
  // A render shaped like a small cluster's: 12 maps of 200 hosts, one backend of 50 servers.
  const maps = Object.fromEntries(Array.from({ length: 12 }, (_, m) => [`m${m}.map`, Array.from({ length: 200 }, (_, k) => `host${k}.ns${m}.test be_shop\n`).join('')]));
  const servers = Array.from({ length: SERVERS }, (_, k) => `    server s${k} 127.0.0.1:${9000 + k}`);
  const config = ['global', `    stats socket ${LEADER.runDir}/admin.sock mode 600 level admin`, 'defaults', '    mode http', '    timeout connect 2s', '    timeout client 5s', '    timeout server 5s',
    'frontend web', `    bind *:${port + 1}`, `    use_backend %[req.hdr(host),lower,map(${LEADER.mapsDir}/m0.map,be_shop)]`, 'backend be_shop', ...servers, ''].join('\n');
  let sequence = 0;
  const apply = (body: Record<string, unknown>): Promise<{ status: number; text: string }> => exchange('POST', '/v1/apply', { epoch: 1, sequence: ++sequence, paths: LEADER, runtimeOps: [], reload: false, ...body });
  const first = await apply({ checksum: 'c0', baseChecksum: null, full: true, config, files: { maps }, reload: true });
  if (first.status !== 200) throw new Error(`the full sync was answered ${first.status}: ${first.text}`);
  const cpu: number[] = [];
  const roundTrip: number[] = [];
  for (let i = 0; i < APPLIES; i++) {
    // Apart, as endpoint changes come: the agent is idle when each arrives.
    await pause(40);
    const before = agentCpuMs(child.pid as number);
    const started = performance.now();
    // The render's files are unchanged: the runtime operation is the whole apply, as the leader sends it.
    const answer = await apply({ checksum: 'c0', baseChecksum: 'c0', runtimeOps: [{ type: 'server-addr', backend: 'be_shop', server: `s${i % SERVERS}`, address: '127.0.0.1', port: 10_000 + i }] });
    roundTrip.push(performance.now() - started);
    if (answer.status !== 200) throw new Error(`apply ${i + 1} was answered ${answer.status}: ${answer.text}`);
    // What the apply costs after its answer (the log line, the garbage) is counted too.
    await pause(40);
    cpu.push(agentCpuMs(child.pid as number) - before);
  }
  printTable(`one runtime-only apply, agent process at LOG_LEVEL=${logLevel} (${APPLIES} applies)`, [
    {
      agentCpuP50Ms: sig(median(cpu)),
      agentCpuFirst30P50Ms: sig(median(cpu.slice(0, 30))),
      roundTripP50Ms: sig(median(roundTrip)),
      roundTripFirst30P50Ms: sig(median(roundTrip.slice(0, 30))),
    },
  ]);
} finally {
  child.kill('SIGTERM');
  if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  pool.destroy();
  await rm(root, { recursive: true, force: true });
}

// What checking tenant values costs: the regular-expression check through HAProxy's own PCRE2
// (a new pattern, a batch of new patterns, a cached one), and what one basic-auth password check
// costs HAProxy per crypt scheme and work factor, measured with real requests against a real
// HAProxy (one thread) whose userlists hold one hash of each kind: the time per request with the
// right password, less the time per request without authentication, in wall-clock time and in
// HAProxy's own CPU time (which a busy host does not inflate).
//   npx tsx bench/value-checks.ts
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { haproxyPcreEngine, pcreProblems, setPcreEngine } from '../src/worker/routing/annotations/pcre-engine.js';
import { parsePathRewrite } from '../src/worker/routing/annotations/rewrite.js';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log('usage: npx tsx bench/value-checks.ts   (needs haproxy on PATH or $HAPROXY_BIN)');
  process.exit(0);
}

/** The password `secret` in each scheme, as `openssl passwd` / crypt(3) writes it. */
const HASHES: readonly (readonly [string, string])[] = [
  ['MD5-crypt $1$', '$1$saltsalt$9xy1btjgzLYfb7hivXtC//'],
  ['SHA-256 rounds=1000', '$5$rounds=1000$saltsalt$eKLZU9t9OoPWrqOQsoTIKG0aYkZ5rGOoOQhiIvoSWX2'],
  ['SHA-256 rounds=5000 (cap)', '$5$rounds=5000$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA'],
  ['SHA-512 rounds=1000', '$6$rounds=1000$saltsalt$LAV5VE5Y7w1d73x1mFNspYWUpazfmwv2SoepNXNKJ/otop/Zok96Hr8Q13LEv0DRY/x8v0/crpIjl8NJSAqXV/'],
  ['SHA-512 rounds=5000 (cap)', '$6$rounds=5000$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1'],
  ['SHA-512 rounds=50000 (refused)', '$6$rounds=50000$saltsalt$7gbR05y.uvOwUDejqr39kOFo1./Wba9ZbuMT/8YAvmpCrjGpTmLDweAcoz8p43lkh2KyaW53DuTKzn3OEt5wb.'],
  ['bcrypt $2b$ cost 4', '$2b$04$abcdefghijklmnopqrstuu2r9OfJnfCsdneAXAGHnS4UpFFP8WIrW'],
  ['bcrypt $2b$ cost 5 (cap)', '$2b$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a'],
  ['bcrypt $2b$ cost 8 (refused)', '$2b$08$abcdefghijklmnopqrstuuKxCcvB7KZ7.BpDoK0bh6qM7Dl1/xiJa'],
];
const REQUESTS = 200;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function regexCosts(): void {
  setPcreEngine(haproxyPcreEngine());
  const run = `${process.pid}-${Date.now()}`;
  const single: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    pcreProblems([`^/single-${run}-${i}/(.*)$`]);
    single.push(performance.now() - started);
  }
  const batch: number[] = [];
  for (let i = 0; i < 10; i++) {
    const rules = Array.from({ length: 16 }, (_, j) => `^/batch-${run}-${i}-${j}/(.*) /\\1`).join('\n');
    const started = performance.now();
    parsePathRewrite(rules);
    batch.push(performance.now() - started);
  }
  const many: number[] = [];
  for (let i = 0; i < 5; i++) {
    const patterns = Array.from({ length: 256 }, (_, j) => `^https://o${j}-${run}-${i}\\.example(:\\d+)?$`);
    const started = performance.now();
    pcreProblems(patterns);
    many.push(performance.now() - started);
  }
  const cachedPattern = `^/single-${run}-0/(.*)$`;
  const hits = 100_000;
  const started = performance.now();
  for (let i = 0; i < hits; i++) pcreProblems([cachedPattern]);
  const hit = ((performance.now() - started) / hits) * 1000;
  console.log('regex check through haproxy -c (median):');
  console.log(`  one new pattern:                 ${median(single).toFixed(1)} ms`);
  console.log(`  path-rewrite of 16 new patterns: ${median(batch).toFixed(1)} ms (one run)`);
  console.log(`  256 new patterns (one run):      ${median(many).toFixed(1)} ms`);
  console.log(`  cached pattern:                  ${hit.toFixed(2)} µs`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function get(agent: Agent, port: number, path: string, auth: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = auth ? { authorization: `Basic ${Buffer.from('u:secret').toString('base64')}` } : {};
    const req = request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Wall-clock and HAProxy CPU milliseconds per request. */
async function perRequestMs(agent: Agent, port: number, path: string, auth: boolean, count: number, pid: number): Promise<{ wall: number; cpu: number }> {
  const status = await get(agent, port, path, auth);
  if (status !== 200) throw new Error(`${path} answered ${status}`);
  const started = performance.now();
  const cpuStarted = cpuMs(pid);
  for (let i = 0; i < count; i++) await get(agent, port, path, auth);
  return { wall: (performance.now() - started) / count, cpu: (cpuMs(pid) - cpuStarted) / count };
}

async function cryptCosts(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'haptic-bench-crypt-'));
  const port = await freePort();
  const config = [
    'global',
    '  nbthread 1',
    'defaults',
    '  mode http',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout connect 5s',
    ...HASHES.flatMap((entry, i) => [`userlist u${i}`, `  user u password ${entry[1]}`]),
    'frontend f',
    `  bind 127.0.0.1:${port}`,
    ...HASHES.map((_entry, i) => `  http-request deny deny_status 401 if { path /s${i} } !{ http_auth(u${i}) }`),
    '  http-request return status 200 content-type text/plain string ok',
    '',
  ].join('\n');
  await writeFile(join(dir, 'haproxy.cfg'), config);
  const loadStarted = performance.now();
  const haproxy = spawn(process.env.HAPROXY_BIN ?? 'haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; ; i++) {
      try {
        await get(agent, port, '/', false);
        break;
      } catch (error) {
        if (i > 200) throw error;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    console.log(`crypt cost per password check in HAProxy (1 thread, ${REQUESTS} requests each; HAProxy loaded in ${(performance.now() - loadStarted).toFixed(0)} ms):`);
    const pid = haproxy.pid as number;
    const baseline = await perRequestMs(agent, port, '/', false, REQUESTS, pid);
    console.log(`  ${'no authentication (baseline)'.padEnd(32)} ${baseline.wall.toFixed(3)} ms per request, ${baseline.cpu.toFixed(3)} ms of HAProxy CPU`);
    for (const [i, [label]] of HASHES.entries()) {
      const ms = await perRequestMs(agent, port, `/s${i}`, true, REQUESTS, pid);
      console.log(`  ${label.padEnd(32)} ${(ms.wall - baseline.wall).toFixed(3)} ms per check (wall), ${(ms.cpu - baseline.cpu).toFixed(3)} ms of HAProxy CPU`);
    }
  } finally {
    agent.destroy();
    haproxy.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

regexCosts();
await cryptCosts();

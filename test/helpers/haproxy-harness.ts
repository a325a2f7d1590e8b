// Real HAProxy for e2e tests: whether it can run here (CI=true makes it mandatory), free loopback
// ports, a plain HTTP GET, and `startHaproxy(configFile)`, which starts a config in master-worker
// mode through HaproxyProcess, waits until its status port answers /healthz, and stops it.
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { haproxyBinary, haproxyVersion } from '../../src/main/haproxy/haproxy-check.js';
import { HaproxyProcess, type HaproxyProcessOptions } from '../../src/main/haproxy/haproxy-process.js';
import { eventually } from './eventually.js';
import { TAKEN_PORTS } from './test-ports.js';
import { silentLogger } from './loggers.js';

export const ON_CI = process.env.CI === 'true';
export const HAPROXY_VERSION = await haproxyVersion();
/** Skip real-HAProxy tests only when HAProxy is missing and CI is not 'true'. */
export const SKIP_HAPROXY = !ON_CI && HAPROXY_VERSION === null;

export function skipNotice(file: string): void {
  if (!SKIP_HAPROXY) return;
  console.warn(
    `NOTICE: HAProxy (${haproxyBinary()}) cannot be run here; skipping the real-HAProxy tests in ${file}. ` +
      'Install HAProxy (or set HAPROXY_BIN) to run them; with CI=true they are mandatory.',
  );
}

/**
 * `count` distinct loopback ports that were free a moment ago (all held at once, then released),
 * none of them a port this process handed out or an echo backend holds (see test-ports.ts).
 */
export async function freePorts(count: number): Promise<number[]> {
  const held: ReturnType<typeof createServer>[] = [];
  const ports: number[] = [];
  while (ports.length < count) {
    const server = await new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const candidate = createServer();
      candidate.once('error', reject);
      candidate.listen(0, '127.0.0.1', () => resolve(candidate));
    });
    held.push(server);
    const port = (server.address() as AddressInfo).port;
    if (!TAKEN_PORTS.has(port)) ports.push(port);
  }
  await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  for (const port of ports) TAKEN_PORTS.add(port);
  return ports;
}

export interface HttpReply {
  readonly status: number;
  readonly body: string;
}

/** GET http://127.0.0.1:<port><path> on a fresh connection. */
export function httpGet(port: number, path: string, timeoutMs = 2_000): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET :${port}${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Waits until :<port>/healthz answers 200 and returns its body. */
export async function healthy(port: number, timeoutMs = 10_000): Promise<string> {
  const reply = await eventually(async () => {
    const r = await httpGet(port, '/healthz');
    return r.status === 200 ? r : undefined;
  }, `200 from 127.0.0.1:${port}/healthz`, timeoutMs);
  return reply.body;
}

export interface RunningHaproxy {
  readonly process: HaproxyProcess;
  stop(): Promise<void>;
}

export interface StartHaproxyOptions extends Partial<HaproxyProcessOptions> {
  /** The status frontend's port; read from the config's `frontend status` bind when omitted. */
  readonly statusPort?: number;
}

/**
 * Starts `configFile` in a real HAProxy (sockets in `<its dir>/run` unless `runDir` is given)
 * and waits for /healthz on the status port. Rejects, with nothing left running, when it does
 * not come up.
 */
export async function startHaproxy(configFile: string, options: StartHaproxyOptions = {}): Promise<RunningHaproxy> {
  const { statusPort, ...rest } = options;
  const haproxy = new HaproxyProcess({ configFile, runDir: join(dirname(configFile), 'run'), stdout: 'ignore', logger: silentLogger(), ...rest });
  try {
    await haproxy.start();
    const port = statusPort ?? (await statusPortOf(configFile));
    if (port !== undefined) await healthy(port);
  } catch (error) {
    await haproxy.stop();
    throw error;
  }
  return { process: haproxy, stop: () => haproxy.stop() };
}

/** Starts the config, waits for it to serve, stops it: "this config really runs". */
export async function provesToRun(configFile: string, options: StartHaproxyOptions = {}): Promise<void> {
  const running = await startHaproxy(configFile, options);
  await running.stop();
}

async function statusPortOf(configFile: string): Promise<number | undefined> {
  const match = /^frontend status\n\s+bind\s+\S*:(\d+)/m.exec(await readFile(configFile, 'utf8'));
  return match === null ? undefined : Number(match[1]);
}

// A versioned replacement of a first-match map, as LocalHaproxyTarget.applyRuntime sends it to a
// real HAProxy 2.6: thousands of entries in several `add map @<ver> <<` payload commands (values
// with spaces, an entry that goes as its own line), then `commit map`. Requests to local echo
// backends prove the new routes serve after the commit, in the new first-match order; a refused
// entry leaves the old map serving. With CI=true these tests always run; elsewhere they are
// skipped, with a notice, without HAProxy.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalHaproxyTarget } from '../../src/main/haproxy/local-haproxy-target.js';
import type { RuntimeApi } from '../../src/main/haproxy/runtime-api.js';
import { OutputDirectory } from '../../src/main/output/output-directory.js';
import type { MapReplaceOp } from '../../src/main/deploy/runtime-ops.js';
import { send } from '../helpers/e2e-client.js';
import { startEcho, type EchoServer } from '../helpers/e2e-echo.js';
import { SKIP_HAPROXY, freePorts, skipNotice, startHaproxy, type RunningHaproxy } from '../helpers/haproxy-harness.js';
import { silentLogger } from '../helpers/loggers.js';

skipNotice('test/e2e/map-replace.test.ts');

const ENTRIES = 3_000;
let root: string;
let echoes: EchoServer[] = [];
const running: RunningHaproxy[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mr-'));
  echoes = await Promise.all([startEcho('be_old'), startEcho('be_new')]);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  await Promise.all(echoes.map((e) => e.kill()));
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

interface Started {
  readonly target: LocalHaproxyTarget;
  readonly map: string;
  readonly port: number;
  readonly api: RuntimeApi;
}

/**
 * HAProxy whose frontend looks the path up in a first-match prefix map (`map_beg`): the value's
 * first word names the backend, and the whole value goes to the backend as `x-route`.
 */
async function started(dir: string, mapText: string): Promise<Started> {
  const [port, status] = (await freePorts(2)) as [number, number];
  const map = join(dir, 'route.map');
  await writeFile(map, mapText);
  const backend = (echo: EchoServer): string[] => [`backend ${echo.name}`, `  server s1 ${echo.host}:${echo.port}`];
  const config = [
    'global',
    `  stats socket ${join(dir, 'run', 'admin.sock')} mode 600 level admin`,
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 5s',
    '  timeout server 5s',
    'frontend status',
    `  bind 127.0.0.1:${status}`,
    '  http-request return status 200 content-type text/plain string ok if { path /healthz }',
    'frontend http',
    `  bind 127.0.0.1:${port}`,
    `  http-request set-var(txn.route) path,map_beg(${map})`,
    '  http-request set-header x-route %[var(txn.route)] if { var(txn.route) -m found }',
    `  use_backend %[var(txn.route),word(1,' ')] if { var(txn.route) -m found }`,
    '  default_backend no_route',
    'backend no_route',
    '  http-request return status 404 content-type text/plain string no-route',
    ...echoes.flatMap(backend),
    '',
  ].join('\n');
  const configFile = join(dir, 'haproxy.cfg');
  await writeFile(configFile, config);
  const haproxy = await startHaproxy(configFile, { statusPort: status });
  running.push(haproxy);
  const target = new LocalHaproxyTarget({ output: new OutputDirectory(join(dir, 'out')), haproxy: haproxy.process, logger: silentLogger() });
  return { target, map, port, api: haproxy.process.runtimeApi };
}

const oldMap = (): string => Array.from({ length: ENTRIES }, (_, i) => `/app${i}/ be_old old route ${i}\n`).join('') + '/x/ be_old x first\n/x/a/ be_new never reached\n';

/** The same paths to the other backend, values with spaces, and `/x/a/` now before `/x/`. */
function newEntries(): [string, string][] {
  const entries: [string, string][] = Array.from({ length: ENTRIES }, (_, i) => [`/app${i}/`, `be_new new route ${i} with spaces`]);
  entries.push(['/x/a/', 'be_new a first'], ['/x/', 'be_old x second'], ['/lead/', ' be_new leading blank']);
  return entries;
}

describe.skipIf(SKIP_HAPROXY)('a first-match map replaced over the Runtime API', () => {
  it('serves the new routes, in the new order, after one replacement of thousands of entries in several payloads', async () => {
    const dir = await mkdtemp(join(root, 'a-'));
    const { target, map, port, api } = await started(dir, oldMap());
    const before = await send({ port, host: 'any.example', path: '/app1234/page' });
    expect([before.status, before.echo?.name, before.echo?.headers['x-route']]).toEqual([200, 'be_old', 'be_old old route 1234']);

    const entries = newEntries();
    const op: MapReplaceOp = { type: 'map-replace', file: map, entries };
    const bytes = entries.reduce((n, [k, v]) => n + Buffer.byteLength(`${k} ${v}\n`), 0);
    expect(bytes).toBeGreaterThan(3 * api.maxPayloadBytes);
    await expect(target.applyRuntime([op])).resolves.toEqual({ applied: entries.length + 2 });

    for (const i of [0, 1234, ENTRIES - 1]) {
      const reply = await send({ port, host: 'any.example', path: `/app${i}/page` });
      expect([reply.status, reply.echo?.name, reply.echo?.headers['x-route']]).toEqual([200, 'be_new', `be_new new route ${i} with spaces`]);
    }
    const shadowed = await send({ port, host: 'any.example', path: '/x/a/b' });
    expect([shadowed.status, shadowed.echo?.name, shadowed.echo?.headers['x-route']]).toEqual([200, 'be_new', 'be_new a first']);
    const x = await send({ port, host: 'any.example', path: '/x/other' });
    expect([x.status, x.echo?.name, x.echo?.headers['x-route']]).toEqual([200, 'be_old', 'be_old x second']);
    // The entry whose value starts with a blank went as its own escaped line and kept the blank.
    expect((await api.send(`show map ${map}`)).output).toMatch(/^0x[0-9a-f]+ \/lead\/ {2}be_new leading blank$/m);
    const none = await send({ port, host: 'any.example', path: '/nothing' });
    expect([none.status, none.body]).toEqual([404, 'no-route']);
  });

  it('leaves the old map serving when HAProxy refuses an entry of the replacement', async () => {
    const dir = await mkdtemp(join(root, 'b-'));
    const { target, map, port } = await started(dir, oldMap());
    // An empty value: HAProxy refuses `add map` with no value, after the payloads before it went in.
    const entries: [string, string][] = [...newEntries(), ['/bad/', '']];
    await expect(target.applyRuntime([{ type: 'map-replace', file: map, entries }])).rejects.toMatchObject({ name: 'RuntimeCommandError', reply: expect.stringMatching(/^\[err\]/) });
    const reply = await send({ port, host: 'any.example', path: '/app7/page' });
    expect([reply.status, reply.echo?.name, reply.echo?.headers['x-route']]).toEqual([200, 'be_old', 'be_old old route 7']);
  });
});

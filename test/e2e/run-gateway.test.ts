// `haptic-reconciler run --manifests DIR --haproxy` with Gateway API manifests: the real CLI
// starts a real HAProxy whose Gateway listener serves an HTTPRoute; an EndpointSlice edit on
// the route's backend moves traffic through the Runtime API with no reload (same worker PID and
// reload count in `show proc`), as for an Ingress backend, and so does one behind a route with a
// header filter whose backend's Service is in another namespace (through a ReferenceGrant); a new
// HTTPRoute needs a reload.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MasterCli } from '../../src/main/haproxy/master-cli.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { endpointSlice, service } from '../helpers/cluster.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { eventually } from '../helpers/eventually.js';
import { killWithHaproxy, whenServing } from '../helpers/run-haproxy.js';
import { gateway, gatewayClass, httpRoute, ref, referenceGrant } from '../helpers/gateway-objects.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/run-gateway.test.ts');

let dir: string;
let manifests: string;
let controller: CliProcess;
let master: MasterCli;
let listenerPort: number;
const fleet = new EchoFleet();
let first: EchoServer;
let second: EchoServer;

const write = (file: string, ...objects: KubeObject[]): Promise<void> => writeFile(join(manifests, file), objects.map((o) => stringify(o)).join('---\n'));
const served = async (host: string, path = '/'): Promise<string | undefined> => (await send({ port: listenerPort, host, path, timeoutMs: 2000 }).catch(() => undefined))?.echo?.name;
const proc = () => eventually(() => master.showProc(), 'show proc on the master socket', 10_000);
const slice = (server: EchoServer) => endpointSlice('shop', 'web', [server.host], { name: 'http', port: server.port });
const commonSlice = (server: EchoServer) => endpointSlice('common', 'api', [server.host], { name: 'http', port: server.port });
const tagged = () => send({ port: listenerPort, host: 'tagged.test', timeoutMs: 2000 }).catch(() => undefined);

describe.skipIf(SKIP_HAPROXY)('run --manifests --haproxy with Gateway API objects', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-gateway-'));
    manifests = join(dir, 'manifests');
    const out = join(dir, 'out');
    await mkdir(manifests);
    first = await fleet.start('web-1', '127.0.0.2');
    second = await fleet.start('web-2', '127.0.0.3');
    let httpPort: number, httpsPort: number, statusPort: number;
    [httpPort, httpsPort, statusPort, listenerPort] = (await freePorts(4)) as [number, number, number, number];
    await write('gateway.yaml', gatewayClass(), gateway('shop', 'edge', [{ name: 'http', port: listenerPort }]), service('shop', 'web'));
    await write('route.yaml', httpRoute('shop', 'web', { parentRefs: [{ name: 'edge' }], hostnames: ['shop.test'], rules: [{ backendRefs: [ref('web')] }] }));
    await write('slices.yaml', slice(first));
    const tag = [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Route', value: 'tagged' }] } }];
    await write('tagged.yaml', service('common', 'api'), referenceGrant('common', 'shop-routes', 'shop'), httpRoute('shop', 'tagged', { parentRefs: [{ name: 'edge' }], hostnames: ['tagged.test'], rules: [{ filters: tag, backendRefs: [ref('api', { namespace: 'common' })] }] }));
    await write('common-slices.yaml', commonSlice(first));
    controller = startCli([
      'run', '--manifests', manifests, '--out', out, '--haproxy', '--metrics-addr', '127.0.0.1:0', '--threads', '1',
      '--min-deployment-interval', '1500',
      '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${httpPort}`, '--set', `httpsPort=${httpsPort}`, '--set', `statusPort=${statusPort}`,
      '--set', 'allowLoopbackEndpoints=true',
    ]);
    ({ master } = await whenServing(controller, out));
  }, 120_000);

  afterAll(async () => {
    await killWithHaproxy(controller, master);
    await fleet.stopAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the HTTPRoute on its Gateway listener', async () => {
    await eventually(async () => (await served('shop.test')) === 'web-1', 'the route served', 10_000);
    expect((await send({ port: listenerPort, host: 'other.test', timeoutMs: 2000 })).status).toBe(404);
  });

  it('moves traffic on an EndpointSlice edit of a route backend through the Runtime API, without a reload', async () => {
    const before = await proc();
    await write('slices.yaml', slice(second));
    await eventually(async () => (await served('shop.test')) === 'web-2', 'traffic on web-2', 10_000, 10);
    const after = await proc();
    expect(after.master.reloads).toBe(before.master.reloads);
    expect(after.workers.map((w) => w.pid)).toEqual(before.workers.map((w) => w.pid));
  });

  it('moves traffic on an EndpointSlice edit behind a filtered route to another namespace without a reload, its filter kept', async () => {
    await eventually(async () => (await tagged())?.echo?.name === 'web-1', 'the tagged route served', 10_000);
    const before = await proc();
    await write('common-slices.yaml', commonSlice(second));
    await eventually(async () => (await tagged())?.echo?.name === 'web-2', 'tagged traffic on web-2', 10_000, 10);
    const reply = await tagged();
    expect(reply?.status).toBe(200);
    expect(reply?.echo?.headers['x-route']).toBe('tagged');
    const after = await proc();
    expect(after.master.reloads).toBe(before.master.reloads);
    expect(after.workers.map((w) => w.pid)).toEqual(before.workers.map((w) => w.pid));
  });

  it('serves a new HTTPRoute after a reload', async () => {
    const before = await proc();
    await write('more.yaml', httpRoute('shop', 'api', { parentRefs: [{ name: 'edge' }], hostnames: ['api.test'], rules: [{ backendRefs: [ref('web')] }] }));
    await eventually(async () => (await served('api.test')) === 'web-2', 'the new route served', 20_000);
    expect((await proc()).master.reloads).toBeGreaterThan(before.master.reloads);
  });
});

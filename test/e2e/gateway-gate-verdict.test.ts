// `run --kubeconfig --haproxy` with an HTTPRoute value only HAProxy can judge: the template set
// writes an HTTPRoute annotation raw into its backends (test/helpers/raw-annotation-templates.ts;
// no object check reads it). A pattern PCRE2 refuses makes `haproxy -c` refuse the config at the
// route's backend; the render gate traces the refusal to that HTTPRoute (not to an Ingress, nor
// to its whole namespace), takes it out, and the rest deploys: the other routes of its own
// namespace and another tenant's routes, created or edited afterwards, are served (real requests
// through HAProxy), and the refused route gets a fresh chance once edited.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, service } from '../helpers/cluster.js';
import { send, type Reply } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { eventually } from '../helpers/eventually.js';
import { gateway, gatewayClass, httpRoute } from '../helpers/gateway-objects.js';
import { GatewayRun } from '../helpers/gateway-run.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';
import { RAW_DENY_ANNOTATION, rawAnnotationTemplateSet } from '../helpers/raw-annotation-templates.js';

skipNotice('test/e2e/gateway-gate-verdict.test.ts');

/** JavaScript accepts it; PCRE2 refuses it ("invalid range in character class"). */
const PCRE_REFUSED = '[\\d-z]';

let dir: string;
let run: GatewayRun;
const echoes = new EchoFleet();
const port = { shop: 0, evil: 0 };
let shopWeb: EchoServer;
let evilWeb: EchoServer;

const backendObjects = (ns: string, server: EchoServer): KubeObject[] => [service(ns, 'web'), endpointSlice(ns, 'web', [server.host], { name: 'http', port: server.port })];

function route(ns: string, name: string, host: string, denyPath?: string, path = '/'): KubeObject {
  const annotations = denyPath === undefined ? {} : { [RAW_DENY_ANNOTATION]: denyPath };
  return httpRoute(ns, name, { parentRefs: [{ name: 'gw' }], hostnames: [host], rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: 'web', port: 80 }] }] }, { annotations });
}

const get = (ns: keyof typeof port, host: string, path = '/'): Promise<Reply | undefined> => send({ port: port[ns], host, path, timeoutMs: 2000 }).catch(() => undefined);
const status = async (ns: keyof typeof port, host: string, path = '/'): Promise<number | undefined> => (await get(ns, host, path))?.status;
/** A series' value; 0 when absent (a gauge without rejections has no series). */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(`http://${run.metrics}/metrics`)).text();
  return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
}
const REFUSED_ROUTES = 'haptic_rejections{kind="HTTPRoute",scope="object"}';

describe.skipIf(SKIP_HAPROXY)('run --kubeconfig --haproxy: HAProxy refuses an HTTPRoute', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-gate-verdict-'));
    const templates = join(dir, 'templates.yaml');
    await writeFile(templates, await rawAnnotationTemplateSet());
    shopWeb = await echoes.start('shop-web', '127.0.0.2');
    evilWeb = await echoes.start('evil-web', '127.0.0.3');
    [port.shop, port.evil] = (await freePorts(2)) as [number, number];
    run = await GatewayRun.start('gateway-gate-verdict', [
      gatewayClass(),
      gateway('shop', 'gw', [{ name: 'http', port: port.shop }]),
      gateway('evil', 'gw', [{ name: 'http', port: port.evil }]),
      ...backendObjects('shop', shopWeb),
      ...backendObjects('evil', evilWeb),
      route('shop', 'web', 'shop.test', '^/private'),
      route('evil', 'good', 'good.test'),
    ], ['--templates', templates]);
  }, 120_000);

  afterAll(async () => {
    await run?.stop();
    await echoes.stopAll();
    await rm(dir, { recursive: true, force: true });
  });

  it("serves the route's raw annotation as HAProxy reads it", async () => {
    await eventually(async () => (await get('shop', 'shop.test'))?.echo?.name === 'shop-web', 'shop.test served by its route', 30_000);
    expect(await status('shop', 'shop.test', '/private/x')).toBe(403);
    await eventually(async () => (await get('evil', 'good.test'))?.echo?.name === 'evil-web', 'good.test served by its route', 30_000);
  });

  it('rejects only the HTTPRoute HAProxy refuses; routes of its namespace and of another tenant, created and edited afterwards, are served', async () => {
    const refusedBefore = await metric('haptic_rendergate_verdicts_total{verdict="refused"}');
    run.apply(route('evil', 'bad', 'bad.test', PCRE_REFUSED));
    await eventually(async () => (await metric('haptic_rendergate_verdicts_total{verdict="refused"}')) > refusedBefore, 'the gate refusing the render', 30_000);
    await eventually(async () => (await metric(REFUSED_ROUTES)) === 1, 'the HTTPRoute counted as rejected', 30_000);
    expect(run.controller.output()).toContain("regex '[\\\\d-z]' is invalid");
    expect(await metric('haptic_rejections{kind="Ingress",scope="object"}')).toBe(0);
    // Later changes deploy: a new route and an edit in the other tenant, an edit of the refused route's neighbour.
    run.apply(route('shop', 'web', 'shop.test', '^/secret'), route('shop', 'late', 'late.test'), route('evil', 'good', 'good.test', '^/hidden'));
    await eventually(async () => (await get('shop', 'late.test'))?.echo?.name === 'shop-web', 'the route created afterwards served', 30_000);
    await eventually(async () => (await status('shop', 'shop.test', '/secret')) === 403, 'the edited route served as edited', 30_000);
    expect(await status('shop', 'shop.test', '/private/x')).toBe(200);
    await eventually(async () => (await status('evil', 'good.test', '/hidden')) === 403, "the refused route's neighbour served as edited", 30_000);
    const good = await get('evil', 'good.test');
    expect(good?.status).toBe(200);
    expect(good?.echo?.name).toBe('evil-web');
    // The refused route is not served, and nothing HAProxy refused was deployed.
    expect(await status('evil', 'bad.test')).toBe(404);
    expect(await metric(REFUSED_ROUTES)).toBe(1);
  });

  it('gives the refused HTTPRoute a fresh chance once it is edited', async () => {
    run.apply(route('evil', 'bad', 'bad.test', '^/blocked'));
    await eventually(async () => (await get('evil', 'bad.test'))?.echo?.name === 'evil-web', 'the edited route served', 30_000);
    expect(await status('evil', 'bad.test', '/blocked/x')).toBe(403);
    await eventually(async () => (await metric(REFUSED_ROUTES)) === 0, 'no rejection left', 30_000);
    expect(await status('evil', 'good.test')).toBe(200);
  });
});

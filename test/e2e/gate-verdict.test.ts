// `run --manifests --haproxy` with a value only HAProxy can judge: the template set writes an
// Ingress annotation raw into `http-request deny if { path -m reg <value> }` (no object check
// reads that annotation, so the test does not depend on what the validator learns). A pattern
// PCRE2 refuses, or a header value HAProxy refuses, makes `haproxy -c` refuse the config; the
// render gate traces each refusal to its Ingress, takes it out, and the rest deploys: other
// Ingresses created or edited afterwards are served (real requests through HAProxy), and a
// refused one gets a fresh chance once edited.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MasterCli } from '../../src/main/haproxy/master-cli.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { eventually } from '../helpers/eventually.js';
import { killWithHaproxy, whenServing } from '../helpers/run-haproxy.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';
import { RAW_DENY_ANNOTATION, RAW_HEADER_ANNOTATION, rawAnnotationTemplateSet } from '../helpers/raw-annotation-templates.js';

skipNotice('test/e2e/gate-verdict.test.ts');

/** JavaScript accepts it; PCRE2 refuses it ("invalid range in character class"). */
const PCRE_REFUSED = '[\\d-z]';

let dir: string;
let manifests: string;
let out: string;
let controller: CliProcess;
let master: MasterCli;
let metrics: string;
let httpPort: number;
const fleet = new EchoFleet();
let web: EchoServer;

function tenant(namespace: string, server: EchoServer): KubeObject[] {
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-a', namespace, labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: server.port, protocol: 'TCP' }],
      endpoints: [{ addresses: [server.host], conditions: { ready: true } }],
    },
  ];
}

function ingress(namespace: string, name: string, host: string, denyPath?: string, header?: string): KubeObject {
  const annotations = { ...(denyPath === undefined ? {} : { [RAW_DENY_ANNOTATION]: denyPath }), ...(header === undefined ? {} : { [RAW_HEADER_ANNOTATION]: header }) };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace, annotations },
    spec: { ingressClassName: 'haproxy', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  };
}

const write = (file: string, ...objects: KubeObject[]): Promise<void> => writeFile(join(manifests, file), objects.map((o) => stringify(o)).join('---\n'));
const get = (host: string, path = '/') => send({ port: httpPort, host, path, timeoutMs: 2000 });
const status = async (host: string, path = '/'): Promise<number | undefined> => (await get(host, path).catch(() => undefined))?.status;
const metric = async (name: string): Promise<number> => {
  const text = await (await fetch(`http://${metrics}/metrics`)).text();
  return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
};

describe.skipIf(SKIP_HAPROXY)('run --haproxy: HAProxy refuses some Ingresses', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gate-verdict-'));
    manifests = join(dir, 'manifests');
    out = join(dir, 'out');
    const templates = join(dir, 'templates.yaml');
    await mkdir(manifests);
    web = await fleet.start('web');
    const [port, httpsPort, statusPort] = (await freePorts(3)) as [number, number, number];
    httpPort = port;
    await writeFile(templates, await rawAnnotationTemplateSet());
    await write('shop.yaml', ...tenant('shop', web), ingress('shop', 'shop', 'shop.test', '^/private'));
    await write('evil.yaml', ...tenant('evil', web));
    await write('noisy.yaml', ...tenant('noisy', web));
    controller = startCli([
      'run', '--manifests', manifests, '--out', out, '--haproxy', '--metrics-addr', '127.0.0.1:0', '--threads', '1', '--templates', templates,
      '--min-deployment-interval', '500',
      '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${httpPort}`, '--set', `httpsPort=${httpsPort}`, '--set', `statusPort=${statusPort}`,
      '--set', 'allowLoopbackEndpoints=true',
    ]);
    ({ metrics, master } = await whenServing(controller, out));
  }, 120_000);

  afterAll(async () => {
    await killWithHaproxy(controller, master);
    await fleet.stopAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the raw annotation as HAProxy reads it', async () => {
    expect(await status('shop.test', '/')).toBe(200);
    expect(await status('shop.test', '/private/x')).toBe(403);
  });

  it('rejects only the Ingresses whose values HAProxy refuses; Ingresses created and edited afterwards are served', async () => {
    const refusedBefore = await metric('haptic_rendergate_verdicts_total{verdict="refused"}');
    await write('evil.yaml', ...tenant('evil', web), ingress('evil', 'bad', 'evil.test', PCRE_REFUSED));
    await write('noisy.yaml', ...tenant('noisy', web), ingress('noisy', 'loud', 'noisy.test', undefined, 'two words'));
    await eventually(async () => (await metric('haptic_rendergate_verdicts_total{verdict="refused"}')) > refusedBefore, 'the gate refusing the render', 30_000);
    // The rejections are among the render's rejections, with HAProxy's own messages in the log.
    await eventually(async () => (await metric('haptic_rejections{kind="Ingress",scope="object"}')) === 2, 'both Ingresses counted as rejected', 30_000);
    expect(controller.output()).toContain("regex '[\\\\d-z]' is invalid");
    expect(controller.output()).toContain("'http-request set-header' expects either 'if' or 'unless' followed by a condition but found 'words'");
    // Later changes of the other tenant deploy: a new Ingress, and an edit of the old one.
    await write('shop.yaml', ...tenant('shop', web), ingress('shop', 'shop', 'shop.test', '^/secret'), ingress('shop', 'late', 'late.test'));
    await eventually(async () => (await status('late.test', '/')) === 200, 'the Ingress created afterwards served', 30_000);
    await eventually(async () => (await status('shop.test', '/secret')) === 403, 'the edited Ingress served as edited', 30_000);
    expect(await status('shop.test', '/private/x')).toBe(200);
    // The refused one is not served, and nothing HAProxy refused was deployed.
    expect(await status('evil.test', '/')).toBe(404);
    expect(await status('noisy.test', '/')).toBe(404);
    expect(await metric('haptic_rejections{kind="Ingress",scope="object"}')).toBe(2);
  });

  it('gives the refused Ingress a fresh chance once it is edited', async () => {
    await write('evil.yaml', ...tenant('evil', web), ingress('evil', 'bad', 'evil.test', '^/blocked'));
    await eventually(async () => (await status('evil.test', '/')) === 200, 'the edited Ingress served', 30_000);
    expect(await status('evil.test', '/blocked')).toBe(403);
    // The other refused Ingress stays out until it changes.
    await eventually(async () => (await metric('haptic_rejections{kind="Ingress",scope="object"}')) === 1, 'one rejection left', 30_000);
    expect(await status('noisy.test', '/')).toBe(404);
    expect(await status('late.test', '/')).toBe(200);
  });
});

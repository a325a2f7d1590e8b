// `haptic-reconciler run --manifests DIR --out DIR` end to end, as an operator runs it: a real
// process watching a real directory. Editing, adding and deleting manifests changes --out; a
// broken file changes nothing and the next good edit goes through; SIGTERM exits 0 quickly.
import { cp, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';

let dir: string;
let manifests: string;
let out: string;
let controller: CliProcess;
let metrics: string;

const get = async (path: string): Promise<{ status: number; body: string }> => {
  const response = await fetch(`http://${metrics}${path}`);
  return { status: response.status, body: await response.text() };
};

const hostMap = (): Promise<string> => readFile(join(out, 'maps', 'host-prefix.map'), 'utf8');
const config = (): Promise<string> => readFile(join(out, 'haproxy.cfg'), 'utf8');

const ingress = (name: string, host: string): string => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
  namespace: shop
spec:
  ingressClassName: haproxy
  rules:
  - host: ${host}
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-manifests-'));
  manifests = join(dir, 'manifests');
  out = join(dir, 'out');
  await cp(EXAMPLES_DIR, manifests, { recursive: true });
  controller = startCli(['run', '--manifests', manifests, '--out', out, '--metrics-addr', '127.0.0.1:0', '--threads', '1']);
  metrics = await eventually(() => /"metrics":"(127\.0\.0\.1:\d+)"/.exec(controller.output())?.[1], 'the metrics address in the log', 60_000);
  await eventually(async () => (await config()).includes('frontend http'), 'the first config in --out', 60_000);
}, 90_000);

afterAll(async () => {
  await controller?.stop('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

describe('run --manifests', () => {
  it('writes the config and its auxiliary files for the manifests it found', async () => {
    expect(await config()).toMatch(/frontend http/);
    expect(await hostMap()).toMatch(/^shop\.example\.com\/ /m);
  });

  it('serves /healthz, a ready /readyz once the first config is written, and Prometheus metrics', async () => {
    expect(await get('/healthz')).toMatchObject({ status: 200 });
    await eventually(async () => (await get('/readyz')).status === 200, '/readyz 200');
    const { status, body } = await get('/metrics');
    expect(status).toBe(200);
    for (const name of ['haptic_reconciliations_total', 'haptic_leader 1', 'haptic_resource_objects{resource="ingresses"} 4', 'nodejs_eventloop_lag_seconds']) {
      expect(body).toContain(name);
    }
    expect(body).toMatch(/haptic_reconciliations_total\{outcome="success"\} [1-9]/);
  });

  it('follows an added file into --out', async () => {
    await writeFile(join(manifests, 'added.yaml'), ingress('added', 'added.example.com'));
    await eventually(async () => (await hostMap()).includes('added.example.com/'), 'the added Ingress in the host map');
  });

  it('follows an edited file into --out', async () => {
    await writeFile(join(manifests, 'added.yaml'), ingress('added', 'edited.example.com'));
    await eventually(async () => {
      const map = await hostMap();
      return map.includes('edited.example.com/') && !map.includes('added.example.com/');
    }, 'the edited host');
  });

  it('changes nothing for a broken file, and takes the next good edit', async () => {
    const before = await hostMap();
    await writeFile(join(manifests, 'added.yaml'), 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: [broken\n');
    await eventually(() => /added\.yaml:\d+: invalid YAML/.test(controller.output()), 'the parse error in the log');
    expect(await hostMap()).toBe(before);
    await writeFile(join(manifests, 'added.yaml'), ingress('added', 'fixed.example.com'));
    await eventually(async () => (await hostMap()).includes('fixed.example.com/'), 'the good edit');
  });

  it('follows a deleted file out of --out', async () => {
    await unlink(join(manifests, 'added.yaml'));
    await eventually(async () => !(await hostMap()).includes('fixed.example.com/'), 'the deleted Ingress gone');
    expect(await hostMap()).toMatch(/^shop\.example\.com\/ /m);
  });

  it('exits 0 within 10 s of SIGTERM', async () => {
    const { code, ms } = await controller.stop('SIGTERM');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
  });
});

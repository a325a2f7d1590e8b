// `haptic-reconciler run --kubeconfig` end to end against the fake Kubernetes API server: the
// real CLI lists and watches, renders into --out, follows changes, recovers from dropped watches,
// a compaction (410) with a deletion while the watch was down, and 500s, and stays quiet while
// idle. Then two `--leader-elect` replicas: only the leader writes, haptic_leader says who leads,
// a SIGKILLed leader is replaced within leaseDuration + retryPeriod, and SIGTERM releases the Lease.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { loadManifests } from '../../src/main/sources/manifest/manifest-loader.js';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';
import { FakeKubeApi } from '../helpers/fake-kube-api.js';

const PATHS: Record<string, string> = {
  ingresses: '/apis/networking.k8s.io/v1/ingresses',
  services: '/api/v1/services',
  endpointslices: '/apis/discovery.k8s.io/v1/endpointslices',
  secrets: '/api/v1/secrets',
  ingressclasses: '/apis/networking.k8s.io/v1/ingressclasses',
};
const LEASES = '/apis/coordination.k8s.io/v1/leases';

let dir: string;
let api: FakeKubeApi;
let kubeconfig: string;
const processes: CliProcess[] = [];

/** Strips kind/apiVersion as a LIST would, and seeds the fake server with the example cluster. */
async function seed(): Promise<void> {
  const set = await loadTemplateSet();
  const loaded = await loadManifests(EXAMPLES_DIR, set.stores);
  for (const { store, object } of loaded.objects) api.upsert(PATHS[store] as string, structuredClone(object) as KubeObject as never);
}

function ingress(name: string, host: string): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'shop' },
    spec: { ingressClassName: 'haproxy', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  };
}

function run(out: string, extra: string[] = []): CliProcess {
  const child = startCli(['run', '--kubeconfig', kubeconfig, '--out', out, '--metrics-addr', '127.0.0.1:0', '--threads', '1', ...extra]);
  processes.push(child);
  return child;
}

const metricsAddress = (child: CliProcess): Promise<string> =>
  eventually(() => /"metrics":"(127\.0\.0\.1:\d+)"/.exec(child.output())?.[1], 'the metrics address in the log', 60_000);
const metric = async (address: string, name: string): Promise<string | undefined> => {
  const text = await (await fetch(`http://${address}/metrics`)).text();
  return new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1];
};
const prefixMap = (out: string): Promise<string> => readFile(join(out, 'maps', 'host-prefix.map'), 'utf8');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-kubernetes-'));
  api = await FakeKubeApi.start();
  kubeconfig = await api.writeKubeconfig(dir);
  await seed();
}, 60_000);

afterAll(async () => {
  for (const child of processes) await child.stop('SIGKILL');
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('run --kubeconfig', () => {
  let out: string;
  let controller: CliProcess;

  beforeAll(async () => {
    out = join(dir, 'single');
    controller = run(out);
    // The config is written last: once it names the backend, its maps are in place too.
    await eventually(async () => (await readFile(join(out, 'haproxy.cfg'), 'utf8').catch(() => '')).includes('backend ing_shop_shop_web_80'), 'the initial list rendered', 60_000);
  }, 90_000);

  it('renders the initial list into --out', async () => {
    expect(await readFile(join(out, 'haproxy.cfg'), 'utf8')).toContain('backend ing_shop_shop_web_80');
  });

  it('follows adds, updates and deletes', async () => {
    api.upsert(PATHS.ingresses as string, ingress('k8s-added', 'added.example.com') as never);
    await eventually(async () => (await prefixMap(out)).includes('added.example.com/'), 'the added Ingress');
    api.upsert(PATHS.ingresses as string, ingress('k8s-added', 'updated.example.com') as never);
    await eventually(async () => (await prefixMap(out)).includes('updated.example.com/') && !(await prefixMap(out)).includes('added.example.com/'), 'the update');
    api.delete(PATHS.ingresses as string, 'shop/k8s-added');
    await eventually(async () => !(await prefixMap(out)).includes('updated.example.com/'), 'the delete');
  });

  it('recovers from dropped watches', async () => {
    api.dropWatches();
    api.upsert(PATHS.ingresses as string, ingress('after-drop', 'after-drop.example.com') as never);
    await eventually(async () => (await prefixMap(out)).includes('after-drop.example.com/'), 'a change after the drop');
  });

  it('recovers from a compaction and sees a deletion made while the watch was down', async () => {
    api.failNext(2, 500, (r) => r.watch);
    api.dropWatches();
    api.delete(PATHS.ingresses as string, 'shop/after-drop');
    api.compact();
    await eventually(async () => !(await prefixMap(out)).includes('after-drop.example.com/'), 'the deletion seen after the relist', 30_000);
  });

  it('recovers from 500s on list and watch', async () => {
    api.failNext(4, 500);
    api.dropWatches();
    api.upsert(PATHS.ingresses as string, ingress('after-500', 'after-500.example.com') as never);
    await eventually(async () => (await prefixMap(out)).includes('after-500.example.com/'), 'a change after the 500s', 30_000);
  });

  it('sends fewer than 10 requests per second while idle', async () => {
    await eventually(() => api.openWatches >= 4, 'every watch open again', 30_000);
    const before = api.requestCount;
    const started = Date.now();
    await eventually(() => Date.now() - started >= 2000, 'two seconds of idling', 5000, 100);
    const rate = (api.requestCount - before) / ((Date.now() - started) / 1000);
    expect(rate).toBeLessThan(10);
  });

  it('exits 0 within 10 s of SIGTERM and closes its watches', async () => {
    const { code, ms } = await controller.stop('SIGTERM');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    await eventually(() => api.openWatches === 0, 'no watch left open');
  });
});

describe('run --leader-elect with two replicas', () => {
  const election = ['--leader-elect', '--lease-namespace', 'default', '--lease-name', 'haptic-test', '--lease-duration', '3', '--renew-deadline', '2', '--retry-period', '0.5'];
  let outA: string;
  let outB: string;
  let a: CliProcess;
  let b: CliProcess;
  let metricsA: string;
  let metricsB: string;

  beforeAll(async () => {
    outA = join(dir, 'replica-a');
    outB = join(dir, 'replica-b');
    a = run(outA, [...election, '--identity', 'replica-a']);
    metricsA = await metricsAddress(a);
    await eventually(async () => (await metric(metricsA, 'haptic_leader')) === '1', 'replica-a leading', 60_000);
    b = run(outB, [...election, '--identity', 'replica-b']);
    metricsB = await metricsAddress(b);
    await eventually(async () => (await fetch(`http://${metricsB}/readyz`)).status === 200, 'replica-b synchronized', 60_000);
  }, 120_000);

  it('lets only the leader write, and says who leads in haptic_leader', async () => {
    await eventually(async () => (await prefixMap(outA).catch(() => '')).includes('shop.example.com/'), 'the leader writing');
    expect(await metric(metricsA, 'haptic_leader')).toBe('1');
    expect(await metric(metricsB, 'haptic_leader')).toBe('0');
    await expect(stat(join(outB, 'haproxy.cfg'))).rejects.toThrow(/ENOENT/);
    expect(api.get(LEASES, 'default/haptic-test')?.spec).toMatchObject({ holderIdentity: 'replica-a' });
  });

  it('hands over to the follower within lease duration + retry period after the leader is SIGKILLed, which writes the current config', async () => {
    api.upsert(PATHS.ingresses as string, ingress('during-handover', 'handover.example.com') as never);
    const killed = Date.now();
    await a.stop('SIGKILL');
    await eventually(async () => (await metric(metricsB, 'haptic_leader')) === '1', 'replica-b leading', 15_000, 50);
    const tookMs = Date.now() - killed;
    // leaseDuration 3 s + retryPeriod 0.5 s, plus the test's own polling of /metrics.
    expect(tookMs).toBeLessThan(3000 + 500 + 300);
    await eventually(async () => (await prefixMap(outB).catch(() => '')).includes('handover.example.com/'), 'the new leader writing the current config');
  });

  it('releases the Lease on SIGTERM', async () => {
    const { code } = await b.stop('SIGTERM');
    expect(code).toBe(0);
    expect(api.get(LEASES, 'default/haptic-test')?.spec).toMatchObject({ holderIdentity: '' });
  });
});

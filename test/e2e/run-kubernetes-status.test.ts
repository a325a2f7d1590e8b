// `haptic-reconciler run --kubeconfig` with Ingress status, against the fake API server: the
// leader publishes the --publish-service LoadBalancer addresses on the Ingresses it serves (not
// on another class's), follows a change of that Service, clears an Ingress that moves to another
// class, never renders because of its own status writes, and clears what it published on SIGTERM.
// --publish-address behind a 403 gets one warning naming the permission and renders meanwhile; a
// --publish-service that does not exist gets a warning and no status.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { eventually } from '../helpers/eventually.js';
import { FakeKubeApi, type FakeObject } from '../helpers/fake-kube-api.js';

const INGRESSES = '/apis/networking.k8s.io/v1/ingresses';
const SERVICES = '/api/v1/services';
const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';

let dir: string;
let api: FakeKubeApi;
let kubeconfig: string;
const processes: CliProcess[] = [];

function ingress(name: string, host: string, className = 'haproxy'): FakeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'apps' },
    spec: { ingressClassName: className, rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  };
}

function balancer(ip: string): FakeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'haproxy', namespace: 'ingress' },
    spec: { type: 'LoadBalancer', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }] },
    status: { loadBalancer: { ingress: [{ ip }] } },
  };
}

/** Changes an Ingress as `kubectl apply` does: its status stays. */
function apply(object: FakeObject): void {
  const current = api.get(INGRESSES, `apps/${object.metadata.name}`);
  api.upsert(INGRESSES, current?.status === undefined ? object : { ...object, status: current.status });
}

const addresses = (name: string): unknown => (api.get(INGRESSES, `apps/${name}`)?.status as { loadBalancer?: { ingress?: unknown } } | undefined)?.loadBalancer?.ingress;
const writesTo = (name: string): number => api.statusWrites.filter((w) => w.key === `apps/${name}`).length;

function run(out: string, extra: string[]): CliProcess {
  const child = startCli(['run', '--kubeconfig', kubeconfig, '--out', out, '--metrics-addr', '127.0.0.1:0', '--threads', '1', ...extra]);
  processes.push(child);
  return child;
}

async function metric(child: CliProcess, name: string): Promise<number> {
  const address = await eventually(() => /"metrics":"(127\.0\.0\.1:\d+)"/.exec(child.output())?.[1], 'the metrics address', 60_000);
  const text = await (await fetch(`http://${address}/metrics`)).text();
  return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
}

const prefixMap = (out: string): Promise<string> => readFile(join(out, 'maps', 'host-prefix.map'), 'utf8').catch(() => '');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-status-'));
  api = await FakeKubeApi.start();
  kubeconfig = await api.writeKubeconfig(dir);
  api.upsert(SERVICES, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'apps' }, spec: { ports: [{ name: 'http', port: 80 }] } });
  api.upsert(SLICES, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'apps', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses: ['10.0.0.1'] }],
  } as never);
  api.upsert(SERVICES, balancer('203.0.113.10'));
  api.upsert(INGRESSES, ingress('app', 'app.example.com'));
  api.upsert(INGRESSES, ingress('shop', 'shop.example.com'));
  api.upsert(INGRESSES, ingress('theirs', 'theirs.example.com', 'nginx'));
}, 30_000);

afterAll(async () => {
  for (const child of processes) await child.stop('SIGKILL');
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('run --publish-service', () => {
  let out: string;
  let controller: CliProcess;

  beforeAll(async () => {
    out = join(dir, 'publish-service');
    controller = run(out, ['--publish-service', 'ingress/haproxy']);
    await eventually(() => addresses('app') !== undefined && addresses('shop') !== undefined, 'the addresses on the served Ingresses', 60_000);
  }, 90_000);

  it('publishes the LoadBalancer address on every served Ingress, once, and not on another class', async () => {
    expect(addresses('app')).toEqual([{ ip: '203.0.113.10' }]);
    expect(addresses('shop')).toEqual([{ ip: '203.0.113.10' }]);
    expect(writesTo('app')).toBe(1);
    expect(addresses('theirs')).toBeUndefined();
    expect(writesTo('theirs')).toBe(0);
    expect(api.get(INGRESSES, 'apps/app')?.metadata.generation).toBe(1);
    expect(await metric(controller, 'haptic_ingress_status_writes_total{outcome="ok"}')).toBeGreaterThanOrEqual(2);
    expect(await metric(controller, 'haptic_kube_events_total{outcome="failed"}')).toBe(0);
  });

  it('follows a change of the Service', async () => {
    api.upsert(SERVICES, balancer('203.0.113.20'));
    await eventually(() => JSON.stringify(addresses('app')) === '[{"ip":"203.0.113.20"}]' && JSON.stringify(addresses('shop')) === '[{"ip":"203.0.113.20"}]', 'the new address');
  });

  it('never renders because of its own status writes', async () => {
    apply(ingress('late', 'late.example.com'));
    await eventually(async () => (await prefixMap(out)).includes('late.example.com/'), 'the render of a new Ingress');
    const renders = await metric(controller, 'haptic_reconciliations_total{outcome="success"}');
    await eventually(() => addresses('late') !== undefined, 'the address on the new Ingress');
    // A spec change after the status write: the watch delivers both in order, so once this render
    // is out, a render the status write caused would have been counted too.
    apply(ingress('later', 'later.example.com'));
    await eventually(async () => (await prefixMap(out)).includes('later.example.com/'), 'the render of another Ingress');
    await eventually(() => addresses('later') !== undefined, 'the address on the other Ingress');
    expect(await metric(controller, 'haptic_reconciliations_total{outcome="success"}')).toBe(renders + 1);
    expect(writesTo('late')).toBe(1);
  });

  it('clears the addresses of an Ingress that moves to another class', async () => {
    apply(ingress('shop', 'shop.example.com', 'nginx'));
    expect(addresses('shop')).toEqual([{ ip: '203.0.113.20' }]);
    await eventually(() => addresses('shop') === undefined, 'the cleared status');
    expect(addresses('app')).toEqual([{ ip: '203.0.113.20' }]);
  });

  it('clears what it published when it stops for good (SIGTERM)', async () => {
    const { code } = await controller.stop('SIGTERM');
    expect(code).toBe(0);
    expect(addresses('app')).toBeUndefined();
    expect(addresses('late')).toBeUndefined();
  });
});

describe('run --publish-address behind a 403, and a --publish-service that does not exist', () => {
  it('warns once naming ingresses/status, keeps rendering, and writes once permitted', async () => {
    api.failNext(Number.POSITIVE_INFINITY, 403, (r) => r.method === 'PATCH' && r.path.endsWith('/status'));
    const out = join(dir, 'publish-address');
    const controller = run(out, ['--publish-address', '192.0.2.5,lb.example.com']);
    await eventually(async () => (await prefixMap(out)).includes('app.example.com/'), 'the render', 60_000);
    await eventually(() => controller.output().includes('ingresses/status'), 'the 403 warning');
    expect(controller.output().split('\n').filter((line) => line.includes('ingresses/status'))).toHaveLength(1);
    api.failNext(0);
    await eventually(() => JSON.stringify(addresses('app')) === '[{"ip":"192.0.2.5"},{"hostname":"lb.example.com"}]', 'the addresses once permitted', 40_000);
    await controller.stop('SIGTERM');
  }, 90_000);

  it('warns about a missing Service and writes no status', async () => {
    const before = api.statusWrites.length;
    const out = join(dir, 'missing');
    const controller = run(out, ['--publish-service', 'ingress/missing', '--update-status-on-shutdown', 'false']);
    await eventually(async () => (await prefixMap(out)).includes('app.example.com/'), 'the render', 60_000);
    await eventually(() => controller.output().includes('the --publish-service Service does not exist'), 'the warning');
    await controller.stop('SIGTERM');
    expect(controller.output().split('\n').filter((line) => line.includes('the --publish-service Service does not exist'))).toHaveLength(1);
    expect(api.statusWrites.length).toBe(before);
  }, 90_000);
});

describe('run --leader-elect --publish-address with two replicas', () => {
  it('the leader clears on SIGTERM and the replica that takes over publishes again', async () => {
    const election = ['--leader-elect', '--lease-namespace', 'default', '--lease-name', 'status-test', '--lease-duration', '3', '--renew-deadline', '2', '--retry-period', '0.5'];
    const published = '[{"ip":"198.51.100.7"}]';
    apply(ingress('shop', 'shop.example.com'));
    const a = run(join(dir, 'replica-a'), [...election, '--identity', 'a', '--publish-address', '198.51.100.7']);
    await eventually(() => JSON.stringify(addresses('app')) === published, 'the leader publishing', 60_000);
    const b = run(join(dir, 'replica-b'), [...election, '--identity', 'b', '--publish-address', '198.51.100.7']);
    await eventually(() => b.output().includes('watching the API server'), 'the second replica watching', 60_000);
    const leases = '/apis/coordination.k8s.io/v1/leases';
    const holder = (): unknown => (api.get(leases, 'default/status-test')?.spec as { holderIdentity?: unknown } | undefined)?.holderIdentity;
    const [leader, other] = holder() === 'a' ? [a, b] : [b, a];
    await leader.stop('SIGTERM');
    await eventually(() => holder() === (leader === a ? 'b' : 'a'), 'the other replica leading', 30_000);
    await eventually(() => JSON.stringify(addresses('app')) === published && JSON.stringify(addresses('shop')) === published, 'the addresses published again', 30_000);
    await other.stop('SIGTERM');
    expect(addresses('app')).toBeUndefined();
  }, 120_000);
});

describe('status flags', () => {
  it('refuses a --publish-address entry that is neither an IP nor a host name, naming it', async () => {
    const child = run(join(dir, 'bad-flag'), ['--publish-address', '192.0.2.5,bad host']);
    expect(await child.exited).toBe(1);
    expect(child.output()).toContain('--publish-address: "bad host" is neither an IP address nor a DNS host name');
  }, 30_000);
});

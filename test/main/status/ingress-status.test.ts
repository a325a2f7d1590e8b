// IngressStatus as a leader component of the engine (inline renders, fake clock) against the fake
// API server: the leader publishes on the served Ingresses; a follower writes nothing; a
// --publish-service that does not exist is warned about at most once a minute, until it appears.
import { beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../../src/main/engine.js';
import type { Elector } from '../../../src/main/leadership/elector.js';
import { loadKubeConfig } from '../../../src/main/sources/kubernetes/kube-config.js';
import { IngressStatus } from '../../../src/main/status/ingress-status.js';
import { PublishedService } from '../../../src/main/status/published-service.js';
import type { LoadBalancerIngress } from '../../../src/main/status/load-balancer-addresses.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, rule, service, storeNameFor } from '../../helpers/cluster.js';
import type { FakeClock } from '../../helpers/fake-clock.js';
import type { FakeKubeApi } from '../../helpers/fake-kube-api.js';
import { silentLogger, spyLogger } from '../../helpers/loggers.js';
import { drive, useStatusApi, type RecordedApis } from '../../helpers/status-api.js';

const INGRESSES = '/apis/networking.k8s.io/v1/ingresses';
const fixture = useStatusApi('ingress-status-');
let api: FakeKubeApi;
let dir: string;
let clock: FakeClock;
let apis: RecordedApis;
beforeEach(() => {
  ({ api, dir, clock, apis } = fixture);
});

const cluster = (): KubeObject[] => [
  ingress('shop', 'web', { ingressClassName: 'haproxy', rules: [rule('shop.example.com', { path: '/', service: 'web' })] }),
  ingress('shop', 'other', { ingressClassName: 'nginx', rules: [rule('other.example.com', { path: '/', service: 'web' })] }),
  service('shop', 'web'),
  endpointSlice('shop', 'web', ['10.0.0.1']),
];

const follower: Elector = {
  identity: 'follower',
  run: (_callbacks, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
};

async function harness(elector?: Elector) {
  const set = await defaultTemplateSet();
  const engine = await Engine.create({ templateSet: set, pipeline: 'inline', logger: silentLogger(), clock, ...(elector === undefined ? {} : { elector }) });
  for (const object of cluster()) {
    engine.stores.store(storeNameFor(object, set.stores)).upsert(object);
    if (object.kind === 'Ingress') api.upsert(INGRESSES, object as never);
  }
  const published: readonly LoadBalancerIngress[] = [{ ip: '192.0.2.5' }];
  const status = new IngressStatus({ bus: engine.bus, stores: engine.stores, api: apis.status, publish: { addresses: published }, clock, logger: silentLogger(), stopping: () => engine.stopping });
  engine.addLeaderComponent(status);
  const stop = new AbortController();
  const running = engine.start(stop.signal);
  return {
    engine,
    status,
    close: async () => {
      stop.abort();
      await running;
      await engine.close();
    },
  };
}

const lb = (key: string): unknown => (api.get(INGRESSES, key)?.status as { loadBalancer?: { ingress?: unknown } } | undefined)?.loadBalancer?.ingress;

describe('IngressStatus', () => {
  it('publishes on the Ingresses the leader serves, and clears them when it stops for good', async () => {
    const h = await harness();
    await drive(clock, apis, () => lb('shop/web') !== undefined);
    expect(lb('shop/web')).toEqual([{ ip: '192.0.2.5' }]);
    expect(lb('shop/other')).toBeUndefined();
    await h.close();
    expect(lb('shop/web')).toBeUndefined();
    expect(h.status.stats.cleared).toBe(1);
  });

  it('publishes again when another replica cleared the status meanwhile (a handover), without a render', async () => {
    const h = await harness();
    await drive(clock, apis, () => lb('shop/web') !== undefined && apis.inFlight() === 0);
    const renders = h.engine.coordinator.stats.renders;
    // The previous leader clears on its way out; the watch stores that without announcing it.
    await apis.status.writeStatus('shop', 'web', [], new AbortController().signal);
    h.engine.stores.store('ingresses').upsert(api.get(INGRESSES, 'shop/web') as KubeObject);
    expect(lb('shop/web')).toBeUndefined();
    await drive(clock, apis, () => lb('shop/web') !== undefined);
    expect(lb('shop/web')).toEqual([{ ip: '192.0.2.5' }]);
    expect(h.engine.coordinator.stats.renders).toBe(renders);
    await h.close();
  });

  it('writes nothing on a follower', async () => {
    const h = await harness(follower);
    await h.engine.whenStarted();
    await clock.advance(60_000);
    await drive(clock, apis, () => apis.inFlight() === 0);
    expect(api.statusWrites).toHaveLength(0);
    await h.close();
    expect(api.statusWrites).toHaveLength(0);
  });
});

describe('PublishedService', () => {
  it('warns about a missing Service at most once a minute, and reports its addresses once it exists', async () => {
    const spy = spyLogger();
    const seen: (readonly LoadBalancerIngress[] | undefined)[] = [];
    const kubeConfig = loadKubeConfig(await api.writeKubeconfig(dir));
    const watch = new PublishedService({ kubeConfig, namespace: 'ingress', name: 'haproxy', clock, logger: spy.logger, onAddresses: (a) => seen.push(a) });
    const stop = new AbortController();
    const running = watch.run(stop.signal);
    await drive(clock, apis, () => watch.missingWarnings === 1);
    await clock.advance(59_000);
    expect(watch.missingWarnings).toBe(1);
    await clock.advance(1_000);
    expect(watch.missingWarnings).toBe(2);
    api.upsert('/api/v1/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'haproxy', namespace: 'ingress' }, spec: { clusterIP: '10.96.0.10' }, status: { loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } } });
    const { eventually } = await import('../../helpers/eventually.js');
    await eventually(() => seen.at(-1) !== undefined, 'the addresses of the Service');
    expect(seen.at(-1)).toEqual([{ hostname: 'lb.example.com' }]);
    await clock.advance(180_000);
    expect(watch.missingWarnings).toBe(2);
    expect(seen[0]).toBeUndefined();
    stop.abort();
    await running;
  });
});

// The watcher stores an Ingress update that changed only its status (the leader's own status
// write coming back through the watch) without announcing it, so a status write never triggers a
// render while the store keeps the truth; every other change of an Ingress, and status changes of
// other kinds, are announced as before. The same holds for the Gateway API kinds whose status the
// leader writes: GatewayClass, Gateway and HTTPRoute.
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import type { ControllerEvent, EventOf } from '../../../src/main/events/events.js';
import { onlyStatusChanged } from '../../../src/main/sources/watcher.js';
import { WatcherSet } from '../../../src/main/sources/watcher-set.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { KubeObject, StoreDefinition } from '../../../src/worker/protocol.js';
import { flushMicrotasks } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

const INGRESSES: StoreDefinition = { name: 'ingresses', apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 };
const GATEWAY_KINDS: StoreDefinition[] = [
  { name: 'gatewayclasses', apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', indexBy: ['metadata.name'], namespaced: false, debounceMs: 0 },
  { name: 'gateways', apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 },
  { name: 'httproutes', apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 },
];
const PODS: StoreDefinition = { name: 'haproxy-pods', apiVersion: 'v1', kind: 'Pod', indexBy: ['metadata.namespace', 'metadata.name'], debounceMs: 0 };

function ingress(rv: string, generation: number, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web', namespace: 'shop', resourceVersion: rv, generation, ...(extra.metadata ?? {}) },
    spec: { ingressClassName: 'haproxy' },
    ...(extra.status === undefined ? {} : { status: extra.status }),
  };
}

async function rig() {
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const stores = new StoreProvider();
  const watchers = new WatcherSet({ definitions: [INGRESSES, PODS, ...GATEWAY_KINDS], stores, bus, clock: new FakeClock(), logger: silentLogger() });
  const subscription = bus.subscribe('test', { types: ['resource.index.updated'], bufferSize: 1000 });
  bus.start();
  watchers.synced('ingresses');
  watchers.synced('haproxy-pods');
  for (const definition of GATEWAY_KINDS) watchers.synced(definition.name);
  const modified = async (): Promise<number> => {
    await flushMicrotasks();
    let n = 0;
    while (subscription.depth > 0) n += ((await subscription.next()) as EventOf<'resource.index.updated'> | undefined)?.changeStats.modified ?? 0;
    return n;
  };
  await modified();
  return { watchers, stores, modified };
}

describe('status-only updates', () => {
  it('stores an Ingress update whose only change is its status without announcing it', async () => {
    const { watchers, stores, modified } = await rig();
    watchers.upsert('ingresses', ingress('10', 1));
    await modified();
    watchers.upsert('ingresses', ingress('11', 1, { status: { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } } }));
    expect(await modified()).toBe(0);
    expect(stores.store('ingresses').get('shop/web')?.status).toEqual({ loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } });
  });

  it('stores a GatewayClass, Gateway or HTTPRoute update whose only change is its status without announcing it, and announces a spec change', async () => {
    const { watchers, stores, modified } = await rig();
    for (const definition of GATEWAY_KINDS) {
      const namespaced = definition.kind !== 'GatewayClass';
      const object = (rv: string, generation: number, status?: unknown): KubeObject => ({
        apiVersion: definition.apiVersion,
        kind: definition.kind,
        metadata: { name: 'x', ...(namespaced ? { namespace: 'shop' } : {}), resourceVersion: rv, generation },
        spec: { generation },
        ...(status === undefined ? {} : { status }),
      });
      const conditions = { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' }] };
      watchers.upsert(definition.name, object('10', 1));
      await modified();
      watchers.upsert(definition.name, object('11', 1, conditions));
      expect(await modified(), `${definition.kind} status`).toBe(0);
      expect(stores.store(definition.name).get(namespaced ? 'shop/x' : 'x')?.status).toEqual(conditions);
      watchers.upsert(definition.name, object('12', 2, conditions));
      expect(await modified(), `${definition.kind} spec`).toBe(1);
    }
  });

  it('keeps an Ingress update that changed annotations without a new generation', async () => {
    const { watchers, modified } = await rig();
    watchers.upsert('ingresses', ingress('10', 1));
    await modified();
    watchers.upsert('ingresses', ingress('11', 1, { metadata: { name: 'web', annotations: { 'haproxy.org/timeout-server': '5s' } } }));
    expect(await modified()).toBe(1);
  });

  it('keeps an Ingress update with a new generation (its spec changed)', async () => {
    const { watchers, modified } = await rig();
    watchers.upsert('ingresses', ingress('10', 1));
    await modified();
    watchers.upsert('ingresses', ingress('11', 2, { status: { loadBalancer: {} } }));
    expect(await modified()).toBe(1);
  });

  it('keeps status changes of kinds whose status the templates read (a Pod becoming Running)', async () => {
    const { watchers, modified } = await rig();
    const pod = (rv: string, phase: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'shop', resourceVersion: rv }, status: { phase } });
    watchers.upsert('haproxy-pods', pod('1', 'Pending'));
    await modified();
    watchers.upsert('haproxy-pods', pod('2', 'Running'));
    expect(await modified()).toBe(1);
  });

  it('compares everything but status and resourceVersion', () => {
    expect(onlyStatusChanged(ingress('1', 1), ingress('2', 1, { status: { x: 1 } }))).toBe(true);
    expect(onlyStatusChanged(ingress('1', 1), ingress('2', 1, { metadata: { name: 'web', labels: { a: 'b' } } }))).toBe(false);
  });
});

// GatewayStatus as a leader component of the engine (inline renders, a Deployer on a fake
// target, fake clock) against the fake API server, which checks each write as the Gateway API
// CRD schemas do: the leader writes GatewayClass, Gateway and HTTPRoute status through the
// status subresource, with the object's generation in every condition; a Gateway is Programmed
// (with its addresses) only once the deployment of a render that programmed it succeeded; it
// writes only what changed, keeps lastTransitionTime while a condition's status stays, keeps
// other controllers' route parents, is paced, warns once on a 403; a follower writes nothing; it
// withdraws Programmed when the controller stops for good.
import { beforeEach, describe, expect, it } from 'vitest';
import { Deployer } from '../../../src/main/deploy/deployer.js';
import { Engine } from '../../../src/main/engine.js';
import { newEvent } from '../../../src/main/events/events.js';
import type { Elector } from '../../../src/main/leadership/elector.js';
import { GatewayStatus } from '../../../src/main/status/gateway-status.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, service, storeNameFor } from '../../helpers/cluster.js';
import type { FakeClock } from '../../helpers/fake-clock.js';
import { FakeDeployTarget } from '../../helpers/fake-deploy-target.js';
import type { FakeKubeApi} from '../../helpers/fake-kube-api.js';
import { type FakeObject } from '../../helpers/fake-kube-api.js';
import { CONTROLLER, gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';
import { silentLogger, spyLogger } from '../../helpers/loggers.js';
import { drive, useStatusApi, type RecordedApis } from '../../helpers/status-api.js';

const GROUP = '/apis/gateway.networking.k8s.io/v1';
const PATHS: Record<string, string> = { GatewayClass: `${GROUP}/gatewayclasses`, Gateway: `${GROUP}/gateways`, HTTPRoute: `${GROUP}/httproutes` };
const STORES: Record<string, string> = { gatewayclasses: 'GatewayClass', gateways: 'Gateway', httproutes: 'HTTPRoute' };

const fixture = useStatusApi('gateway-status-');
let api: FakeKubeApi;
let clock: FakeClock;
let apis: RecordedApis;
beforeEach(() => {
  ({ api, clock, apis } = fixture);
});

const route = (name: string, extra: Record<string, unknown> = {}): KubeObject => httpRoute('shop', name, { parentRefs: [{ name: 'edge' }], hostnames: [`${name}.example.com`], rules: [{ backendRefs: [ref('web')] }], ...extra });

const cluster = (): KubeObject[] => [
  gatewayClass(),
  gateway('shop', 'edge', [{ name: 'http', port: 8080 }]),
  route('web'),
  service('shop', 'web'),
  endpointSlice('shop', 'web', ['10.0.0.1']),
];

const follower: Elector = {
  identity: 'follower',
  run: (_callbacks, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
};

interface Options {
  readonly objects?: KubeObject[];
  /** Put in the store as given, not written to the API server (a store behind the server). */
  readonly storeOnly?: KubeObject[];
  readonly elector?: Elector;
  readonly reloadMs?: number;
  readonly logger?: ReturnType<typeof silentLogger>;
}

async function harness(options: Options = {}) {
  const set = await defaultTemplateSet();
  const engine = await Engine.create({ templateSet: set, pipeline: 'inline', logger: silentLogger(), clock, ...(options.elector === undefined ? {} : { elector: options.elector }) });
  /** Writes an object to the API server and the store, as a watch would deliver it; a render follows. */
  const apply = (object: KubeObject): void => {
    const path = PATHS[object.kind ?? ''];
    const current = path === undefined ? undefined : api.get(path, object.metadata.namespace === undefined ? object.metadata.name : `${object.metadata.namespace}/${object.metadata.name}`);
    const stored = path === undefined ? object : (api.upsert(path, { ...object, ...(current?.status === undefined ? {} : { status: current.status }) } as FakeObject) as KubeObject);
    const name = storeNameFor(object, set.stores);
    engine.stores.store(name).upsert(stored);
    engine.bus.publish(newEvent('resource.index.updated', { resourceTypeName: name, changeStats: { created: 0, modified: 1, deleted: 0, isInitialSync: false } }, undefined, clock));
  };
  /** Brings the status written on the API server into the store (the watch does this without a render). */
  const syncBack = (): void => {
    for (const [store, kind] of Object.entries(STORES)) {
      for (const key of engine.stores.store(store).keys()) {
        const object = api.get(PATHS[kind] as string, key);
        if (object !== undefined) engine.stores.store(store).upsert(object as KubeObject);
      }
    }
  };
  for (const object of options.objects ?? cluster()) {
    const path = PATHS[object.kind ?? ''];
    engine.stores.store(storeNameFor(object, set.stores)).upsert(path === undefined ? object : (api.upsert(path, object as FakeObject) as KubeObject));
  }
  for (const object of options.storeOnly ?? []) engine.stores.store(storeNameFor(object, set.stores)).upsert(object);
  const target = new FakeDeployTarget({ clock, reloadMs: options.reloadMs ?? 0 });
  engine.addLeaderComponent(new Deployer({ bus: engine.bus, target, clock, logger: silentLogger(), minDeploymentIntervalMs: 0, awaitGateVerdict: false }));
  const status = new GatewayStatus({ bus: engine.bus, stores: engine.stores, api: apis.gatewayStatus, clock, logger: options.logger ?? silentLogger(), bindAddress: '192.0.2.1', stopping: () => engine.stopping });
  engine.addLeaderComponent(status);
  const stop = new AbortController();
  const running = engine.start(stop.signal);
  return {
    engine,
    status,
    target,
    apply,
    syncBack,
    close: async () => {
      stop.abort();
      await running;
      await engine.close();
    },
  };
}

type Condition = { type: string; status: string; reason: string; observedGeneration?: number; lastTransitionTime: string };
const statusOf = (kind: string, key: string): Record<string, unknown> => (api.get(PATHS[kind] as string, key)?.status ?? {}) as Record<string, unknown>;
const conditionsOf = (kind: string, key: string): Condition[] => (statusOf(kind, key).conditions ?? []) as Condition[];
const condition = (list: readonly Condition[], type: string): Condition | undefined => list.find((c) => c.type === type);
const gatewayProgrammed = (): boolean => condition(conditionsOf('Gateway', 'shop/edge'), 'Programmed')?.status === 'True';
const parentsOf = (key: string): { controllerName: string; parentRef: Record<string, unknown>; conditions: Condition[] }[] => (statusOf('HTTPRoute', key).parents ?? []) as never;
const writesTo = (kind: string, key: string): number => api.statusWrites.filter((w) => w.resourcePath === PATHS[kind] && w.key === key).length;

describe('GatewayStatus', () => {
  it("writes each kind's status through the status subresource, every condition with the object's generation, and Programmed with addresses only once HAProxy serves the Gateway", async () => {
    const h = await harness({ reloadMs: 5_000 });
    await drive(clock, apis, () => gatewayProgrammed() && parentsOf('shop/web').length === 1 && apis.inFlight() === 0);
    expect(conditionsOf('GatewayClass', 'haptic')).toEqual([expect.objectContaining({ type: 'Accepted', status: 'True', reason: 'Accepted', observedGeneration: 1 })]);
    const first = api.statusWrites.find((w) => w.resourcePath === PATHS.Gateway)?.status as { conditions: Condition[]; addresses: unknown[] };
    expect(condition(first.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(first.addresses).toEqual([]);
    const gw = statusOf('Gateway', 'shop/edge') as { conditions: Condition[]; listeners: Record<string, unknown>[]; addresses: unknown[] };
    expect(gw.conditions.map((c) => [c.type, c.status, c.reason, c.observedGeneration])).toEqual([['Accepted', 'True', 'Accepted', 1], ['Programmed', 'True', 'Programmed', 1]]);
    expect(gw.addresses).toEqual([{ type: 'IPAddress', value: '192.0.2.1' }]);
    expect(gw.listeners).toEqual([
      expect.objectContaining({ name: 'http', attachedRoutes: 1, supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }] }),
    ]);
    const listener = (gw.listeners[0]?.conditions ?? []) as Condition[];
    expect(listener.map((c) => `${c.type}=${c.status}/${c.reason}@${c.observedGeneration}`)).toEqual(['Accepted=True/Accepted@1', 'ResolvedRefs=True/ResolvedRefs@1', 'Conflicted=False/NoConflicts@1', 'Programmed=True/Programmed@1']);
    // The Programmed write came once the 5 s reload was over, and not before.
    const programmedAt = apis.statusTimes[api.statusWrites.findIndex((w) => condition(((w.status as { conditions?: Condition[] }).conditions ?? []), 'Programmed')?.status === 'True')];
    expect(programmedAt).toBeGreaterThanOrEqual((apis.statusTimes[0] ?? 0) + 5_000);
    expect(parentsOf('shop/web')).toEqual([
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'shop', name: 'edge' },
        controllerName: CONTROLLER,
        conditions: [expect.objectContaining({ type: 'Accepted', status: 'True', observedGeneration: 1 }), expect.objectContaining({ type: 'ResolvedRefs', status: 'True', observedGeneration: 1 })],
      },
    ]);
    // Status writes never bump a generation.
    expect(api.get(PATHS.Gateway as string, 'shop/edge')?.metadata.generation).toBe(1);
    await h.close();
  });

  it('withdraws Programmed and the addresses of its Gateways when the controller stops for good, leaving the other conditions', async () => {
    const h = await harness();
    await drive(clock, apis, () => gatewayProgrammed() && parentsOf('shop/web').length === 1 && apis.inFlight() === 0);
    h.syncBack();
    await h.close();
    expect(h.status.withdrawn).toBe(1);
    const gw = statusOf('Gateway', 'shop/edge') as { conditions: Condition[]; listeners: { conditions: Condition[] }[]; addresses: unknown[] };
    expect(condition(gw.conditions, 'Programmed')).toMatchObject({ status: 'False', reason: 'Pending', observedGeneration: 1 });
    expect(condition(gw.listeners[0]?.conditions ?? [], 'Programmed')).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(condition(gw.conditions, 'Accepted')).toMatchObject({ status: 'True' });
    expect(gw.addresses).toEqual([]);
    expect(parentsOf('shop/web')).toHaveLength(1);
  });

  it('gives a route its checks rejected as a whole Accepted=False with the reason, on each parent of ours, and nothing for a parent that is not ours', async () => {
    const bad = httpRoute('shop', 'bad', { parentRefs: [{ name: 'edge', sectionName: 'http' }, { name: 'elsewhere' }], hostnames: ['not a host!'], rules: [{ backendRefs: [ref('web')] }] });
    const h = await harness({ objects: [...cluster(), bad] });
    await drive(clock, apis, () => parentsOf('shop/bad').length === 1 && gatewayProgrammed() && apis.inFlight() === 0);
    expect(parentsOf('shop/bad')).toEqual([
      {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'shop', name: 'edge', sectionName: 'http' },
        controllerName: CONTROLLER,
        conditions: [expect.objectContaining({ type: 'Accepted', status: 'False', reason: 'UnsupportedValue', observedGeneration: 1, message: expect.stringContaining('spec.hostnames[0]') })],
      },
    ]);
    // The good route beside it is served and accepted.
    expect(parentsOf('shop/web')[0]?.conditions[0]).toMatchObject({ type: 'Accepted', status: 'True' });
    await h.close();
  });

  it('a new leader keeps the Programmed a previous leader wrote for the same generation until its own deployment, instead of flapping it', async () => {
    const first = await harness();
    await drive(clock, apis, () => gatewayProgrammed() && parentsOf('shop/web').length === 1 && apis.inFlight() === 0);
    const held = ['GatewayClass:haptic', 'Gateway:shop/edge', 'HTTPRoute:shop/web'].map((at) => {
      const [kind, key] = at.split(':') as [string, string];
      return structuredClone(api.get(PATHS[kind] as string, key)) as KubeObject;
    });
    await first.close();
    const writes = api.statusWrites.length;
    // The handover: the status the previous leader wrote is still there (it did not stop for good).
    const second = await harness({ objects: [...held, service('shop', 'web'), endpointSlice('shop', 'web', ['10.0.0.1'])], reloadMs: 5_000 });
    await drive(clock, apis, () => second.target.reloads.length > 0 && apis.inFlight() === 0);
    await clock.advance(10_000);
    await drive(clock, apis, () => apis.inFlight() === 0);
    expect(api.statusWrites.slice(writes)).toEqual([]);
    expect(gatewayProgrammed()).toBe(true);
    await second.close();
  });

  it('writes only what changed: a render that changes nothing writes nothing; a generation bump moves observedGeneration and keeps lastTransitionTime', async () => {
    const h = await harness();
    await drive(clock, apis, () => gatewayProgrammed() && parentsOf('shop/web').length === 1 && apis.inFlight() === 0);
    h.syncBack();
    const writes = api.statusWrites.length;
    const renders = h.engine.coordinator.stats.renders;
    await clock.advance(60_000);
    h.apply(service('shop', 'web', [{ name: 'http', port: 80 }, { name: 'admin', port: 9000 }]));
    await drive(clock, apis, () => h.engine.coordinator.stats.renders > renders && apis.inFlight() === 0);
    await clock.advance(10_000);
    await drive(clock, apis, () => apis.inFlight() === 0);
    expect(api.statusWrites.length).toBe(writes);
    const before = parentsOf('shop/web')[0]?.conditions ?? [];
    h.apply(route('web', { hostnames: ['web.example.com', 'www.example.com'] }));
    expect(api.get(PATHS.HTTPRoute as string, 'shop/web')?.metadata.generation).toBe(2);
    await drive(clock, apis, () => parentsOf('shop/web')[0]?.conditions[0]?.observedGeneration === 2 && apis.inFlight() === 0);
    const after = parentsOf('shop/web')[0]?.conditions ?? [];
    expect(after.map((c) => c.observedGeneration)).toEqual([2, 2]);
    expect(after.map((c) => c.lastTransitionTime)).toEqual(before.map((c) => c.lastTransitionTime));
    // The Gateway's own generation did not move: its status was not written again.
    expect(writesTo('Gateway', 'shop/edge')).toBe(api.statusWrites.slice(0, writes).filter((w) => w.resourcePath === PATHS.Gateway).length);
    await h.close();
  });

  it("keeps the parent entries of other controllers, and removes only its own once the route leaves our Gateways", async () => {
    const theirs = { parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'shop', name: 'other' }, controllerName: 'example.com/other', conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' }] };
    const shared = { ...route('shop'), spec: { ...route('shop').spec as object, parentRefs: [{ name: 'edge' }, { name: 'other' }] }, status: { parents: [theirs] } } as KubeObject;
    const h = await harness({ objects: [...cluster(), shared] });
    await drive(clock, apis, () => parentsOf('shop/shop').length === 2 && apis.inFlight() === 0);
    expect(parentsOf('shop/shop')[0]).toEqual(theirs);
    expect(parentsOf('shop/shop')[1]).toMatchObject({ controllerName: CONTROLLER, parentRef: { name: 'edge' } });
    h.syncBack();
    h.apply({ ...shared, spec: { ...shared.spec as object, parentRefs: [{ name: 'other' }] } });
    await drive(clock, apis, () => parentsOf('shop/shop').length === 1 && apis.inFlight() === 0);
    expect(parentsOf('shop/shop')).toEqual([theirs]);
    await h.close();
  });

  it("never overwrites another controller's parent entry it has not seen: a write on a stale version is refused (409) and made again on the new one", async () => {
    const entry = (reason: string) => ({ parentRef: { name: 'other' }, controllerName: 'example.com/other', conditions: [{ type: 'Accepted', status: 'True', reason, message: '', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' }] });
    const shared = { ...route('shared'), status: { parents: [entry('Old')] } } as KubeObject;
    const seen = api.upsert(PATHS.HTTPRoute as string, shared as FakeObject) as KubeObject;
    // The other controller writes again; our store has not seen it yet.
    api.upsert(PATHS.HTTPRoute as string, { ...seen, status: { parents: [entry('New')] } } as FakeObject);
    const h = await harness({ storeOnly: [seen] });
    await drive(clock, apis, () => api.statuses.includes(409) && apis.inFlight() === 0);
    expect(parentsOf('shop/shared')).toEqual([entry('New')]);
    h.syncBack();
    await drive(clock, apis, () => parentsOf('shop/shared').length === 2 && apis.inFlight() === 0);
    expect(parentsOf('shop/shared')[0]).toEqual(entry('New'));
    expect(parentsOf('shop/shared')[1]).toMatchObject({ controllerName: CONTROLLER, parentRef: { name: 'edge' } });
    await h.close();
  });

  it('a 403 gets one warning naming the Gateway API status permissions, is retried with backoff, and succeeds once permitted', async () => {
    const spy = spyLogger();
    api.failNext(Number.POSITIVE_INFINITY, 403, (r) => r.method === 'PATCH' && r.path.endsWith('/status'));
    const h = await harness({ logger: spy.logger });
    await drive(clock, apis, () => h.status.stats.forbidden >= 6);
    const warnings = spy.warn.mock.calls.filter((call) => String(call[1]).includes('gateways/status'));
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.[1])).toMatch(/403.*update gatewayclasses\/status, gateways\/status and httproutes\/status/);
    // Backoff: six refusals take at least the first delays added up (0.5 + 1 + 2 + 4 + 8 s, less 20 % jitter).
    expect((apis.statusTimes.at(-1) ?? 0) - (apis.statusTimes[0] ?? 0)).toBeGreaterThanOrEqual(12_000);
    api.failNext(0);
    await drive(clock, apis, () => gatewayProgrammed() && conditionsOf('GatewayClass', 'haptic').length === 1);
    await h.close();
  });

  it('paces its writes: 200 routes and their Gateway never go out faster than 20 writes per second', async () => {
    const routes = Array.from({ length: 200 }, (_, i) => route(`r${i}`));
    const h = await harness({ objects: [...cluster(), ...routes] });
    await drive(clock, apis, () => routes.every((r) => parentsOf(`shop/${r.metadata.name}`).length === 1) && gatewayProgrammed() && apis.inFlight() === 0);
    const times = apis.statusTimes;
    expect(times.length).toBeGreaterThanOrEqual(202);
    // A burst of 20, then one every 50 ms.
    expect((times.at(-1) ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(((times.length - 20) / 20) * 1000 - 50);
    expect((statusOf('Gateway', 'shop/edge').listeners as { attachedRoutes: number }[])[0]?.attachedRoutes).toBe(201);
    for (const r of routes) expect(writesTo('HTTPRoute', `shop/${r.metadata.name}`)).toBe(1);
    // Stopping withdraws Programmed through the same (now empty) bucket: time has to move.
    let closed = false;
    const closing = h.close().then(() => (closed = true));
    await drive(clock, apis, () => closed);
    await closing;
    expect(h.status.withdrawn).toBe(1);
  });

  it('writes nothing on a follower', async () => {
    const h = await harness({ elector: follower });
    await h.engine.whenStarted();
    await clock.advance(60_000);
    await drive(clock, apis, () => apis.inFlight() === 0);
    expect(api.statusWrites).toHaveLength(0);
    await h.close();
    expect(api.statusWrites).toHaveLength(0);
  });
});

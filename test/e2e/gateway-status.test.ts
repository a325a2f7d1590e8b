// Gateway API status end to end: `haptic-reconciler run --kubeconfig … --haproxy` against the
// fake API server (which checks status writes as the CRD schemas do) with a real HAProxy and
// echo backends. The conformance scenarios GatewayClassObservedGenerationBump,
// GatewayObservedGenerationBump, HTTPRouteObservedGenerationBump and GatewayModifyListeners
// (add a listener, remove one), reproduced: after a spec change every condition's
// observedGeneration follows the new generation, the listeners in status follow the spec, and
// real requests follow the binds. A case passes after 3 matching answers in a row, as upstream's.
// The leader's own status writes never cause a render; on SIGTERM it withdraws Programmed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MasterCli } from '../../src/main/haproxy/master-cli.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { startCli, type CliProcess } from '../helpers/cli-process.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet } from '../helpers/e2e-echo.js';
import { INFRA, infraServices, startInfraBackends } from '../helpers/e2e-gateway.js';
import { eventually } from '../helpers/eventually.js';
import { whenServing } from '../helpers/run-haproxy.js';
import { FakeKubeApi, type FakeObject } from '../helpers/fake-kube-api.js';
import { CONTROLLER, gateway, gatewayClass, httpRoute, ref, type ListenerInput } from '../helpers/gateway-objects.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/gateway-status.test.ts');

const GROUP = '/apis/gateway.networking.k8s.io/v1';
const PATHS: Record<string, string> = {
  GatewayClass: `${GROUP}/gatewayclasses`,
  Gateway: `${GROUP}/gateways`,
  HTTPRoute: `${GROUP}/httproutes`,
  Service: '/api/v1/services',
  EndpointSlice: '/apis/discovery.k8s.io/v1/endpointslices',
};

type Condition = { type: string; status: string; reason: string; observedGeneration?: number };
type Listener = { name: string; attachedRoutes: number; supportedKinds: unknown[]; conditions: Condition[] };

let dir: string;
let api: FakeKubeApi;
let controller: CliProcess;
let master: MasterCli;
let metrics: string;
const fleet = new EchoFleet();
/** Listener ports: the `same-namespace` Gateway's, the one GatewayObservedGenerationBump adds, and GatewayModifyListeners' two. */
let ports: { same: number; alternate: number; alpha: number; beta: number };

const current = (kind: string, key: string): FakeObject => {
  const object = api.get(PATHS[kind] as string, key);
  if (object === undefined) throw new Error(`${kind} ${key} does not exist`);
  return object;
};
/** Changes an object's spec as `kubectl apply` does: its status stays, its generation grows. */
const applySpec = (kind: string, key: string, spec: Record<string, unknown>): void => {
  api.upsert(PATHS[kind] as string, { ...current(kind, key), spec });
};
const generation = (kind: string, key: string): number => current(kind, key).metadata.generation as number;
const status = (kind: string, key: string): Record<string, unknown> => (current(kind, key).status ?? {}) as Record<string, unknown>;
const conditions = (kind: string, key: string): Condition[] => (status(kind, key).conditions ?? []) as Condition[];
const listeners = (key: string): Listener[] => (status('Gateway', key).listeners ?? []) as Listener[];
const parents = (key: string): { controllerName: string; conditions: Condition[] }[] => (status('HTTPRoute', key).parents ?? []) as never;
const latest = (list: readonly Condition[], gen: number): boolean => list.length > 0 && list.every((c) => c.observedGeneration === gen);
const isTrue = (list: readonly Condition[], type: string): boolean => list.some((c) => c.type === type && c.status === 'True');

/** Every condition of the Gateway and its listeners at the current generation, Accepted and Programmed. */
function gatewayLatest(key: string): boolean {
  const gen = generation('Gateway', key);
  const gw = conditions('Gateway', key);
  return latest(gw, gen) && isTrue(gw, 'Accepted') && isTrue(gw, 'Programmed') && listeners(key).every((l) => latest(l.conditions, gen));
}

function routeLatest(key: string): boolean {
  const gen = generation('HTTPRoute', key);
  const ours = parents(key).filter((p) => p.controllerName === CONTROLLER);
  return ours.length > 0 && ours.every((p) => latest(p.conditions, gen) && isTrue(p.conditions, 'Accepted') && isTrue(p.conditions, 'ResolvedRefs'));
}

/** The backend that answers, or the status code, or 'refused'. */
async function answer(port: number, host: string): Promise<string> {
  try {
    const reply = await send({ port, host, path: '/', timeoutMs: 2000 });
    return reply.status === 200 ? (reply.echo?.name ?? 'no echo') : String(reply.status);
  } catch {
    return 'refused';
  }
}

/** Resolves once `port`/`host` gave `expected` three times in a row (within 30 s). */
async function threeInARow(port: number, host: string, expected: string): Promise<void> {
  let streak = 0;
  await eventually(async () => {
    streak = (await answer(port, host)) === expected ? streak + 1 : 0;
    return streak >= 3;
  }, `${expected} from :${port} for ${host}, 3 times in a row`, 30_000, 50);
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`http://${metrics}/metrics`)).text();
  return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
}

const allNamespaces = { namespaces: { from: 'All' } };

describe.skipIf(SKIP_HAPROXY)('run --kubeconfig --haproxy: Gateway API status', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-status-'));
    api = await FakeKubeApi.start();
    const backends = await startInfraBackends(fleet);
    const [httpPort, httpsPort, statusPort, same, alternate, alpha, beta] = (await freePorts(7)) as [number, number, number, number, number, number, number];
    ports = { same, alternate, alpha, beta };
    const alphaListener: ListenerInput = { name: 'alpha', port: alpha, allowedRoutes: allNamespaces };
    const objects: KubeObject[] = [
      ...infraServices(backends),
      gatewayClass(),
      gateway(INFRA, 'same-namespace', [{ name: 'http', port: same }]),
      httpRoute(INFRA, 'observed-generation-bump', { parentRefs: [{ name: 'same-namespace' }], rules: [{ backendRefs: [ref('v1')] }] }),
      gateway(INFRA, 'gateway-modify', [alphaListener]),
      httpRoute(INFRA, 'modify-route', { parentRefs: [{ name: 'gateway-modify' }], rules: [{ backendRefs: [ref('v2')] }] }),
    ];
    for (const object of objects) api.upsert(PATHS[object.kind as string] as string, structuredClone(object) as FakeObject);
    const kubeconfig = await api.writeKubeconfig(dir);
    const out = join(dir, 'out');
    controller = startCli([
      'run', '--kubeconfig', kubeconfig, '--out', out, '--haproxy', '--metrics-addr', '127.0.0.1:0', '--threads', '1',
      '--min-deployment-interval', '300', '--drift-interval', '600000',
      '--set', 'bindAddress=127.0.0.1', '--set', `httpPort=${httpPort}`, '--set', `httpsPort=${httpsPort}`, '--set', `statusPort=${statusPort}`,
      '--set', 'allowLoopbackEndpoints=true',
    ]);
    ({ metrics, master } = await whenServing(controller, out));
    await eventually(() => gatewayLatest(`${INFRA}/same-namespace`) && gatewayLatest(`${INFRA}/gateway-modify`), 'both Gateways Programmed at generation 1', 30_000);
  }, 120_000);

  afterAll(async () => {
    await controller?.stop('SIGTERM');
    await master?.showProc().then(({ master: m }) => process.kill(m.pid, 'SIGTERM')).catch(() => undefined);
    await api?.close();
    await fleet.stopAll();
    await rm(dir, { recursive: true, force: true });
  });

  it('GatewayClassObservedGenerationBump: a spec change moves observedGeneration of every condition to the new generation', async () => {
    await eventually(() => latest(conditions('GatewayClass', 'haptic'), 1), 'the class Accepted at generation 1');
    expect(conditions('GatewayClass', 'haptic')).toEqual([expect.objectContaining({ type: 'Accepted', status: 'True', reason: 'Accepted', observedGeneration: 1 })]);
    applySpec('GatewayClass', 'haptic', { ...(current('GatewayClass', 'haptic').spec as object), description: 'new' });
    expect(generation('GatewayClass', 'haptic')).toBe(2);
    await eventually(() => latest(conditions('GatewayClass', 'haptic'), 2) && isTrue(conditions('GatewayClass', 'haptic'), 'Accepted'), 'the class Accepted at generation 2', 30_000);
  });

  it('GatewayObservedGenerationBump: a listener added to the spec moves every condition, the listener conditions included, to the new generation, and the new listener serves', async () => {
    const key = `${INFRA}/same-namespace`;
    await threeInARow(ports.same, 'example.com', 'v1');
    const spec = current('Gateway', key).spec as { listeners: unknown[] };
    applySpec('Gateway', key, { ...spec, listeners: [...spec.listeners, { name: 'alternate', hostname: 'foo.com', port: ports.alternate, protocol: 'HTTP', allowedRoutes: allNamespaces }] });
    expect(generation('Gateway', key)).toBe(2);
    await eventually(() => gatewayLatest(key) && listeners(key).length === 2, 'the Gateway conditions at generation 2', 30_000);
    expect(listeners(key).map((l) => [l.name, l.attachedRoutes])).toEqual([['http', 1], ['alternate', 1]]);
    await threeInARow(ports.alternate, 'foo.com', 'v1');
    expect(status('Gateway', key).addresses).toEqual([{ type: 'IPAddress', value: '127.0.0.1' }]);
  });

  it('HTTPRouteObservedGenerationBump: a new backendRef moves the route parent conditions to the new generation, Accepted and ResolvedRefs, and traffic to the new backend', async () => {
    const key = `${INFRA}/observed-generation-bump`;
    await eventually(() => routeLatest(key), 'the route conditions at generation 1');
    const writes = (): number => api.statusWrites.filter((w) => w.resourcePath === PATHS.HTTPRoute && w.key === key).length;
    const before = writes();
    applySpec('HTTPRoute', key, { parentRefs: [{ name: 'same-namespace' }], rules: [{ backendRefs: [ref('v2')] }] });
    expect(generation('HTTPRoute', key)).toBe(2);
    await eventually(() => routeLatest(key), 'the route conditions at generation 2', 30_000);
    await threeInARow(ports.same, 'example.com', 'v2');
    // Written once for the new generation: nothing else in the route's status changed.
    expect(writes()).toBe(before + 1);
  });

  it('GatewayModifyListeners: an added listener appears in status with its supportedKinds and attachedRoutes, and routes traffic', async () => {
    const key = `${INFRA}/gateway-modify`;
    await threeInARow(ports.alpha, 'example.com', 'v2');
    expect(await answer(ports.beta, 'data.test.com')).toBe('refused');
    const spec = current('Gateway', key).spec as { listeners: unknown[] };
    applySpec('Gateway', key, { ...spec, listeners: [...spec.listeners, { name: 'beta', hostname: 'data.test.com', port: ports.beta, protocol: 'HTTP', allowedRoutes: allNamespaces }] });
    await eventually(() => gatewayLatest(key) && listeners(key).length === 2, 'two listeners at generation 2', 30_000);
    const kinds = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }];
    for (const listener of listeners(key)) {
      expect(listener).toMatchObject({ supportedKinds: kinds, attachedRoutes: 1 });
      expect(isTrue(listener.conditions, 'Accepted') && isTrue(listener.conditions, 'ResolvedRefs') && isTrue(listener.conditions, 'Programmed'), listener.name).toBe(true);
    }
    await threeInARow(ports.beta, 'data.test.com', 'v2');
    await threeInARow(ports.beta, 'other.test.com', '404');
  });

  it('GatewayModifyListeners: a removed listener leaves status and stops answering, the other still serves', async () => {
    const key = `${INFRA}/gateway-modify`;
    const spec = current('Gateway', key).spec as { listeners: { name: string }[] };
    expect(spec.listeners.map((l) => l.name)).toEqual(['alpha', 'beta']);
    applySpec('Gateway', key, { ...spec, listeners: spec.listeners.filter((l) => l.name === 'beta') });
    await eventually(() => gatewayLatest(key) && listeners(key).length === 1, 'one listener at generation 3', 30_000);
    expect(listeners(key)[0]).toMatchObject({ name: 'beta', attachedRoutes: 1, supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }] });
    await threeInARow(ports.alpha, 'example.com', 'refused');
    await threeInARow(ports.beta, 'data.test.com', 'v2');
  });

  it('never renders because of its own status writes', async () => {
    const key = `${INFRA}/modify-route`;
    const renders = await metric('haptic_reconciliations_total{outcome="success"}');
    applySpec('HTTPRoute', key, { parentRefs: [{ name: 'gateway-modify' }], rules: [{ backendRefs: [ref('v3')] }] });
    await eventually(() => routeLatest(key), 'the route status at its new generation', 30_000);
    await threeInARow(ports.beta, 'data.test.com', 'v3');
    // A spec change after the status write: the watch delivers both in order, so once this render
    // is out, a render the status write caused would have been counted too.
    applySpec('HTTPRoute', `${INFRA}/observed-generation-bump`, { parentRefs: [{ name: 'same-namespace' }], rules: [{ backendRefs: [ref('v3')] }] });
    await eventually(() => routeLatest(`${INFRA}/observed-generation-bump`), 'the other route status at its new generation', 30_000);
    await threeInARow(ports.same, 'example.com', 'v3');
    expect(await metric('haptic_reconciliations_total{outcome="success"}')).toBe(renders + 2);
    await eventually(async () => (await metric('haptic_gateway_status_writes_total{outcome="ok"}')) === api.statusWrites.length, 'every status write the server took counted');
    expect(await metric('haptic_gateway_status_writes_total{outcome="failed"}')).toBe(0);
  });

  it('on SIGTERM its Gateways are no longer Programmed and hold no addresses, since its HAProxy stops with it', async () => {
    const { code } = await controller.stop('SIGTERM');
    expect(code).toBe(0);
    for (const name of ['same-namespace', 'gateway-modify']) {
      const gw = conditions('Gateway', `${INFRA}/${name}`);
      expect(gw.find((c) => c.type === 'Programmed'), name).toMatchObject({ status: 'False', reason: 'Pending', observedGeneration: generation('Gateway', `${INFRA}/${name}`) });
      expect(gw.find((c) => c.type === 'Accepted'), name).toMatchObject({ status: 'True' });
      expect(status('Gateway', `${INFRA}/${name}`).addresses, name).toEqual([]);
    }
    expect(await answer(ports.beta, 'data.test.com')).toBe('refused');
  });
});

// The webhook over real HTTPS with real AdmissionReview JSON for the Gateway API kinds: HTTPRoute
// and Gateway reviews run on the real admission worker thread against a StoreProvider the test
// fills, and a denial carries what the render reports for the same object (its warning, or its
// status condition). The deadline path with a checker that never answers and a fake clock.
import { describe, expect, it } from 'vitest';
import { startAdmissionServer } from '../../../src/main/admission/admission-server.js';
import { type AdmissionCheck } from '../../../src/main/admission/worker-admission-checker.js';
import { ControllerMetrics } from '../../../src/main/metrics/metrics.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import type { AdmissionVerdict } from '../../../src/worker/admission-protocol.js';
import { endpointSlice, renderOk, service, tlsSecret } from '../../helpers/cluster.js';
import { admissionReview, type ReviewResponse } from '../../helpers/admission-client.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { gateway, gatewayClass, httpRoute, ref } from '../../helpers/gateway-objects.js';
import { useAdmissionHarness } from '../../helpers/admission-harness.js';
import { silentLogger } from '../../helpers/loggers.js';

const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
const shared = gateway('infra', 'shared', [{ name: 'http', port: 8080, allowedRoutes: { namespaces: { from: 'All' } } }]);
const parent = { parentRefs: [{ name: 'shared', namespace: 'infra' }] };
const shop = httpRoute('team-a', 'shop', { ...parent, hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('web')] }] }, OLD);
const cluster: KubeObject[] = [
  gatewayClass(),
  { ...shared, metadata: { ...shared.metadata, ...OLD } },
  shop,
  service('team-a', 'web'),
  endpointSlice('team-a', 'web', ['10.0.0.1']),
  service('team-b', 'web'),
  endpointSlice('team-b', 'web', ['10.0.0.2']),
  tlsSecret('vault', 'cert'),
];
const createdNow = (object: KubeObject): KubeObject => ({ ...object, metadata: { ...object.metadata, creationTimestamp: new Date().toISOString() } });

const h = useAdmissionHarness(cluster);
const reviewOf = (body: string, port?: number): Promise<ReviewResponse['response']> => h.reviewOf(body, port);

describe('the admission webhook over HTTPS: HTTPRoutes', () => {
  it('allows a good HTTPRoute, echoing the request uid', async () => {
    const good = httpRoute('team-b', 'blog', { ...parent, hostnames: ['blog.example.com'], rules: [{ backendRefs: [ref('web')] }] });
    expect(await reviewOf(admissionReview(good, { kind: 'HTTPRoute', uid: 'uid-route' }))).toEqual({ uid: 'uid-route', allowed: true, status: { code: 200 } });
  });

  it('denies a hostname another namespace owns with the warning the render gives for the same route', async () => {
    const taker = httpRoute('team-b', 'taker', { ...parent, hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('web')] }] });
    const response = await reviewOf(admissionReview(taker, { kind: 'HTTPRoute' }));
    expect(response).toMatchObject({ allowed: false, status: { code: 403, reason: 'HostConflict' } });
    expect(response.status.message).toContain('hostname shop.example.com belongs to HTTPRoute team-a/shop');
    expect(renderOk(h.set, [...cluster, createdNow(taker)]).warnings).toContain(response.status.message);
  });

  it('denies a backendRef into another namespace without a ReferenceGrant on UPDATE, with the status condition the render computes', async () => {
    const reach = httpRoute('team-b', 'reach', { ...parent, rules: [{ backendRefs: [ref('web', { namespace: 'team-a' })] }] }, OLD);
    const response = await reviewOf(admissionReview(reach, { kind: 'HTTPRoute', operation: 'UPDATE' }));
    expect(response).toMatchObject({ allowed: false, status: { code: 403, reason: 'RefNotPermitted' } });
    const condition = renderOk(h.set, [...cluster, reach]).gatewayStatus?.httpRoutes.find((r) => r.name === 'reach')?.parents[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
    expect(condition).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
    expect(response.status.message).toContain(condition?.message);
  });

  it('allows a route that attaches nowhere, with a warning naming why', async () => {
    const lost = httpRoute('team-b', 'lost', { parentRefs: [{ name: 'shared', namespace: 'infra', port: 9999 }], rules: [{ backendRefs: [ref('web')] }] });
    const response = await reviewOf(admissionReview(lost, { kind: 'HTTPRoute' }));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toContainEqual(expect.stringContaining('parentRef Gateway infra/shared: NoMatchingParent'));
  });
});

describe('the admission webhook over HTTPS: Gateways', () => {
  it('denies a listener in conflict with an older Gateway, as its listener status reports it', async () => {
    const late = gateway('team-b', 'late', [{ name: 'web', port: 8080 }]);
    const response = await reviewOf(admissionReview(late, { kind: 'Gateway' }));
    expect(response).toMatchObject({ allowed: false, status: { code: 403, reason: 'ProtocolConflict' } });
    const conflicted = renderOk(h.set, [...cluster, createdNow(late)]).gatewayStatus?.gateways.find((g) => g.name === 'late')?.listeners[0]?.conditions.find((c) => c.type === 'Conflicted');
    expect(response.status.message).toBe(`Gateway team-b/late: listener web: ${conflicted?.message ?? 'none'}`);
  });

  it('denies a certificateRef into another namespace without a grant, and allows a Gateway on a free port', async () => {
    const tls = { mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name: 'cert', namespace: 'vault' }] };
    const foreign = gateway('team-b', 'tls', [{ name: 'https', port: 9443, protocol: 'HTTPS', tls }]);
    expect(await reviewOf(admissionReview(foreign, { kind: 'Gateway' }))).toMatchObject({ allowed: false, status: { reason: 'RefNotPermitted' } });
    const free = gateway('team-b', 'free', [{ name: 'web', port: 9090 }]);
    expect(await reviewOf(admissionReview(free, { kind: 'Gateway' }))).toMatchObject({ allowed: true });
  });

  it('counts the reviews under kind HTTPRoute and Gateway', async () => {
    const text = await h.metrics.metrics();
    expect(text).toMatch(/haptic_admission_reviews_total\{kind="HTTPRoute",verdict="denied"\} [1-9]/);
    expect(text).toMatch(/haptic_admission_reviews_total\{kind="HTTPRoute",verdict="allowed"\} [1-9]/);
    expect(text).toMatch(/haptic_admission_reviews_total\{kind="Gateway",verdict="denied"\} [1-9]/);
    expect(text).toMatch(/haptic_admission_reviews_total\{kind="Gateway",verdict="allowed"\} [1-9]/);
  });

  it('allows a DELETE, and leaves the other Gateway API kinds alone', async () => {
    expect(await reviewOf(admissionReview(shared, { kind: 'Gateway', operation: 'DELETE' }))).toMatchObject({ allowed: true });
    expect(await reviewOf(admissionReview(gatewayClass('x', 'other.example/controller'), { kind: 'GatewayClass' }))).toMatchObject({ allowed: true });
  });
});

describe('the admission webhook deadline for the Gateway API kinds', () => {
  it('answers allowed with a warning naming the kind once the deadline passes, and counts it', async () => {
    const clock = new FakeClock();
    let called!: () => void;
    const checking = new Promise<void>((resolve) => {
      called = resolve;
    });
    const slow: AdmissionCheck = {
      check: () => {
        called();
        return new Promise<AdmissionVerdict>(() => undefined);
      },
      close: async () => undefined,
    };
    const counted = new ControllerMetrics({ defaultMetrics: false });
    const slowServer = await startAdmissionServer({ address: '127.0.0.1:0', ...h.pem, checker: slow, timeoutMs: 2000, clock, metrics: counted, logger: silentLogger() });
    try {
      const pending = reviewOf(admissionReview(shop, { kind: 'HTTPRoute', uid: 'uid-slow' }), slowServer.port);
      await checking;
      await clock.advance(2000);
      const response = await pending;
      expect(response).toMatchObject({ uid: 'uid-slow', allowed: true });
      expect(response.warnings).toEqual([expect.stringContaining('did not finish checking this HTTPRoute within 2000 ms')]);
      expect(await counted.metrics()).toMatch(/haptic_admission_reviews_total\{kind="HTTPRoute",verdict="timeout"\} 1/);
    } finally {
      await slowServer.close();
    }
  });
});

// The webhook over real HTTPS with real AdmissionReview JSON, its checks on the real admission
// worker thread against a StoreProvider the test fills; the deadline path with a checker that
// never answers and a fake clock.
import { describe, expect, it } from 'vitest';
import { startAdmissionServer, MAX_REVIEW_BYTES } from '../../../src/main/admission/admission-server.js';
import { type AdmissionCheck } from '../../../src/main/admission/worker-admission-checker.js';
import { ControllerMetrics } from '../../../src/main/metrics/metrics.js';
import type { KubeObject } from '../../../src/worker/protocol.js';
import type { AdmissionVerdict } from '../../../src/worker/admission-protocol.js';
import { rejectionMessage } from '../../../src/worker/store/object-guard.js';
import { endpointSlice, ingress, renderObjects, rule, service } from '../../helpers/cluster.js';
import { admissionReview, postReview, servingPem, type ReviewResponse } from '../../helpers/admission-client.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { useAdmissionHarness } from '../../helpers/admission-harness.js';
import { silentLogger } from '../../helpers/loggers.js';

const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
const owner = ingress('team-a', 'shop', { rules: [rule('shop.example.com', { service: 'web' })] }, OLD);
const cluster: KubeObject[] = [owner, service('team-a', 'web'), endpointSlice('team-a', 'web', ['10.0.0.1']), service('team-b', 'web'), endpointSlice('team-b', 'web', ['10.0.0.2'])];

const h = useAdmissionHarness(cluster);
const reviewOf = (body: string, port?: number): Promise<ReviewResponse['response']> => h.reviewOf(body, port);

describe('the admission webhook over HTTPS', () => {
  it('allows a good Ingress, echoing the request uid', async () => {
    const good = ingress('team-b', 'blog', { rules: [rule('blog.example.com', { service: 'web' })] });
    const response = await reviewOf(admissionReview(good, { uid: 'uid-good' }));
    expect(response).toEqual({ uid: 'uid-good', allowed: true, status: { code: 200 } });
  });

  it('denies a host another namespace owns, naming the owner, with the refusal the render reports', async () => {
    const taker = ingress('team-b', 'steal', { rules: [rule('shop.example.com', { path: '/admin', service: 'web' })] });
    const response = await reviewOf(admissionReview(taker));
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({ code: 403, reason: 'HostConflict' });
    expect(response.status.message).toContain('host shop.example.com belongs to namespace team-a (Ingress team-a/shop claimed it first)');
    const created = { ...taker, metadata: { ...taker.metadata, creationTimestamp: new Date().toISOString() } };
    expect(renderObjects(h.set, [...cluster, created]).warnings).toContain(response.status.message);
  });

  it('denies a bad annotation value with the rejection the render reports', async () => {
    const bad = ingress('team-b', 'limits', { rules: [rule('limits.example.com', { service: 'web' })] }, { annotations: { 'haproxy.org/timeout-server': 'forever' } });
    const response = await reviewOf(admissionReview(bad));
    expect(response).toMatchObject({ allowed: false, status: { code: 403, reason: 'InvalidAnnotation' } });
    const rendered = renderObjects(h.set, [...cluster, bad]);
    expect(rendered.rejections?.map(rejectionMessage)).toContain(response.status.message);
  });

  it('allows an unknown annotation, with a warning', async () => {
    const odd = ingress('team-b', 'odd', { rules: [rule('odd.example.com', { service: 'web' })] }, { annotations: { 'haproxy.org/made-up': 'yes' } });
    const response = await reviewOf(admissionReview(odd));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toContainEqual(expect.stringContaining('annotation haproxy.org/made-up is not a supported annotation; ignored'));
  });

  it('denies a TLS Secret whose certificate does not load, and allows an Opaque one', async () => {
    const broken = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cert', namespace: 'team-b' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'bm90IGEgY2VydA==', 'tls.key': 'bm9yIGEga2V5' } };
    const response = await reviewOf(admissionReview(broken, { kind: 'Secret' }));
    expect(response).toMatchObject({ allowed: false, status: { code: 403, reason: 'InvalidTLS' } });
    expect(response.status.message).toMatch(/^Secret team-b\/cert: /);
    const opaque = { ...broken, type: 'Opaque' };
    expect(await reviewOf(admissionReview(opaque, { kind: 'Secret' }))).toMatchObject({ allowed: true });
  });

  it('allows what it does not check: another kind, a DELETE', async () => {
    expect(await reviewOf(admissionReview({ metadata: { name: 'cm' } }, { kind: 'ConfigMap' }))).toMatchObject({ allowed: true });
    expect(await reviewOf(admissionReview(null, { operation: 'DELETE' }))).toMatchObject({ allowed: true });
  });

  it('denies an object it cannot decode, with the reason', async () => {
    const response = await reviewOf(admissionReview({ kind: 'Ingress', spec: {} }));
    expect(response).toMatchObject({ allowed: false, status: { reason: 'Rejected', message: 'Ingress: metadata is missing' } });
  });

  it('answers a malformed review, a wrong apiVersion or kind and an oversized body with a 400 naming the problem', async () => {
    const notJson = await postReview(h.server.port, h.pem.cert, '{"apiVersion": ');
    expect(notJson.status).toBe(400);
    expect(notJson.text).toMatch(/^malformed AdmissionReview: the request body is not JSON/);
    const v1beta1 = await postReview(h.server.port, h.pem.cert, admissionReview({}).replace('admission.k8s.io/v1', 'admission.k8s.io/v1beta1'));
    expect(v1beta1).toEqual({ status: 400, text: 'malformed AdmissionReview: apiVersion "admission.k8s.io/v1beta1" is not admission.k8s.io/v1\n' });
    const wrongKind = await postReview(h.server.port, h.pem.cert, JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'Ingress' }));
    expect(wrongKind).toEqual({ status: 400, text: 'malformed AdmissionReview: kind "Ingress" is not AdmissionReview\n' });
    const noRequest = await postReview(h.server.port, h.pem.cert, JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }));
    expect(noRequest).toEqual({ status: 400, text: 'malformed AdmissionReview: the AdmissionReview has no request\n' });
    const huge = await postReview(h.server.port, h.pem.cert, Buffer.alloc(MAX_REVIEW_BYTES + 1, 0x20));
    expect(huge.status).toBe(400);
    expect(huge.text).toContain(`over the limit of ${MAX_REVIEW_BYTES} bytes`);
    // And it still serves.
    expect(await reviewOf(admissionReview(ingress('team-b', 'after', { rules: [rule('after.example.com', { service: 'web' })] })))).toMatchObject({ allowed: true });
  });

  it('serves only POST /validate', async () => {
    expect((await postReview(h.server.port, h.pem.cert, '{}', '/other')).status).toBe(404);
  });

  it('counts reviews by kind and verdict, with no user-controlled label', async () => {
    const text = await h.metrics.metrics();
    expect(text).toMatch(/haptic_admission_reviews_total\{kind="Ingress",verdict="denied"\} [1-9]/);
    expect(text).toMatch(/haptic_admission_reviews_total\{kind="Ingress",verdict="allowed"\} [1-9]/);
    expect(text).toMatch(/haptic_admission_reviews_total\{kind="other",verdict="invalid"\} [1-9]/);
    expect(text).toMatch(/haptic_admission_duration_seconds_count [1-9]/);
    expect(text).not.toContain('team-b');
  });
});

describe('the admission webhook deadline', () => {
  it('answers allowed with a warning once the deadline passes, and counts it', async () => {
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
      const pending = reviewOf(admissionReview(ingress('team-b', 'slow', { rules: [rule('slow.example.com', { service: 'web' })] }), { uid: 'uid-slow' }), slowServer.port);
      await checking;
      await clock.advance(2000);
      const response = await pending;
      expect(response).toMatchObject({ uid: 'uid-slow', allowed: true });
      expect(response.warnings).toEqual([expect.stringContaining('did not finish checking this Ingress within 2000 ms')]);
      expect(await counted.metrics()).toMatch(/haptic_admission_reviews_total\{kind="Ingress",verdict="timeout"\} 1/);
    } finally {
      await slowServer.close();
    }
  });
});

describe('the admission webhook when its checker fails or its certificate is renewed', () => {
  it('answers allowed with a warning when the checker fails, and counts it as an error', async () => {
    const failing: AdmissionCheck = { check: () => Promise.reject(new Error('the admission worker exited with code 1')), close: async () => undefined };
    const counted = new ControllerMetrics({ defaultMetrics: false });
    const failingServer = await startAdmissionServer({ address: '127.0.0.1:0', ...h.pem, checker: failing, metrics: counted, logger: silentLogger() });
    try {
      const response = await reviewOf(admissionReview(ingress('team-b', 'x', { rules: [rule('x.example.com', { service: 'web' })] })), failingServer.port);
      expect(response.allowed).toBe(true);
      expect(response.warnings).toEqual([expect.stringContaining('could not check this Ingress (the admission worker exited with code 1)')]);
      expect(await counted.metrics()).toMatch(/haptic_admission_reviews_total\{kind="Ingress",verdict="error"\} 1/);
    } finally {
      await failingServer.close();
    }
  });

  it('says in a warning when it allowed a review before the stores were synchronized', async () => {
    const allow: AdmissionCheck = { check: async () => ({ allowed: true, warnings: [] }), close: async () => undefined };
    let synchronized = false;
    const early = await startAdmissionServer({ address: '127.0.0.1:0', ...h.pem, checker: allow, synchronized: () => synchronized, logger: silentLogger() });
    try {
      const body = admissionReview(ingress('team-b', 'z', { rules: [rule('z.example.com', { service: 'web' })] }));
      expect((await reviewOf(body, early.port)).warnings).toEqual([expect.stringContaining('has not finished reading the cluster')]);
      synchronized = true;
      expect((await reviewOf(body, early.port)).warnings).toBeUndefined();
    } finally {
      await early.close();
    }
  });

  it('serves a renewed certificate to new connections without a restart', async () => {
    const allow: AdmissionCheck = { check: async () => ({ allowed: true, warnings: [] }), close: async () => undefined };
    const renewedServer = await startAdmissionServer({ address: '127.0.0.1:0', ...h.pem, checker: allow, logger: silentLogger() });
    try {
      const renewed = await servingPem();
      renewedServer.setCertificate(renewed.cert, renewed.key);
      const body = admissionReview(ingress('team-b', 'y', { rules: [rule('y.example.com', { service: 'web' })] }));
      expect((await postReview(renewedServer.port, renewed.cert, body)).status).toBe(200);
      await expect(postReview(renewedServer.port, h.pem.cert, body)).rejects.toThrow();
      expect(() => renewedServer.setCertificate('not a certificate', 'nor a key')).toThrow();
    } finally {
      await renewedServer.close();
    }
  });
});

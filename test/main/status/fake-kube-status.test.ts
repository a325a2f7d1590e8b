// The fake API server's status subresource and Events, as the real API server behaves: a status
// write changes only `status`, bumps the resourceVersion but not the generation, and reaches
// watchers; a spec change bumps the generation; Events are created and merge-patched. Gateway API
// status is checked as the CRD schemas make a real server check it (422), and a merge patch
// carrying a stale resourceVersion is refused (409).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeKubeApi } from '../../helpers/fake-kube-api.js';

const INGRESSES = '/apis/networking.k8s.io/v1/ingresses';
let api: FakeKubeApi;

beforeEach(async () => {
  api = await FakeKubeApi.start();
  api.upsert(INGRESSES, { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'shop' }, spec: { ingressClassName: 'haproxy' } });
});

afterEach(async () => {
  await api.close();
});

const send = (method: string, path: string, body: unknown, type = 'application/json'): Promise<Response> =>
  fetch(`${api.url}${path}`, { method, headers: { 'content-type': type }, body: JSON.stringify(body) });

describe('fake API server: status subresource and Events', () => {
  it('a status PUT or merge-PATCH changes only status, bumps the resourceVersion, keeps the generation, and is watched', async () => {
    const before = api.get(INGRESSES, 'shop/web');
    const controller = new AbortController();
    const watch = await fetch(`${api.url}${INGRESSES}?watch=true&resourceVersion=${before?.metadata.resourceVersion}`, { signal: controller.signal });
    const path = `${INGRESSES.replace('/ingresses', '/namespaces/shop/ingresses')}/web/status`;
    const put = await send('PUT', path, { spec: { ingressClassName: 'other' }, status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } });
    expect(put.status).toBe(200);
    const patched = await send('PATCH', path, { status: { loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } } }, 'application/merge-patch+json');
    expect(patched.status).toBe(200);
    const after = api.get(INGRESSES, 'shop/web');
    expect(after?.spec).toEqual({ ingressClassName: 'haproxy' });
    expect(after?.status).toEqual({ loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } });
    expect(after?.metadata.generation).toBe(1);
    expect(Number(after?.metadata.resourceVersion)).toBe(Number(before?.metadata.resourceVersion) + 2);
    expect(api.statusWrites.map((w) => w.method)).toEqual(['PUT', 'PATCH']);
    const reader = watch.body?.getReader();
    let text = '';
    while (text.split('\n').length < 3) text += new TextDecoder().decode((await reader?.read())?.value);
    expect(text.split('\n').slice(0, 2).map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(['MODIFIED', 'MODIFIED']);
    controller.abort();
    expect((await send('PATCH', path, { status: {} })).status).toBe(415);
    expect((await send('PUT', `${INGRESSES.replace('/ingresses', '/namespaces/shop/ingresses')}/missing/status`, { status: {} })).status).toBe(404);
  });

  it('a spec change bumps the generation', () => {
    api.upsert(INGRESSES, { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'shop' }, spec: { ingressClassName: 'nginx' } });
    expect(api.get(INGRESSES, 'shop/web')?.metadata.generation).toBe(2);
  });

  it('creates Events and merge-patches their series', async () => {
    const events = '/apis/events.k8s.io/v1/namespaces/shop/events';
    expect((await send('POST', events, { metadata: { name: 'web.1' }, type: 'Warning', reason: 'HostConflict' })).status).toBe(201);
    expect((await send('PATCH', `${events}/web.1`, { series: { count: 2 } }, 'application/merge-patch+json')).status).toBe(200);
    expect(api.events()).toEqual([expect.objectContaining({ reason: 'HostConflict', series: { count: 2 }, metadata: expect.objectContaining({ name: 'web.1', namespace: 'shop' }) })]);
  });

  it('refuses Gateway API status that the CRD schemas refuse (422) and a patch on a stale resourceVersion (409); takes a valid one', async () => {
    const routes = '/apis/gateway.networking.k8s.io/v1/httproutes';
    const stored = api.upsert(routes, { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'web', namespace: 'shop' }, spec: { parentRefs: [{ name: 'edge' }] } });
    const path = '/apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes/web/status';
    const condition = { type: 'Accepted', status: 'True', reason: 'Accepted', message: '', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' };
    const parent = (c: Record<string, unknown>) => ({ status: { parents: [{ parentRef: { name: 'edge' }, controllerName: 'example.com/x', conditions: [c] }] } });
    const patch = (body: unknown) => send('PATCH', path, body, 'application/merge-patch+json');
    expect((await patch(parent({ ...condition, lastTransitionTime: undefined }))).status).toBe(422);
    expect((await patch(parent({ ...condition, message: undefined }))).status).toBe(422);
    expect((await patch(parent({ ...condition, reason: 'not a reason!' }))).status).toBe(422);
    expect((await patch({ status: { parents: [{ parentRef: { name: 'edge' }, conditions: [condition] }] } })).status).toBe(422);
    expect((await patch({ metadata: { resourceVersion: '1' }, ...parent(condition) })).status).toBe(409);
    expect(api.statusWrites).toHaveLength(0);
    expect((await patch({ metadata: { resourceVersion: stored.metadata.resourceVersion }, ...parent(condition) })).status).toBe(200);
    expect(api.get(routes, 'shop/web')?.status).toEqual(parent(condition).status);
    const classes = '/apis/gateway.networking.k8s.io/v1/gatewayclasses';
    api.upsert(classes, { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'haptic' }, spec: { controllerName: 'example.com/x' } });
    expect((await send('PATCH', `${classes}/haptic/status`, { status: { conditions: [condition] } }, 'application/merge-patch+json')).status).toBe(200);
    expect((await send('PATCH', '/apis/gateway.networking.k8s.io/v1/namespaces/shop/gatewayclasses/haptic/status', { status: {} }, 'application/merge-patch+json')).status).toBe(404);
  });
});

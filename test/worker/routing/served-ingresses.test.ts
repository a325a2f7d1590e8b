// The render result names the Ingresses it serves (ours by class, not rejected as a whole), and
// the routing model's findings carry their Ingress and a stable reason code.
import { describe, expect, it } from 'vitest';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service } from '../../helpers/cluster.js';

const set = await defaultTemplateSet();
const backing = [service('shop', 'web'), endpointSlice('shop', 'web', ['10.0.0.1'])];
const app = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
  ingress('shop', name, { ingressClassName: 'haproxy', rules: [rule(`${name}.example.com`, { path: '/', service: 'web' })], ...spec }, metadata);

describe('served Ingresses in the render result', () => {
  it('lists the Ingresses of our classes, sorted, leaving out another class and a rejected Ingress', () => {
    const out = renderOk(set, [
      app('b'),
      app('a'),
      app('theirs', { ingressClassName: 'nginx' }),
      app('bad', {}, { annotations: { 'haproxy.org/allow-list': '10.0.0.300' } }),
      ...backing,
    ]);
    expect(out.servedIngresses).toEqual(['shop/a', 'shop/b']);
  });

  it('counts an IngressClass of our controller, and classless Ingresses once it is the default', () => {
    const cls = { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'mine', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }, spec: { controller: 'haproxy.org/ingress-controller' } };
    const out = renderOk(set, [cls, app('named', { ingressClassName: 'mine' }), app('classless', { ingressClassName: undefined }), ...backing]);
    expect(out.servedIngresses).toEqual(['shop/classless', 'shop/named']);
  });

  it('reports a missing Service and a host taken by another namespace as findings with their reason codes', () => {
    const out = renderOk(set, [
      ingress('owner', 'site', { ingressClassName: 'haproxy', rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, { creationTimestamp: '2024-01-01T00:00:00Z' }),
      service('owner', 'web'),
      ingress('shop', 'late', { ingressClassName: 'haproxy', rules: [rule('shop.example.com', { path: '/x', service: 'web' })] }, { creationTimestamp: '2024-02-01T00:00:00Z' }),
      ingress('shop', 'lost', { ingressClassName: 'haproxy', rules: [rule('lost.example.com', { path: '/', service: 'gone' })] }),
      ...backing,
    ]);
    expect(out.findings).toEqual([
      expect.objectContaining({ kind: 'Ingress', namespace: 'shop', name: 'lost', code: 'BackendNotFound', reason: 'service shop/gone not found; its backend has no servers' }),
      expect.objectContaining({ kind: 'Ingress', namespace: 'shop', name: 'late', code: 'HostConflict', reason: expect.stringContaining('belongs to namespace owner') }),
    ]);
    expect(out.rejections).toEqual([]);
  });
});

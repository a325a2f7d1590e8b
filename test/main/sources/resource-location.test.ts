import { describe, expect, it } from 'vitest';
import { pluralOf, resourceLocation } from '../../../src/main/sources/kubernetes/resource-paths.js';
import { CLASSES } from './kubernetes-source-harness.js';

describe('resourceLocation', () => {
  it('puts the core group under /api/v1 and every other group under /apis', () => {
    expect(resourceLocation({ apiVersion: 'v1', kind: 'Service' }).collectionPath).toBe('/api/v1/services');
    expect(resourceLocation({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' }).collectionPath).toBe('/apis/discovery.k8s.io/v1/endpointslices');
    expect(resourceLocation({ apiVersion: 'v1', kind: 'Secret' }, 'shop').collectionPath).toBe('/api/v1/namespaces/shop/secrets');
  });

  it('never gives a cluster-scoped kind a namespace', () => {
    expect(resourceLocation({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass' }, 'shop')).toMatchObject({ namespaced: false, collectionPath: CLASSES });
    expect(resourceLocation({ apiVersion: 'example.com/v1', kind: 'Widget', namespaced: false }, 'shop').collectionPath).toBe('/apis/example.com/v1/widgets');
  });

  it('takes the plural from the definition, else from a table, else from the English rule', () => {
    expect(resourceLocation({ apiVersion: 'example.com/v1', kind: 'Mouse', resource: 'mice' }).resource).toBe('mice');
    expect(['Ingress', 'Endpoints', 'ConfigMap', 'Pod'].map(pluralOf)).toEqual(['ingresses', 'endpoints', 'configmaps', 'pods']);
    expect(['Policy', 'Class', 'Gateway', 'Route'].map(pluralOf)).toEqual(['policies', 'classes', 'gateways', 'routes']);
  });

  it('rejects an apiVersion or resource that cannot be a path, naming the value', () => {
    expect(() => resourceLocation({ apiVersion: 'a/b/c', kind: 'X' })).toThrow(TypeError);
    expect(() => resourceLocation({ apiVersion: 'v1', kind: 'X', resource: '../secrets' })).toThrow(/"\.\.\/secrets"/);
  });
});

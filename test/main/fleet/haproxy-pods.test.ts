import { describe, expect, it } from 'vitest';
import { StoreRefusal } from '../../../src/worker/store/indexed-store.js';
import { checkHaproxyPod, checkPodSelection, haproxyPodsDefinition, podTarget } from '../../../src/main/fleet/haproxy-pods.js';
import type { KubeObject } from '../../../src/worker/protocol.js';

function pod(status: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'haproxy-0', namespace: 'haptic', resourceVersion: '7', labels: { app: 'haproxy' }, annotations: { big: 'x'.repeat(10_000) }, ...metadata },
    spec: { containers: [{ name: 'haproxy', image: 'haproxy', env: [{ name: 'SECRET', value: 'x' }] }] },
    status,
  };
}

describe('the haproxy-pods store check', () => {
  it('keeps only the projection a deployment needs: names, version, deletion, phase and podIP', () => {
    const stored = checkHaproxyPod(pod({ phase: 'Running', podIP: '10.1.2.3', conditions: [{ type: 'Ready' }] }, { deletionTimestamp: '2026-01-01T00:00:00Z' }));
    expect(stored).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'haproxy-0', namespace: 'haptic', resourceVersion: '7', deletionTimestamp: '2026-01-01T00:00:00Z' },
      status: { phase: 'Running', podIP: '10.1.2.3' },
    });
  });

  it.each([
    ['a podIP that is not an address', pod({ phase: 'Running', podIP: '10.1.2.3:80' }), 'status.podIP is not an IP address'],
    ['a podIP with a line break', pod({ phase: 'Running', podIP: '10.1.2.3\nserver x' }), 'status.podIP is not an IP address'],
    ['a podIP that is no string', pod({ phase: 'Running', podIP: 167_772_161 }), 'status.podIP is not an IP address'],
    ['an unknown phase', pod({ phase: 'Running\n', podIP: '10.1.2.3' }), 'status.phase is not a Pod phase'],
    ['a name that is no DNS name', pod({ phase: 'Running' }, { name: 'a/../b' }), 'metadata.name is not a DNS subdomain name'],
    ['no namespace', pod({ phase: 'Running' }, { namespace: undefined }), 'metadata.namespace is not a namespace name'],
    ['an oversized resourceVersion', pod({ phase: 'Running' }, { resourceVersion: '9'.repeat(65) }), 'metadata.resourceVersion is malformed'],
  ])('refuses %s, saying why', (_what, object, reason) => {
    expect(() => checkHaproxyPod(object)).toThrow(StoreRefusal);
    expect(() => checkHaproxyPod(object)).toThrow(reason);
  });

  it('never echoes a name it refused', () => {
    expect(() => checkHaproxyPod(pod({}, { name: 'evil\nline' }))).toThrow('Pod (unnamed): metadata.name is not a DNS subdomain name');
  });

  it('takes a Pod without a podIP yet (it is then no target)', () => {
    expect(checkHaproxyPod(pod({ phase: 'Pending' })).status).toEqual({ phase: 'Pending' });
  });
});

describe('which stored Pods are targets', () => {
  const stored = (status: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject => checkHaproxyPod(pod(status, metadata));

  it('is a Running Pod with a podIP and no deletionTimestamp, ready or not, keyed by namespace/name@podIP', () => {
    expect(podTarget(stored({ phase: 'Running', podIP: '10.1.2.3' }), 5555)).toEqual({ id: 'haptic/haproxy-0@10.1.2.3', endpoint: { host: '10.1.2.3', port: 5555 } });
    expect(podTarget(stored({ phase: 'Running', podIP: 'fd00::7' }), 5555)).toEqual({ id: 'haptic/haproxy-0@fd00::7', endpoint: { host: 'fd00::7', port: 5555 } });
  });

  it.each([
    ['Pending', stored({ phase: 'Pending', podIP: '10.1.2.3' })],
    ['Succeeded', stored({ phase: 'Succeeded', podIP: '10.1.2.3' })],
    ['without a podIP', stored({ phase: 'Running' })],
    ['terminating', stored({ phase: 'Running', podIP: '10.1.2.3' }, { deletionTimestamp: '2026-01-01T00:00:00Z' })],
  ])('is not a Pod %s', (_what, object) => {
    expect(podTarget(object, 5555)).toBeUndefined();
  });
});

describe('the haproxy-pods store definition', () => {
  it('watches Pods by label selector in the namespace given', () => {
    expect(haproxyPodsDefinition('app=haproxy,tier in (edge)', 'haptic')).toMatchObject({ name: 'haproxy-pods', apiVersion: 'v1', kind: 'Pod', labelSelector: 'app=haproxy,tier in (edge)', namespace: 'haptic' });
    expect(haproxyPodsDefinition('app=haproxy')).not.toHaveProperty('namespace');
  });

  it('refuses a selector or namespace that is malformed, naming the flag', () => {
    expect(() => checkPodSelection('app=haproxy\n')).toThrow('--haproxy-pods "app=haproxy\\n" is not a label selector');
    expect(() => checkPodSelection(' ')).toThrow('--haproxy-pods');
    expect(() => checkPodSelection('app=haproxy', 'Bad_NS')).toThrow('--haproxy-namespace "Bad_NS" is not a namespace name');
  });
});

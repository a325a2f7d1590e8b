import { beforeAll, describe, expect, it } from 'vitest';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import type { AdmissionCheckRequest } from '../../../src/worker/admission-protocol.js';
import { AdmissionChecker } from '../../../src/worker/admission/admission-checker.js';
import { rejectionMessage } from '../../../src/worker/store/object-guard.js';
import { defaultTemplateSet, endpointSlice, ingress, renderObjects, rule, service, storeNameFor, tlsSecret } from '../../helpers/cluster.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

function backends(...namespaces: string[]): KubeObject[] {
  return namespaces.flatMap((ns) => [service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.0.1'])]);
}

/** A checker whose replica holds `objects`, and the provider it follows. */
function checkerWith(objects: readonly KubeObject[]): { checker: AdmissionChecker; stores: StoreProvider; resync: () => void } {
  const stores = new StoreProvider(set.stores);
  for (const object of objects) stores.store(storeNameFor(object, set.stores)).upsert(object);
  const checker = new AdmissionChecker(set);
  expect(checker.sync({ kind: 'full', ...stores.snapshot() }).accepted).toBe(true);
  let version = stores.version;
  const resync = (): void => {
    const delta = stores.changesSince(version);
    if (delta.kind !== 'delta') throw new Error('expected a delta');
    expect(checker.sync(delta).accepted).toBe(true);
    version = stores.version;
  };
  return { checker, stores, resync };
}

function review(object: unknown, operation: 'CREATE' | 'UPDATE' = 'CREATE'): AdmissionCheckRequest {
  const kind = typeof object === 'object' && object !== null && (object as KubeObject).kind === 'Secret' ? 'Secret' : 'Ingress';
  return { kind, operation, namespace: 'team-b', object };
}

const owner = ingress('team-a', 'shop', { rules: [rule('shop.example.com', { service: 'web' })] }, OLD);

describe('AdmissionChecker: host ownership', () => {
  it('denies a host another namespace owns, naming the owner, with the message the render gives', () => {
    const { checker } = checkerWith([owner, ...backends('team-a', 'team-b')]);
    const taker = ingress('team-b', 'steal', { rules: [rule('shop.example.com', { path: '/admin', service: 'web' })] });
    const verdict = checker.review(review(taker), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'HostConflict' });
    expect(verdict.message).toContain('belongs to namespace team-a (Ingress team-a/shop claimed it first)');
    // The render of the same objects (the newcomer created now) ignores that route with the same words.
    const rendered = renderObjects(set, [owner, ...backends('team-a', 'team-b'), { ...taker, metadata: { ...taker.metadata, creationTimestamp: new Date(NOW).toISOString() } }]);
    expect(rendered.warnings).toContain(verdict.message);
  });

  it('allows the host in the namespace that owns it, and an update of the owner itself', () => {
    const { checker } = checkerWith([owner, ...backends('team-a')]);
    const sibling = ingress('team-a', 'api', { rules: [rule('shop.example.com', { path: '/api', service: 'web' })] });
    expect(checker.review({ ...review(sibling), namespace: 'team-a' }, NOW)).toMatchObject({ allowed: true });
    const changed = ingress('team-a', 'shop', { rules: [rule('shop.example.com', { path: '/v2', service: 'web' })] }, OLD);
    expect(checker.review({ ...review(changed, 'UPDATE'), namespace: 'team-a' }, NOW)).toMatchObject({ allowed: true, warnings: [] });
  });

  it("allows a path its own namespace already serves, with the render's warning", () => {
    const { checker } = checkerWith([owner, ...backends('team-a'), service('team-a', 'api')]);
    const twin = ingress('team-a', 'twin', { rules: [rule('shop.example.com', { service: 'api' })] });
    const verdict = checker.review({ ...review(twin), namespace: 'team-a' }, NOW);
    expect(verdict.allowed).toBe(true);
    const warning = 'Ingress team-a/twin: route shop.example.com/ is already served by Ingress team-a/shop; ignored';
    expect(verdict.warnings).toContain(warning);
    const created = { ...twin, metadata: { ...twin.metadata, creationTimestamp: new Date(NOW).toISOString() } };
    expect(renderObjects(set, [owner, ...backends('team-a'), service('team-a', 'api'), created]).warnings).toContain(warning);
  });

  it('denies a wildcard over a host another namespace routes', () => {
    const { checker } = checkerWith([owner, ...backends('team-a', 'team-b')]);
    const wildcard = ingress('team-b', 'wild', { rules: [rule('*.example.com', { service: 'web' })] });
    const verdict = checker.review(review(wildcard), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'HostConflict' });
    expect(verdict.message).toContain('namespace team-a');
  });

  it('follows the stores through deltas: a new owner denies, its deletion allows again', () => {
    const { checker, stores, resync } = checkerWith(backends('team-a', 'team-b'));
    const taker = ingress('team-b', 'steal', { rules: [rule('shop.example.com', { service: 'web' })] });
    expect(checker.review(review(taker), NOW)).toMatchObject({ allowed: true });
    stores.store('ingresses').upsert(owner);
    resync();
    expect(checker.review(review(taker), NOW)).toMatchObject({ allowed: false, reason: 'HostConflict' });
    stores.store('ingresses').delete('team-a/shop');
    resync();
    expect(checker.review(review(taker), NOW)).toMatchObject({ allowed: true });
  });

  it('lets an older object keep its host on update: the newer claimant is the one refused', () => {
    const newer = ingress('team-b', 'late', { rules: [rule('shop.example.com', { service: 'web' })] }, { creationTimestamp: '2025-01-01T00:00:00Z' });
    const { checker } = checkerWith([newer, ...backends('team-a', 'team-b')]);
    // The old owner changes: it claimed first, so nothing of it is refused.
    expect(checker.review({ ...review(owner, 'UPDATE'), namespace: 'team-a' }, NOW)).toMatchObject({ allowed: true });
  });
});

describe('AdmissionChecker: the object checks', () => {
  it('denies a bad annotation value with the rejection the render reports', () => {
    const { checker } = checkerWith(backends('team-b'));
    const bad = ingress('team-b', 'limits', { rules: [rule('b.example.com', { service: 'web' })] }, { annotations: { 'haproxy.org/allow-list': '10.0.0.0/33' } });
    const verdict = checker.review(review(bad), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'InvalidAnnotation' });
    const rendered = renderObjects(set, [bad, ...backends('team-b')]);
    expect(rendered.rejections?.map(rejectionMessage)).toContain(verdict.message);
  });

  it('allows an unknown annotation, with the warning the render gives', () => {
    const { checker } = checkerWith(backends('team-b'));
    const odd = ingress('team-b', 'odd', { rules: [rule('b.example.com', { service: 'web' })] }, { annotations: { 'haproxy.org/no-such-thing': 'x' } });
    const verdict = checker.review(review(odd), NOW);
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings.join('\n')).toContain('annotation haproxy.org/no-such-thing is not a supported annotation; ignored');
  });

  it('allows an Ingress whose Service does not exist yet, with a warning (apply order is not guaranteed)', () => {
    const { checker } = checkerWith([]);
    const early = ingress('team-b', 'early', { rules: [rule('b.example.com', { service: 'web' })] });
    const verdict = checker.review(review(early), NOW);
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings.join('\n')).toMatch(/service team-b\/web/);
  });

  it('leaves the Ingresses of another class alone, whatever their annotations', () => {
    const { checker } = checkerWith([owner]);
    const theirs = ingress('team-b', 'nginx', { ingressClassName: 'nginx', rules: [rule('shop.example.com', { service: 'web' })] }, { annotations: { 'haproxy.org/allow-list': 'nonsense' } });
    expect(checker.review(review(theirs), NOW)).toEqual({ allowed: true, warnings: [] });
  });

  it('denies an object it cannot decode, with the reason', () => {
    const { checker } = checkerWith([]);
    expect(checker.review(review({ spec: {} }), NOW)).toMatchObject({ allowed: false, reason: 'Rejected', message: 'Ingress: metadata is missing' });
    expect(checker.review(review('not an object'), NOW)).toMatchObject({ allowed: false, reason: 'Rejected' });
    const injected = ingress('team-b', 'inject', { rules: [rule('b.example.com\n  use_backend x', { service: 'web' })] });
    expect(checker.review(review(injected), NOW)).toMatchObject({ allowed: false });
  });

  it('denies a TLS Secret whose certificate is not PEM, and leaves other Secrets alone', () => {
    const { checker } = checkerWith([]);
    const broken = tlsSecret('team-b', 'cert', { 'tls.crt': Buffer.from('not a certificate').toString('base64'), 'tls.key': Buffer.from('nor a key').toString('base64') });
    const verdict = checker.review(review(broken), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'InvalidTLS' });
    expect(verdict.message).toMatch(/^Secret team-b\/cert: /);
    expect(checker.review(review(tlsSecret('team-b', 'good')), NOW)).toMatchObject({ allowed: true });
    const opaque = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'team-b' }, type: 'Opaque', data: { password: 'eA==' } };
    expect(checker.review(review(opaque), NOW)).toEqual({ allowed: true, warnings: [] });
  });
});

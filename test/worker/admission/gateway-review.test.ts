import { beforeAll, describe, expect, it } from 'vitest';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import type { AdmissionCheckRequest } from '../../../src/worker/admission-protocol.js';
import { AdmissionChecker } from '../../../src/worker/admission/admission-checker.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service, storeNameFor, tlsSecret } from '../../helpers/cluster.js';
import { gateway, gatewayClass, httpRoute, ref, referenceGrant } from '../../helpers/gateway-objects.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
const CREATED = { creationTimestamp: new Date(NOW).toISOString() };

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

function checkerWith(objects: readonly KubeObject[]): AdmissionChecker {
  const stores = new StoreProvider(set.stores);
  for (const object of objects) stores.store(storeNameFor(object, set.stores)).upsert(object);
  const checker = new AdmissionChecker(set);
  expect(checker.sync({ kind: 'full', ...stores.snapshot() }).accepted).toBe(true);
  return checker;
}

function review(object: KubeObject, operation: 'CREATE' | 'UPDATE' = 'CREATE'): AdmissionCheckRequest {
  return { kind: object.kind as string, operation, namespace: object.metadata.namespace ?? '', object };
}

const created = (object: KubeObject): KubeObject => ({ ...object, metadata: { ...object.metadata, ...CREATED } });
const web = (ns: string): KubeObject[] => [service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.0.1'])];
const shared = gateway('infra', 'shared', [{ name: 'http', port: 8080, allowedRoutes: { namespaces: { from: 'All' } } }], {}, 'haptic');
const base = [gatewayClass(), { ...shared, metadata: { ...shared.metadata, ...OLD } }, ...web('team-a'), ...web('team-b')];
const parent = { parentRefs: [{ name: 'shared', namespace: 'infra' }] };
const shop = httpRoute('team-a', 'shop', { ...parent, hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('web')] }] }, OLD);

describe('admission of HTTPRoutes', () => {
  it('allows a route that attaches and resolves, without warnings', () => {
    const verdict = checkerWith([...base]).review(review(shop), NOW);
    expect(verdict).toEqual({ allowed: true, warnings: [] });
  });

  it("denies a hostname another namespace's older route owns, with the render's words", () => {
    const taker = httpRoute('team-b', 'taker', { ...parent, hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('web')] }] });
    const verdict = checkerWith([...base, shop]).review(review(taker), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'HostConflict' });
    expect(verdict.message).toContain('belongs to HTTPRoute team-a/shop');
    expect(renderOk(set, [...base, shop, created(taker)]).warnings).toContain(verdict.message);
  });

  it("denies a hostname an older Ingress of another namespace owns, and allows the owner's own namespace", () => {
    const owner = ingress('team-a', 'shop-ing', { rules: [rule('shop.example.com', { service: 'web' })] }, OLD);
    const taker = httpRoute('team-b', 'taker', { ...parent, hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('web')] }] });
    const checker = checkerWith([...base, owner]);
    expect(checker.review(review(taker), NOW)).toMatchObject({ allowed: false, reason: 'HostConflict', message: expect.stringContaining('Ingress team-a/shop-ing') });
    expect(checker.review(review(httpRoute('team-a', 'sibling', { ...parent, hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('web')] }] })), NOW)).toMatchObject({ allowed: true });
  });

  it("denies a hostname an older route holds through its listener's hostname, without naming it itself", () => {
    const named = gateway('infra', 'named', [{ name: 'shop', port: 9080, hostname: 'shop.example.com', allowedRoutes: { namespaces: { from: 'All' } } }]);
    const holder = httpRoute('team-a', 'holder', { parentRefs: [{ name: 'named', namespace: 'infra' }], rules: [{ backendRefs: [ref('web')] }] }, OLD);
    const bystander = httpRoute('team-a', 'elsewhere', { ...parent, hostnames: ['other.example.com'], rules: [{ backendRefs: [ref('web')] }] }, OLD);
    const taker = httpRoute('team-b', 'taker', { parentRefs: [{ name: 'named', namespace: 'infra' }], hostnames: ['shop.example.com'], rules: [{ backendRefs: [ref('web')] }] });
    const verdict = checkerWith([...base, { ...named, metadata: { ...named.metadata, ...OLD } }, holder, bystander]).review(review(taker), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'HostConflict', message: expect.stringContaining('belongs to HTTPRoute team-a/holder') });
  });

  it('denies a cross-namespace backendRef without a ReferenceGrant, as the route status reports it, and allows it with one', () => {
    const reach = httpRoute('team-b', 'reach', { ...parent, rules: [{ backendRefs: [ref('web', { namespace: 'team-a' })] }] });
    const verdict = checkerWith([...base]).review(review(reach), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'RefNotPermitted' });
    const status = renderOk(set, [...base, created(reach)]).gatewayStatus?.httpRoutes.find((r) => r.name === 'reach');
    const resolved = status?.parents[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
    expect(resolved).toMatchObject({ status: 'False', reason: 'RefNotPermitted' });
    expect(verdict.message).toContain(resolved?.message);
    expect(checkerWith([...base, referenceGrant('team-a', 'let-b', 'team-b')]).review(review(reach), NOW)).toEqual({ allowed: true, warnings: [] });
  });

  it('allows a route whose Service or Gateway does not exist yet, or that no listener admits, with warnings', () => {
    const early = httpRoute('team-b', 'early', { parentRefs: [{ name: 'later', namespace: 'infra' }, { name: 'shared', namespace: 'infra', sectionName: 'nope' }], rules: [{ backendRefs: [ref('absent')] }] });
    const verdict = checkerWith([...base]).review(review(early), NOW);
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings.join('\n')).toContain('parentRef Gateway infra/later does not exist (yet)');
    expect(verdict.warnings.join('\n')).toContain('NoMatchingParent');
    const only = httpRoute('team-b', 'missing', { ...parent, rules: [{ backendRefs: [ref('absent')] }] });
    const warned = checkerWith([...base]).review(review(only), NOW);
    expect(warned.allowed).toBe(true);
    const rendered = renderOk(set, [...base, created(only)]);
    const backendWarning = rendered.warnings.find((w) => w.startsWith('HTTPRoute team-b/missing:'));
    expect(backendWarning).toBeDefined();
    expect(warned.warnings).toContain(backendWarning);
  });

  it("leaves routes of other controllers' Gateways alone, whatever they hold", () => {
    const theirs = gateway('infra', 'nginx', [{ name: 'http', port: 8080 }], {}, 'nginx');
    const odd = httpRoute('team-b', 'odd', { parentRefs: [{ name: 'nginx', namespace: 'infra' }], hostnames: ['bad host\n'], rules: [] });
    expect(checkerWith([...base, theirs]).review(review(odd), NOW)).toEqual({ allowed: true, warnings: [] });
  });

  it('denies a route its store checks refuse, with the rejection the render reports', () => {
    const bad = httpRoute('team-b', 'bad', { ...parent, hostnames: ['bad host'], rules: [{ backendRefs: [ref('web')] }] });
    const verdict = checkerWith([...base]).review(review(bad), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'Rejected' });
    expect(verdict.message).toMatch(/^HTTPRoute team-b\/bad: /);
    expect(renderOk(set, [...base, created(bad)]).warnings).toContain(`rejected ${verdict.message}`);
  });
});

describe('admission of Gateways', () => {
  const tls = (name: string, namespace?: string) => ({ mode: 'Terminate', certificateRefs: [{ group: '', kind: 'Secret', name, ...(namespace === undefined ? {} : { namespace }) }] });

  it("denies a listener that conflicts with an older Gateway's bind, as the listener status reports it", () => {
    const late = gateway('team-b', 'late', [{ name: 'web', port: 8080 }]);
    const verdict = checkerWith([...base]).review(review(late), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'ProtocolConflict' });
    const listener = renderOk(set, [...base, created(late)]).gatewayStatus?.gateways.find((g) => g.name === 'late')?.listeners[0];
    const conflicted = listener?.conditions.find((c) => c.type === 'Conflicted');
    expect(conflicted).toMatchObject({ status: 'True', reason: 'ProtocolConflict' });
    expect(verdict.message).toBe(`Gateway team-b/late: listener web: ${conflicted?.message ?? ''}`);
  });

  it('denies two listeners with the same hostname on one port, and a listener on the Ingress frontends\' port', () => {
    const twins = gateway('team-b', 'twins', [{ name: 'a', port: 9090, hostname: 'x.test' }, { name: 'b', port: 9090, hostname: 'x.test' }]);
    expect(checkerWith([...base]).review(review(twins), NOW)).toMatchObject({ allowed: false, reason: 'HostnameConflict', message: expect.stringContaining('listener b') });
    const onIngress = gateway('team-b', 'eighty', [{ name: 'http', port: 80 }]);
    expect(checkerWith([...base]).review(review(onIngress), NOW)).toMatchObject({ allowed: false, reason: 'ProtocolConflict', message: expect.stringContaining('Ingress or status frontends') });
  });

  it('allows an update of the older Gateway itself: the newer one is the one in conflict', () => {
    const late = { ...gateway('team-b', 'late', [{ name: 'web', port: 8080 }]), metadata: { name: 'late', namespace: 'team-b', creationTimestamp: '2025-01-01T00:00:00Z' } };
    expect(checkerWith([...base, late]).review(review(base[1] as KubeObject, 'UPDATE'), NOW)).toEqual({ allowed: true, warnings: [] });
  });

  it('denies a certificateRef into another namespace without a grant, and a Secret that holds no certificate', () => {
    const foreign = gateway('team-b', 'tls', [{ name: 'https', port: 9443, protocol: 'HTTPS', tls: tls('cert', 'vault') }]);
    const verdict = checkerWith([...base, tlsSecret('vault', 'cert')]).review(review(foreign), NOW);
    expect(verdict).toMatchObject({ allowed: false, reason: 'RefNotPermitted' });
    const listener = renderOk(set, [...base, tlsSecret('vault', 'cert'), created(foreign)]).gatewayStatus?.gateways.find((g) => g.name === 'tls')?.listeners[0];
    expect(verdict.message).toContain(listener?.conditions.find((c) => c.type === 'ResolvedRefs')?.message);
    const grant = { ...referenceGrant('vault', 'let-b', 'team-b'), spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'team-b' }], to: [{ group: '', kind: 'Secret' }] } };
    expect(checkerWith([...base, tlsSecret('vault', 'cert'), grant]).review(review(foreign), NOW)).toEqual({ allowed: true, warnings: [] });
    const opaque: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'plain', namespace: 'team-b' }, type: 'Opaque', data: { password: 'eA==' } };
    const notCert = gateway('team-b', 'plain', [{ name: 'https', port: 9443, protocol: 'HTTPS', tls: tls('plain') }]);
    expect(checkerWith([...base, opaque]).review(review(notCert), NOW)).toMatchObject({ allowed: false, reason: 'InvalidCertificateRef' });
    const wrongKind = gateway('team-b', 'kind', [{ name: 'https', port: 9443, protocol: 'HTTPS', tls: { certificateRefs: [{ group: 'example.com', kind: 'Vault', name: 'x' }] } }]);
    expect(checkerWith([...base]).review(review(wrongKind), NOW)).toMatchObject({ allowed: false, reason: 'InvalidCertificateRef' });
  });

  it('allows a Gateway whose certificate Secret does not exist yet, with a warning', () => {
    const early = gateway('team-b', 'early', [{ name: 'https', port: 9443, protocol: 'HTTPS', tls: tls('soon') }]);
    const verdict = checkerWith([...base]).review(review(early), NOW);
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings.join('\n')).toContain('Secret team-b/soon is missing');
  });

  it('leaves Gateways of another class alone', () => {
    const theirs = gateway('team-b', 'nginx', [{ name: 'http', port: 80 }], {}, 'nginx');
    expect(checkerWith([...base]).review(review(theirs), NOW)).toEqual({ allowed: true, warnings: [] });
  });
});

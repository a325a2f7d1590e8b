import { describe, expect, it } from 'vitest';
import { generateSelfSigned } from '../../../src/main/output/default-certificate.js';
import type { KubeObject, StoreDefinition } from '../../../src/worker/protocol.js';
import { buildRoutingModel, modelOptions, type RoutingModel } from '../../../src/worker/routing/ingress-model.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, ROUTING_STORES, rule, service, storeNameFor, tlsSecret, withValues } from '../../helpers/cluster.js';

const STORES: readonly StoreDefinition[] = [
  ...ROUTING_STORES,
  { name: 'ingressclasses', apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', indexBy: ['metadata.name'], namespaced: false },
];

/** The routing model of `objects` (IngressClasses included), and its warnings. */
function model(objects: readonly KubeObject[], values: Record<string, unknown> = {}): { model: RoutingModel; warnings: string[] } {
  const stores = new Map(STORES.map((def) => [def.name, new IndexedStore(def.name, def.indexBy)]));
  for (const object of objects) stores.get(storeNameFor(object, STORES))?.upsert(object);
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
  };
  return { model: buildRoutingModel(new GuardedReader((name) => stores.get(name), warn), modelOptions(values), undefined, warn), warnings };
}

function ingressClass(name: string, controller: string, isDefault = false): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name, ...(isDefault ? { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } : {}) },
    spec: { controller },
  };
}

const hostsOf = (m: RoutingModel): string[] => m.hostPrefix.map((e) => e.key.split('/')[0] as string).sort();

describe('IngressClasses', () => {
  const cluster = (): KubeObject[] => [
    ingress('ns', 'named', { ingressClassName: 'house', rules: [rule('named.example.com', { service: 'web' })] }),
    ingress('ns', 'legacy', { rules: [rule('legacy.example.com', { service: 'web' })] }, { annotations: { 'kubernetes.io/ingress.class': 'house' } }),
    ingress('ns', 'classless', { rules: [rule('classless.example.com', { service: 'web' })] }),
    ingress('ns', 'configured', { ingressClassName: 'haproxy', rules: [rule('configured.example.com', { service: 'web' })] }),
    ingress('ns', 'foreign', { ingressClassName: 'nginx', rules: [rule('foreign.example.com', { service: 'web' })] }),
    service('ns', 'web'),
  ];

  it('takes the classes whose controller is ours, by spec.ingressClassName or the legacy annotation, and the configured class always', () => {
    const objects = [...cluster(), ingressClass('house', 'haproxy.org/ingress-controller'), ingressClass('nginx', 'k8s.io/ingress-nginx')];
    expect(hostsOf(model(objects, { watchIngressWithoutClass: false }).model)).toEqual(['configured.example.com', 'legacy.example.com', 'named.example.com']);
  });

  it('leaves out Ingresses of a class whose IngressClass names another controller', () => {
    const objects = [...cluster(), ingressClass('house', 'example.com/other')];
    expect(hostsOf(model(objects, { watchIngressWithoutClass: false }).model)).toEqual(['configured.example.com']);
  });

  it('takes class-less Ingresses when our class is the default class, even with watchIngressWithoutClass off', () => {
    const objects = [...cluster(), ingressClass('house', 'haproxy.org/ingress-controller', true)];
    expect(hostsOf(model(objects, { watchIngressWithoutClass: false }).model)).toContain('classless.example.com');
  });

  it("ignores another controller's default class", () => {
    const objects = [...cluster(), ingressClass('nginx', 'k8s.io/ingress-nginx', true)];
    expect(hostsOf(model(objects, { watchIngressWithoutClass: false }).model)).not.toContain('classless.example.com');
  });

  it('matches controllerName from the values', () => {
    const objects = [...cluster(), ingressClass('house', 'example.com/mine')];
    expect(hostsOf(model(objects, { controllerName: 'example.com/mine', watchIngressWithoutClass: false }).model)).toContain('named.example.com');
  });
});

describe('Services that cannot be routed, and ExternalName Services', () => {
  const external = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'ns' }, spec: { type: 'ExternalName', ...spec } });
  const via = (port: number | string = 8443): KubeObject => ingress('ns', 'app', { rules: [rule('app.example.com', { service: 'ext', port })] });

  const ON = { externalNameServices: true };

  it('does not route an ExternalName Service unless externalNameServices is on, and says how to turn it on', async () => {
    const { model: m, warnings } = model([via(), external({ externalName: 'api.partner.example' })]);
    expect(m.backends[0]?.servers.every((s) => !s.enabled)).toBe(true);
    expect(m.backends[0]?.dns).toBe(false);
    expect(m.resolvers).toBe(false);
    expect(warnings).toEqual([
      'Ingress ns/app: service ns/ext is an ExternalName Service, which is not routed unless values.externalNameServices is true (--set externalNameServices=true); its backend has no servers',
    ]);
    const out = renderOk(await defaultTemplateSet(), [via(), external({ externalName: 'api.partner.example' })]);
    expect(out.haproxyConfig).not.toContain('api.partner.example');
    expect(out.haproxyConfig).not.toContain('resolvers dns');
    expect(out.haproxyConfig).toContain('  server srv1 127.0.0.1:1 disabled\n');
  });

  it('routes an ExternalName Service to its DNS name on the Ingress port, marked for DNS resolution', () => {
    const { model: m, warnings } = model([via(), external({ externalName: 'api.partner.example' })], ON);
    const backend = m.backends[0];
    expect(backend?.dns).toBe(true);
    expect(backend?.servers[0]).toEqual({ name: 'srv1', address: 'api.partner.example:8443', enabled: true });
    expect(m.resolvers).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('resolves a named port of an ExternalName Service through its ports', () => {
    const { model: m } = model([via('https'), external({ externalName: 'api.partner.example', ports: [{ name: 'https', port: 443 }] })], ON);
    expect(m.backends[0]?.servers[0]?.address).toBe('api.partner.example:443');
  });

  // The object checks refuse most of these first; the model refuses them again, as a second wall.
  const served = (m: RoutingModel): boolean => m.backends.some((b) => b.servers.some((s) => s.enabled));

  it('refuses a loopback external name unless allowLoopbackEndpoints, and a link-local one always', async () => {
    const loopback = model([via(), external({ externalName: 'localhost' })], ON);
    expect(served(loopback.model)).toBe(false);
    expect(loopback.warnings.some((w) => w.includes('"localhost"') && w.includes('loopback'))).toBe(true);
    const allowed = renderOk(withValues(await defaultTemplateSet(), { allowLoopbackEndpoints: true, ...ON }), [via(), external({ externalName: 'localhost' })]);
    expect(allowed.haproxyConfig).toContain('  server srv1 localhost:8443 resolvers dns init-addr last,libc,none\n');
    expect(allowed.haproxyConfig).toContain('\nresolvers dns\n  parse-resolv-conf\n');
    const metadata = model([via(), external({ externalName: '169.254.169.254' })], { allowLoopbackEndpoints: true, ...ON });
    expect(served(metadata.model)).toBe(false);
    expect(metadata.warnings.some((w) => w.includes('169.254.169.254'))).toBe(true);
    expect(served(model([via(), external({ externalName: 'bad name' })], ON).model)).toBe(false);
  });

  it('warns about a Service of an unsupported type and one without ready endpoints', () => {
    const objects = [
      ingress('ns', 'app', { rules: [rule('a.example.com', { service: 'odd' }), rule('b.example.com', { service: 'idle' })] }),
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'odd', namespace: 'ns' }, spec: { type: 'Weird', ports: [{ name: 'http', port: 80 }] } },
      service('ns', 'idle'),
      endpointSlice('ns', 'idle', [{ address: '10.0.0.1', ready: false }]),
    ];
    const { model: m, warnings } = model(objects);
    expect(served(m)).toBe(false);
    expect(warnings.some((w) => w.includes('ns/odd') && w.includes('"Weird"'))).toBe(true);
    expect(warnings).toContain('Ingress ns/app: service ns/idle has no ready endpoints; its backend has no servers');
  });
});

describe('the default certificate', () => {
  const tlsApp = (): KubeObject[] => [
    ingress('shop', 'web', { tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }], rules: [rule('shop.example.com', { service: 'web' })] }),
    service('shop', 'web'),
    endpointSlice('shop', 'web', ['10.0.0.1']),
    tlsSecret('shop', 'shop-tls'),
  ];

  it('is the Secret named by values.defaultCertificate', () => {
    const { model: m } = model([...tlsApp(), tlsSecret('ops', 'fallback')], { defaultCertificate: 'ops/fallback', selfSignedCertificate: 'SELF' });
    expect(m.defaultCertificate?.name).toBe('default.pem');
    expect(m.defaultCertificate?.pem).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it('falls back to the self-signed certificate, with a warning, when that Secret is missing', () => {
    const { model: m, warnings } = model(tlsApp(), { defaultCertificate: 'ops/missing', selfSignedCertificate: 'SELF' });
    expect(m.defaultCertificate?.pem).toBe('SELF');
    expect(warnings).toContain('values.defaultCertificate: secret "ops/missing" is missing or has no tls.crt/tls.key; the self-signed certificate is used');
  });

  it('comes first in the crt-list, with an HTTPS frontend even without tenant certificates, and is emitted as certs/default.pem', async () => {
    const pem = await generateSelfSigned(Date.now());
    const set = withValues(await defaultTemplateSet(), { selfSignedCertificate: pem });
    const withTls = renderOk(set, tlsApp());
    expect(withTls.auxiliaryFiles.files['crt-list.txt']).toBe('/etc/haproxy/certs/default.pem default.invalid\n/etc/haproxy/certs/shop_shop-tls.pem shop.example.com\n');
    expect(withTls.haproxyConfig).toContain('bind *:443 ssl crt-list /etc/haproxy/files/crt-list.txt alpn h2,http/1.1\n');
    const plain = renderOk(set, [ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'web' })] }), service('shop', 'web'), endpointSlice('shop', 'web', ['10.0.0.1'])]);
    expect(plain.haproxyConfig).toContain('\nfrontend https\n');
    expect(plain.auxiliaryFiles.certificates).toEqual({ 'default.pem': pem });
  });
});

// The object guard: verdicts by the kind an object is checked as, messages that name the object
// and the field, the smallest unit left out, and renders in which rejected objects and parts
// never reach the output while everything else still renders.
import { beforeAll, describe, expect, it } from 'vitest';
import { InlinePipeline } from '../../../src/main/pipeline/inline-pipeline.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { checkObjectAs, describe as describeObject, guardObject, type GuardVerdict } from '../../../src/worker/store/object-guard.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service, storeNameFor, tlsSecret } from '../../helpers/cluster.js';

/** The verdict on an object checked as the kind it says it is (the tests' objects are honest). */
function verdictOf(object: KubeObject): GuardVerdict {
  return checkObjectAs(object, object.kind);
}

/** Every rejection message of an object: its own, or those of the parts left out of it. */
function reasonOf(object: KubeObject): string {
  const verdict = verdictOf(object);
  if (verdict.ok && verdict.rejections.length === 0) throw new Error(`expected ${describeObject(object)} to be rejected, whole or in part`);
  return verdict.ok ? verdict.rejections.map((r) => `${r.kind} ${r.namespace}/${r.name}: ${r.reason}`).join('\n') : verdict.reason;
}

/** A healthy app `shop/web` plus whatever the test adds. */
function healthy(): KubeObject[] {
  return [
    ingress('shop', 'web', { ingressClassName: 'haproxy', rules: [rule('shop.example.com', { path: '/', service: 'web' })] }),
    service('shop', 'web'),
    endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.2']),
  ];
}

function allOutput(out: { haproxyConfig: string; auxiliaryFiles: { maps: object; files: object; certificates: object } }): string {
  const aux = out.auxiliaryFiles as { maps: Record<string, string>; files: Record<string, string>; certificates: Record<string, string> };
  return [out.haproxyConfig, ...Object.values(aux.maps), ...Object.values(aux.files), ...Object.values(aux.certificates)].join('\n');
}

interface Case {
  readonly title: string;
  readonly object: KubeObject;
  /** `Kind namespace/name` of the rejected object. */
  readonly names: string;
  /** The field path the message must name. */
  readonly field: string;
  /** A fragment of the unsafe value that must never reach the output. */
  readonly marker: string;
}

const cases: Case[] = [
  {
    title: 'a newline in an annotation',
    object: ingress(
      'evil',
      'annotated',
      { rules: [rule('annotated.example.com', { service: 'web' })] },
      { annotations: { 'haproxy.org/note': 'ok\n  use_backend injected_annotation' } },
    ),
    names: 'Ingress evil/annotated',
    field: 'metadata.annotations["haproxy.org/note"]',
    marker: 'annotated.example.com',
  },
  {
    title: 'a space in a host',
    object: ingress('evil', 'spaced', { rules: [rule('spaced.example.com injected_host', { service: 'web' })] }),
    names: 'Ingress evil/spaced',
    field: 'spec.rules[0].host',
    marker: 'injected_host',
  },
  {
    title: 'a newline in a host',
    object: ingress('evil', 'multiline', { rules: [rule('nl.example.com\nbackend injected_nl', { service: 'web' })] }),
    names: 'Ingress evil/multiline',
    field: 'spec.rules[0].host',
    marker: 'injected_nl',
  },
  {
    title: 'a quote in a path',
    object: ingress('evil', 'quoted', { rules: [rule('quoted.example.com', { path: '/a', service: 'web' }, { path: '/x"injected_quote', service: 'web' })] }),
    names: 'Ingress evil/quoted',
    field: 'spec.rules[0].http.paths[1].path',
    // Only the bad path goes: quoted.example.com/a still routes.
    marker: 'injected_quote',
  },
  {
    title: 'a bad pathType',
    object: ingress('evil', 'regex', { rules: [rule('regex.example.com', { path: '/a', pathType: 'Regex', service: 'web' })] }),
    names: 'Ingress evil/regex',
    field: 'spec.rules[0].http.paths[0].pathType',
    marker: 'regex.example.com',
  },
  {
    title: 'a non-IP endpoint address',
    object: endpointSlice('shop', 'web', ['10.0.0.9', 'pod.injected-endpoint.local'], undefined, 'web-fqdn'),
    names: 'EndpointSlice shop/web-fqdn',
    field: 'endpoints[1].addresses',
    // Only the bad endpoint goes: 10.0.0.9 stays a server.
    marker: 'injected-endpoint',
  },
];

function caseObject(title: string): KubeObject {
  const found = cases.find((c) => c.title === title);
  if (found === undefined) throw new Error(`no case ${title}`);
  return found.object;
}

describe('guardObject', () => {
  it.each(cases)('rejects $title with a message naming the object and the field', ({ object, names, field }) => {
    const reason = reasonOf(object);
    expect(reason.startsWith(`${names}: `)).toBe(true);
    expect(reason).toContain(field);
  });

  it('accepts well-formed Ingresses, Services, EndpointSlices and Secrets as they are', () => {
    for (const object of [...healthy(), tlsSecret('shop', 'tls'), endpointSlice('shop', 'v6', ['fd00::1'])]) {
      const verdict = verdictOf(object);
      expect(verdict.ok && verdict.rejections, describeObject(object)).toEqual([]);
      expect(verdict.ok && verdict.object, describeObject(object)).toBe(object);
    }
  });

  it('accepts a wildcard host, ImplementationSpecific paths and percent-encoded path characters', () => {
    const object = ingress('shop', 'ok', {
      rules: [rule('*.shop.example.com', { path: '/a%20b/c;v=1', pathType: 'ImplementationSpecific', service: 'web' })],
    });
    expect(verdictOf(object)).toMatchObject({ ok: true, rejections: [] });
  });

  it('never accepts an object that no store admitted', () => {
    const verdict = guardObject(ingress('shop', 'loose', {}));
    expect(verdict.ok).toBe(false);
    expect(!verdict.ok && verdict.reason).toContain('was not admitted by a store');
  });

  it.each([
    ['an upper-case host', ingress('ns', 'a', { rules: [rule('Shop.example.com', { service: 'web' })] }), 'spec.rules[0].host'],
    ['a path without a leading slash', ingress('ns', 'a', { rules: [rule('a.example.com', { path: 'api', service: 'web' })] }), 'spec.rules[0].http.paths[0].path'],
    ['a # in a path', ingress('ns', 'a', { rules: [rule('a.example.com', { path: '/a#b', service: 'web' })] }), 'spec.rules[0].http.paths[0].path'],
    ['a TLS host with a space', ingress('ns', 'a', { tls: [{ hosts: ['a b'], secretName: 's' }] }), 'spec.tls[0].hosts'],
    ['a backend without a service', ingress('ns', 'a', { defaultBackend: { resource: { kind: 'Bucket', name: 'b' } } }), 'spec.defaultBackend.service'],
    ['a service port out of range', service('ns', 'a', [{ port: 70000 }]), 'spec.ports[0].port'],
    ['an EndpointSlice port name with a space', endpointSlice('ns', 'a', ['10.0.0.1'], { name: 'a b', port: 80 }), 'ports[0].name'],
    ['Secret data that is not base64', tlsSecret('ns', 'a', { 'tls.crt': 'not base64!\nfrontend x' }), 'data["tls.crt"]'],
    ['a namespace that is not a DNS label', ingress('Bad_NS', 'a', {}), 'metadata.namespace'],
  ])('rejects %s, naming the field', (_title, object, field) => {
    expect(reasonOf(object)).toContain(field);
  });

  it('caches the verdict per object identity', () => {
    const object = healthy()[0] as KubeObject;
    expect(verdictOf(object)).toBe(verdictOf(object));
    const bad = caseObject('a newline in an annotation');
    expect(verdictOf(bad)).toBe(verdictOf(bad));
    const partly = caseObject('a quote in a path');
    const view = verdictOf(partly);
    expect(view).toBe(verdictOf(partly));
    // The view handed out maps to the same verdict.
    expect(view.ok && checkObjectAs(view.object, 'Ingress')).toBe(view);
  });

  it('describes objects as Kind namespace/name, or Kind name when cluster-scoped', () => {
    expect(describeObject(service('shop', 'web'))).toBe('Service shop/web');
    expect(describeObject({ kind: 'IngressClass', metadata: { name: 'haproxy' } })).toBe('IngressClass haproxy');
  });
});

describe('rejected objects in a render with the default template set', () => {
  let set: TemplateSetSource;
  beforeAll(async () => {
    set = await defaultTemplateSet();
  });

  it('renders a healthy cluster without warnings', () => {
    const out = renderOk(set, healthy());
    expect(out.warnings).toEqual([]);
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toBe('shop.example.com/ ing_shop_web_web_80\n');
  });

  it.each(cases)('leaves out an object with $title, warns naming it, and still renders the rest', ({ object, names, field, marker }) => {
    const base = renderOk(set, healthy());
    const out = renderOk(set, [...healthy(), object, service('evil', 'web'), endpointSlice('evil', 'web', ['10.1.0.1'])]);
    const warning = out.warnings.find((w) => w.startsWith(`rejected ${names}: `));
    expect(warning, out.warnings.join('\n')).toBeDefined();
    expect(warning).toContain(field);
    // The healthy app still routes and still has its servers.
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toContain('shop.example.com/ ing_shop_web_web_80\n');
    expect(out.haproxyConfig).toContain('server srv1 10.0.0.1:8080\n');
    expect(out.haproxyConfig).toContain('server srv2 10.0.0.2:8080\n');
    // Nothing of the rejected object reaches the output, but for the claim a rejected Ingress
    // keeps on its hosts (held-claims.ts): `<host> default_503` in the host fallback map.
    const held = out.auxiliaryFiles.maps['host-fallback.map'] ?? '';
    expect(held.split('\n').every((line) => line === '' || /^[a-z0-9.*-]+ default_503$/.test(line)), held).toBe(true);
    expect(allOutput(out).replace(held, '')).not.toContain(marker);
    expect(allOutput(out)).not.toContain('injected');
    // The healthy app's backend is unchanged by its bad neighbour (a slice of its own Service adds its good endpoint).
    if (object.kind === 'EndpointSlice') return;
    const webBackend = (config: string): string => config.slice(config.indexOf('backend ing_shop_web_web_80'));
    expect(webBackend(out.haproxyConfig).split('\n\n')[0]).toBe(webBackend(base.haproxyConfig).split('\n\n')[0]);
  });

  it('reports each rejected object once per render even though several templates read it', () => {
    const bad = caseObject('a space in a host');
    const out = renderOk(set, [...healthy(), bad]);
    expect(out.warnings.filter((w) => w.includes('Ingress evil/spaced'))).toHaveLength(1);
  });

  it('leaves out a rejected path through the InlinePipeline and StoreProvider too, and reports it as data', async () => {
    const stores = new StoreProvider(set.stores);
    const bad = caseObject('a quote in a path');
    for (const object of [...healthy(), bad]) stores.store(storeNameFor(object, set.stores)).upsert(object);
    const result = await new InlinePipeline({ templateSet: set }).execute(new AbortController().signal, stores, 'reconcile');
    expect(result.warnings.some((w) => w.startsWith('rejected Ingress evil/quoted: spec.rules[0].http.paths[1].path'))).toBe(true);
    expect(result.rejections).toEqual([
      expect.objectContaining({ kind: 'Ingress', namespace: 'evil', name: 'quoted', scope: 'path', reason: expect.stringContaining('spec.rules[0].http.paths[1].path') }),
    ]);
    expect(result.auxiliaryFiles.maps['host-prefix.map']).toContain('shop.example.com/ ing_shop_web_web_80\n');
    expect(result.auxiliaryFiles.maps['host-prefix.map']).toContain('quoted.example.com/a/ ing_evil_quoted_web_80\n');
    expect(result.auxiliaryFiles.maps['host-prefix.map']).not.toContain('injected');
  });

  it('drops only the bad endpoint of an EndpointSlice and keeps its other endpoints and the other slices', () => {
    const bad = caseObject('a non-IP endpoint address');
    const out = renderOk(set, [...healthy(), bad]);
    const servers = out.haproxyConfig.split('\n').filter((l) => l.includes('server srv') && !l.endsWith('disabled'));
    expect(servers.map((l) => l.trim().replace(/ check$/, ''))).toEqual(['server srv1 10.0.0.1:8080', 'server srv2 10.0.0.2:8080', 'server srv3 10.0.0.9:8080']);
    expect(out.rejections).toEqual([expect.objectContaining({ kind: 'EndpointSlice', name: 'web-fqdn', scope: 'endpoint' })]);
  });
});

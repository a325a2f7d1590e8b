// Rejections cost the smallest unit (issue 11 §2): a bad path drops that path, a bad TLS host or
// entry or Secret drops TLS for those hosts only (HTTP keeps routing them), a bad annotation value
// drops its Ingress, and no shape error of any object ever fails a render. Each rejection comes
// out of the render as data: kind, namespace, name, scope and reason.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { registerAnnotationCheck } from '../../../src/worker/store/object-guard.js';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderObjects, renderOk, rule, service, tlsSecret } from '../../helpers/cluster.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const backing = (ns: string): KubeObject[] => [service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.0.1'])];

function hostRoutes(out: { auxiliaryFiles: { maps: Readonly<Record<string, string>> } }): string {
  return out.auxiliaryFiles.maps['host-prefix.map'] ?? '';
}

function crtList(out: { auxiliaryFiles: { files: Readonly<Record<string, string>> } }): string {
  return out.auxiliaryFiles.files['crt-list.txt'] ?? '';
}

describe('the smallest unit goes', () => {
  it('drops a bad path and keeps routing the Ingress\'s other paths', () => {
    const app = ingress('shop', 'web', {
      rules: [rule('shop.example.com', { path: '/good', service: 'web' }, { path: '/bad path', service: 'web' }, { path: '/also-good', service: 'web' })],
    });
    const out = renderOk(set, [app, ...backing('shop')]);
    expect(hostRoutes(out)).toBe('shop.example.com/also-good/ ing_shop_web_web_80\nshop.example.com/good/ ing_shop_web_web_80\n');
    expect(out.rejections).toEqual([
      { kind: 'Ingress', namespace: 'shop', name: 'web', scope: 'path', reason: expect.stringMatching(/^spec\.rules\[0\]\.http\.paths\[1\]\.path "\/bad path" is not a safe URL path.*; the path is dropped$/) },
    ]);
    expect(out.warnings).toContain(`rejected Ingress shop/web: ${out.rejections[0]?.reason}`);
  });

  it('drops a rule with a bad host and keeps the Ingress\'s other rules', () => {
    const app = ingress('shop', 'web', {
      rules: [rule('bad_host.example.com', { path: '/', service: 'web' }), rule('shop.example.com', { path: '/', service: 'web' })],
    });
    const out = renderOk(set, [app, ...backing('shop')]);
    expect(hostRoutes(out)).toBe('shop.example.com/ ing_shop_web_web_80\n');
    expect(out.rejections).toEqual([expect.objectContaining({ scope: 'path', reason: expect.stringContaining('spec.rules[0].host "bad_host.example.com"') })]);
  });

  it('drops a resource backend path alone, where it used to cost the whole Ingress', () => {
    const app = ingress('shop', 'web', {
      rules: [
        {
          host: 'shop.example.com',
          http: {
            paths: [
              { path: '/static', pathType: 'Prefix', backend: { resource: { apiGroup: 'k8s.example.com', kind: 'Bucket', name: 'assets' } } },
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
            ],
          },
        },
      ],
    });
    const out = renderOk(set, [app, ...backing('shop')]);
    expect(hostRoutes(out)).toBe('shop.example.com/ ing_shop_web_web_80\n');
    expect(out.rejections).toEqual([expect.objectContaining({ scope: 'path', reason: expect.stringContaining('resource backends are not supported') })]);
  });

  it('drops TLS for a bad TLS host only, and HTTP keeps routing every host', () => {
    const app = ingress('shop', 'web', {
      tls: [{ hosts: ['shop.example.com', 'Bad Host'], secretName: 'tls' }],
      rules: [rule('shop.example.com', { path: '/', service: 'web' })],
    });
    const out = renderOk(set, [app, ...backing('shop'), tlsSecret('shop', 'tls')]);
    expect(crtList(out)).toContain('shop.example.com');
    expect(crtList(out)).not.toContain('Bad Host');
    expect(out.rejections).toEqual([expect.objectContaining({ scope: 'tls', reason: expect.stringContaining('spec.tls[0].hosts[1] "Bad Host"') })]);
  });

  it('drops the TLS entry with a bad secretName, keeps the other entries, and keeps HTTP for its hosts', () => {
    const app = ingress('shop', 'web', {
      tls: [
        { hosts: ['a.example.com'], secretName: 'Bad_Name' },
        { hosts: ['b.example.com'], secretName: 'tls' },
      ],
      rules: [rule('a.example.com', { path: '/', service: 'web' }), rule('b.example.com', { path: '/', service: 'web' })],
    });
    const out = renderOk(set, [app, ...backing('shop'), tlsSecret('shop', 'tls')]);
    expect(crtList(out)).toContain('b.example.com');
    expect(crtList(out)).not.toContain('a.example.com');
    expect(hostRoutes(out)).toContain('a.example.com/ ing_shop_web_web_80');
    expect(out.rejections).toEqual([expect.objectContaining({ scope: 'tls', reason: expect.stringContaining('spec.tls[0].secretName "Bad_Name"') })]);
  });

  it('drops the whole Ingress for a bad annotation value', () => {
    const app = ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, { annotations: { 'haproxy.org/x': 'a'.repeat(4097) } });
    const out = renderOk(set, [app, ...backing('shop')]);
    expect(hostRoutes(out)).toBe('');
    expect(out.rejections).toEqual([expect.objectContaining({ scope: 'annotation', reason: expect.stringContaining('is 4097 characters long, over the limit of 4096') })]);
  });
});

describe('the annotation check registry', () => {
  let unregister: (() => void) | undefined;
  afterEach(() => unregister?.());

  it('lets a plugged-in check reject an Ingress for one bad value, and forgets its verdicts when removed', () => {
    const app = ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, { annotations: { 'example.com/allow-list': '10.0.0.0/8, not-an-ip' } });
    const objects = [app, ...backing('shop')];
    expect(hostRoutes(renderOk(set, objects))).toBe('shop.example.com/ ing_shop_web_web_80\n');
    unregister = registerAnnotationCheck({
      name: 'allow-list',
      check: (key, value) => (key === 'example.com/allow-list' && !value.split(',').every((v) => /^[0-9./]+$/.test(v.trim())) ? 'must be IPs or CIDRs' : null),
    });
    const out = renderOk(set, objects);
    expect(hostRoutes(out)).toBe('');
    expect(out.rejections).toEqual([
      expect.objectContaining({ kind: 'Ingress', scope: 'annotation', reason: 'metadata.annotations["example.com/allow-list"] "10.0.0.0/8, not-an-ip": must be IPs or CIDRs' }),
    ]);
    unregister();
    unregister = undefined;
    expect(hostRoutes(renderOk(set, objects))).toBe('shop.example.com/ ing_shop_web_web_80\n');
  });

  it('applies a check only to the kinds it names, and counts a throwing check as a rejection', () => {
    unregister = registerAnnotationCheck({ name: 'explodes', kinds: ['Service'], check: () => { throw new Error('boom'); } });
    const out = renderOk(set, [ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, { annotations: { a: 'b' } }), { ...service('shop', 'web'), metadata: { name: 'web', namespace: 'shop', annotations: { a: 'b' } } }, endpointSlice('shop', 'web', ['10.0.0.1'])]);
    expect(out.rejections).toEqual([expect.objectContaining({ kind: 'Service', scope: 'annotation', reason: expect.stringContaining('the explodes check failed: boom') })]);
  });
});

describe('shape errors are rejections, never render failures', () => {
  const app = (spec: Record<string, unknown>, metadata: Partial<KubeObject['metadata']> = {}): KubeObject => ingress('shop', 'odd', spec, metadata);
  const cases: [string, KubeObject, string][] = [
    ['`annotations:` with nothing after it', app({ rules: [rule('odd.example.com', { service: 'web' })] }, { annotations: null as unknown as Record<string, string> }), 'metadata.annotations is empty'],
    ['annotations that are a list', app({}, { annotations: ['a'] as unknown as Record<string, string> }), 'metadata.annotations is a list of 1'],
    ['labels that are a string', app({}, { labels: 'x' as unknown as Record<string, string> }), 'metadata.labels is "x"'],
    ['a null spec', app(null as unknown as Record<string, unknown>), 'spec is null'],
    ['rules that are a string', app({ rules: 'all' }), 'spec.rules is "all"'],
    ['a null rule', app({ rules: [null] }), 'spec.rules[0] is null'],
    ['paths that are null', app({ rules: [{ host: 'odd.example.com', http: { paths: null } }] }), 'spec.rules[0].http.paths is null'],
    ['a backend that is a number', app({ rules: [{ host: 'odd.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: 42 }] } }] }), 'backend is 42'],
    ['a port that is a string', app({ rules: [rule('odd.example.com', { service: 'web', port: 80 })].map((r) => JSON.parse(JSON.stringify(r).replace('"number":80', '"number":"80"'))) }), 'service.port.number "80"'],
    ['tls that is a mapping', app({ tls: { hosts: ['odd.example.com'] } }), 'spec.tls is a mapping'],
    ['TLS hosts that are a string', app({ tls: [{ hosts: 'odd.example.com', secretName: 's' }] }), 'spec.tls[0].hosts is "odd.example.com"'],
    ['a creationTimestamp that is not a time', app({}, { creationTimestamp: 'yesterday' }), 'metadata.creationTimestamp "yesterday"'],
    ['Service ports that are null', { ...service('shop', 'odd'), spec: { ports: 'http' } }, 'spec.ports is "http"'],
    ['a Service port without a number', { ...service('shop', 'odd'), spec: { ports: [{ name: 'http' }] } }, 'spec.ports[0].port undefined'],
    ['EndpointSlice endpoints that are a mapping', { ...endpointSlice('shop', 'odd', []), endpoints: { a: 1 } }, 'endpoints is a mapping'],
    ['an endpoint that is null', { ...endpointSlice('shop', 'odd', ['10.0.0.1']), endpoints: [null] }, 'endpoints[0] is null'],
    ['endpoint conditions that are a string', { ...endpointSlice('shop', 'odd', ['10.0.0.1']), endpoints: [{ addresses: ['10.0.0.1'], conditions: 'ready' }] }, 'endpoints[0].conditions is "ready"'],
    ['addresses that are a number', { ...endpointSlice('shop', 'odd', ['10.0.0.1']), endpoints: [{ addresses: 7 }] }, 'endpoints[0].addresses is 7'],
    ['Secret data that is a list', { ...tlsSecret('shop', 'odd'), data: ['x'] }, 'data is a list of 1'],
    ['Secret stringData that holds a number', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'odd', namespace: 'shop' }, stringData: { a: 1 } }, 'stringData["a"] is 1'],
  ];

  it.each(cases)('renders beside %s, and reports it', (_title, odd, reason) => {
    const healthy = [ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }), ...backing('shop')];
    const outcome = renderObjects(set, [...healthy, odd]);
    expect(outcome.ok, outcome.ok ? '' : outcome.message).toBe(true);
    if (!outcome.ok) return;
    expect(hostRoutes(outcome)).toContain('shop.example.com/ ing_shop_web_web_80\n');
    expect(outcome.rejections.map((r) => r.reason).join('\n')).toContain(reason);
    expect(outcome.rejections.every((r) => r.name.startsWith('odd'))).toBe(true);
  });
});

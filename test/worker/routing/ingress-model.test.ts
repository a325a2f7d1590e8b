import { beforeAll, describe, expect, it } from 'vitest';
import { loadTemplateSet, parseSetOverrides } from '../../../src/main/template-set/template-set.js';
import { assignSlots, PARKED_ADDRESS, parseSlotFile, SERVER_SLOTS_FILE, type Backend } from '../../../src/worker/routing/ingress-model.js';
import type { KubeObject, RenderBaseline, TemplateSetSource } from '../../../src/worker/protocol.js';
import {
  defaultTemplateSet,
  endpointSlice,
  exampleTlsData,
  ingress,
  renderOk,
  routes,
  routingModel,
  rule,
  service,
  tlsSecret,
  withValues,
  type RenderSuccess,
} from '../../helpers/cluster.js';

/** An Ingress `ns/name` with one rule, a Service `web` (port 80 named http) and its endpoints. */
function app(spec: Record<string, unknown>, ns = 'shop', name = 'web'): KubeObject[] {
  return [ingress(ns, name, spec), service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.0.1'])];
}

function backendNamed(backends: readonly Backend[], name: string): Backend {
  const backend = backends.find((b) => b.name === name);
  if (backend === undefined) throw new Error(`no backend ${name}; have ${backends.map((b) => b.name).join(', ')}`);
  return backend;
}

function enabledAddresses(backend: Backend): string[] {
  return backend.servers.filter((s) => s.enabled).map((s) => s.address);
}

/** `server …` lines of one backend section of a rendered config. */
function serverLines(config: string, backend: string): string[] {
  const section = config.split(/\n(?=backend |frontend )/).find((s) => s.startsWith(`backend ${backend}\n`));
  if (section === undefined) throw new Error(`backend ${backend} is not in the config`);
  return section
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('server '));
}

const WEB = 'ing_shop_web_web_80';

describe('routing of Exact, Prefix and ImplementationSpecific paths', () => {
  it('routes an Exact path through the exact host map only', () => {
    const { model } = routingModel(app({ rules: [rule('shop.example.com', { path: '/foo', pathType: 'Exact', service: 'web' })] }));
    expect(routes(model.hostExact)).toEqual([`shop.example.com/foo ${WEB}`]);
    expect(model.hostPrefix).toEqual([]);
  });

  it('routes a Prefix path /foo through the exact key host/foo and the prefix key host/foo/', () => {
    const { model } = routingModel(app({ rules: [rule('shop.example.com', { path: '/foo', pathType: 'Prefix', service: 'web' })] }));
    expect(routes(model.hostExact)).toEqual([`shop.example.com/foo ${WEB}`]);
    expect(routes(model.hostPrefix)).toEqual([`shop.example.com/foo/ ${WEB}`]);
  });

  it('routes the Prefix path / through the prefix key host/ only', () => {
    const { model } = routingModel(app({ rules: [rule('shop.example.com', { path: '/', pathType: 'Prefix', service: 'web' })] }));
    expect(model.hostExact).toEqual([]);
    expect(routes(model.hostPrefix)).toEqual([`shop.example.com/ ${WEB}`]);
  });

  it('treats a path left out of a Prefix rule as /', () => {
    const { model } = routingModel(app({ rules: [rule('shop.example.com', { pathType: 'Prefix', service: 'web' })] }));
    expect(routes(model.hostPrefix)).toEqual([`shop.example.com/ ${WEB}`]);
  });

  it('ignores a trailing slash on a Prefix path', () => {
    const withSlash = routingModel(app({ rules: [rule('shop.example.com', { path: '/foo/', pathType: 'Prefix', service: 'web' })] })).model;
    const without = routingModel(app({ rules: [rule('shop.example.com', { path: '/foo', pathType: 'Prefix', service: 'web' })] })).model;
    expect(routes(withSlash.hostExact)).toEqual(routes(without.hostExact));
    expect(routes(withSlash.hostPrefix)).toEqual(routes(without.hostPrefix));
  });

  it('keeps a trailing slash on an Exact path', () => {
    const { model } = routingModel(app({ rules: [rule('shop.example.com', { path: '/foo/', pathType: 'Exact', service: 'web' })] }));
    expect(routes(model.hostExact)).toEqual([`shop.example.com/foo/ ${WEB}`]);
  });

  it('routes an ImplementationSpecific path like a Prefix path', () => {
    const { model } = routingModel(app({ rules: [rule('shop.example.com', { path: '/docs', pathType: 'ImplementationSpecific', service: 'web' })] }));
    expect(routes(model.hostExact)).toEqual([`shop.example.com/docs ${WEB}`]);
    expect(routes(model.hostPrefix)).toEqual([`shop.example.com/docs/ ${WEB}`]);
  });

  it('orders prefix keys longest first, so the most specific prefix matches first', () => {
    const objects = [
      ingress('shop', 'web', {
        rules: [
          rule(
            'shop.example.com',
            { path: '/', service: 'web' },
            { path: '/api', service: 'api' },
            { path: '/api/v2/admin', service: 'web' },
          ),
        ],
      }),
      service('shop', 'web'),
      service('shop', 'api'),
    ];
    const { model } = routingModel(objects);
    expect(model.hostPrefix.map((e) => e.key)).toEqual(['shop.example.com/api/v2/admin/', 'shop.example.com/api/', 'shop.example.com/']);
  });

  it('routes rules without a host through the path maps', () => {
    const { model } = routingModel(app({ rules: [rule(undefined, { path: '/status', pathType: 'Exact', service: 'web' }, { path: '/docs', service: 'web' })] }));
    expect(routes(model.pathExact)).toEqual([`/status ${WEB}`, `/docs ${WEB}`]);
    expect(routes(model.pathPrefix)).toEqual([`/docs/ ${WEB}`]);
    expect(model.hostExact).toEqual([]);
    expect(model.hostPrefix).toEqual([]);
    expect(model.hostRegex).toEqual([]);
  });

  it('makes spec.defaultBackend the default backend, not a route', () => {
    const objects = [ingress('shop', 'web', { defaultBackend: { service: { name: 'web', port: { number: 80 } } } }), service('shop', 'web')];
    const { model } = routingModel(objects);
    expect(model.defaultBackend).toBe(WEB);
    expect(model.pathPrefix).toEqual([]);
  });

  describe('wildcard hosts', () => {
    const model = (): ReturnType<typeof routingModel>['model'] =>
      routingModel(
        app({
          rules: [
            rule('*.blog.example.com', { path: '/', pathType: 'Prefix', service: 'web' }, { path: '/api', pathType: 'Prefix', service: 'web' }),
            rule('*.blog.example.com', { path: '/login', pathType: 'Exact', service: 'web' }),
          ],
        }),
      ).model;

    it('go to the regex map and to no other map', () => {
      const m = model();
      expect(m.hostRegex.map((e) => e.backend)).toEqual([WEB, WEB, WEB]);
      expect(m.hostExact).toEqual([]);
      expect(m.hostPrefix).toEqual([]);
      expect(m.pathExact).toEqual([]);
      expect(m.pathPrefix).toEqual([]);
    });

    it('match exactly one extra DNS label in front of the suffix', () => {
      const prefixRoot = new RegExp(model().hostRegex.find((e) => e.key.endsWith('com/'))?.key ?? 'missing');
      expect(prefixRoot.test('alice.blog.example.com/anything')).toBe(true);
      expect(prefixRoot.test('blog.example.com/')).toBe(false);
      expect(prefixRoot.test('a.b.blog.example.com/')).toBe(false);
      expect(prefixRoot.test('aliceXblog.example.com/')).toBe(false);
    });

    it('match a Prefix path on whole path segments and an Exact path on the whole path', () => {
      const keys = model().hostRegex.map((e) => new RegExp(e.key));
      const api = keys.find((r) => r.source.includes('api')) as RegExp;
      const login = keys.find((r) => r.source.includes('login')) as RegExp;
      expect(api.test('a.blog.example.com/api')).toBe(true);
      expect(api.test('a.blog.example.com/api/v1')).toBe(true);
      expect(api.test('a.blog.example.com/apix')).toBe(false);
      expect(login.test('a.blog.example.com/login')).toBe(true);
      expect(login.test('a.blog.example.com/login/more')).toBe(false);
    });
  });
});

describe('route conflicts', () => {
  const objects = (first: { path: string; pathType: string }, second: { path: string; pathType: string }, sameIngress = false): KubeObject[] => {
    const a = { ...first, service: 'alpha' };
    const b = { ...second, service: 'beta' };
    const ingresses = sameIngress
      ? [ingress('shop', 'one', { rules: [rule('shop.example.com', a, b)] })]
      : [ingress('shop', 'one', { rules: [rule('shop.example.com', a)] }), ingress('shop', 'two', { rules: [rule('shop.example.com', b)] })];
    return [...ingresses, service('shop', 'alpha'), service('shop', 'beta')];
  };

  it('gives an Exact path precedence over a Prefix path on the same key without a warning', () => {
    const { model, warnings } = routingModel(objects({ path: '/foo', pathType: 'Prefix' }, { path: '/foo', pathType: 'Exact' }, true));
    expect(routes(model.hostExact)).toEqual(['shop.example.com/foo ing_shop_one_beta_80']);
    expect(routes(model.hostPrefix)).toEqual(['shop.example.com/foo/ ing_shop_one_alpha_80']);
    expect(warnings.filter((w) => w.includes('already served'))).toEqual([]);
  });

  it('gives an Exact path of another Ingress precedence over a Prefix path without a warning', () => {
    const { model, warnings } = routingModel(objects({ path: '/foo', pathType: 'Prefix' }, { path: '/foo', pathType: 'Exact' }));
    expect(routes(model.hostExact)).toEqual(['shop.example.com/foo ing_shop_two_beta_80']);
    expect(routes(model.hostPrefix)).toEqual(['shop.example.com/foo/ ing_shop_one_alpha_80']);
    expect(warnings.filter((w) => w.includes('already served'))).toEqual([]);
  });

  it('keeps the first Ingress of a conflicting route and warns naming both Ingresses', () => {
    const { model, warnings } = routingModel(objects({ path: '/foo', pathType: 'Prefix' }, { path: '/foo', pathType: 'Prefix' }));
    expect(routes(model.hostPrefix)).toEqual(['shop.example.com/foo/ ing_shop_one_alpha_80']);
    expect(routes(model.hostExact)).toEqual(['shop.example.com/foo ing_shop_one_alpha_80']);
    const conflict = warnings.filter((w) => w.includes('already served'));
    expect(conflict.length).toBeGreaterThan(0);
    expect(conflict[0]).toBe('Ingress shop/two: route shop.example.com/foo is already served by Ingress shop/one; ignored');
  });

  it('warns about two Exact routes of different Ingresses on the same key', () => {
    const { model, warnings } = routingModel(objects({ path: '/x', pathType: 'Exact' }, { path: '/x', pathType: 'Exact' }));
    expect(routes(model.hostExact)).toEqual(['shop.example.com/x ing_shop_one_alpha_80']);
    expect(warnings).toContain('Ingress shop/two: route shop.example.com/x is already served by Ingress shop/one; ignored');
  });

  it('does not warn when two Ingresses route different paths of one host', () => {
    const { warnings } = routingModel(objects({ path: '/a', pathType: 'Prefix' }, { path: '/b', pathType: 'Prefix' }));
    expect(warnings.filter((w) => w.includes('already served'))).toEqual([]);
  });
});

describe('ingress class filtering', () => {
  const cluster = (): KubeObject[] => [
    ingress('ns', 'ours', { ingressClassName: 'haproxy', rules: [rule('ours.example.com', { service: 'web' })] }),
    ingress('ns', 'annotated', { rules: [rule('annotated.example.com', { service: 'web' })] }, { annotations: { 'kubernetes.io/ingress.class': 'haproxy' } }),
    ingress('ns', 'classless', { rules: [rule('classless.example.com', { service: 'web' })] }),
    ingress('ns', 'nginx', { ingressClassName: 'nginx', rules: [rule('nginx.example.com', { service: 'web' })] }),
    ingress('ns', 'custom', { ingressClassName: 'x', rules: [rule('custom.example.com', { service: 'web' })] }),
    service('ns', 'web'),
  ];
  const hosts = (values: Record<string, unknown>): string[] =>
    routingModel(cluster(), values)
      .model.hostPrefix.map((e) => e.key.split('/')[0] as string)
      .sort();

  it('accepts class haproxy, the class annotation and Ingresses without a class by default', () => {
    expect(hosts({})).toEqual(['annotated.example.com', 'classless.example.com', 'ours.example.com']);
  });

  it('accepts only the configured class (and classless Ingresses) when ingressClass is set', () => {
    expect(hosts({ ingressClass: 'x' })).toEqual(['classless.example.com', 'custom.example.com']);
  });

  it('leaves Ingresses without a class out when watchIngressWithoutClass is false', () => {
    expect(hosts({ watchIngressWithoutClass: false })).toEqual(['annotated.example.com', 'ours.example.com']);
    expect(hosts({ watchIngressWithoutClass: 'false' })).toEqual(['annotated.example.com', 'ours.example.com']);
  });

  it('applies --set ingressClass=x and watchIngressWithoutClass=false through the template set', async () => {
    const set = await loadTemplateSet(undefined, parseSetOverrides(['ingressClass=x', 'watchIngressWithoutClass=false']));
    const out = renderOk(set, cluster());
    expect(out.auxiliaryFiles.maps['host-prefix.map']).toBe('custom.example.com/ ing_ns_custom_web_80\n');
    expect(out.haproxyConfig).toContain('backend ing_ns_custom_web_80\n');
    expect(out.haproxyConfig).not.toContain('ing_ns_ours_');
  });
});

describe('services and endpoints', () => {
  it('warns about a missing Service and renders its backend with no enabled server', async () => {
    const set = await defaultTemplateSet();
    const out = renderOk(set, [ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'ghost' })] })]);
    expect(out.warnings).toContain('Ingress shop/web: service shop/ghost not found; its backend has no servers');
    const lines = serverLines(out.haproxyConfig, 'ing_shop_web_ghost_80');
    expect(lines).toHaveLength(10);
    expect(lines.every((l) => l.endsWith(`${PARKED_ADDRESS} disabled`))).toBe(true);
  });

  it('warns about a Service port that does not exist and gives its backend no servers', () => {
    const objects = [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'web', port: 81 }, { path: '/n', service: 'web', port: 'grpc' })] }),
      service('shop', 'web'),
      endpointSlice('shop', 'web', ['10.0.0.1']),
    ];
    const { model, warnings } = routingModel(objects);
    expect(warnings).toContain('Ingress shop/web: service shop/web has no port 81; its backend has no servers');
    expect(warnings).toContain('Ingress shop/web: service shop/web has no port grpc; its backend has no servers');
    expect(enabledAddresses(backendNamed(model.backends, 'ing_shop_web_web_81'))).toEqual([]);
    expect(enabledAddresses(backendNamed(model.backends, 'ing_shop_web_web_grpc'))).toEqual([]);
  });

  it('resolves a Service port by name to the EndpointSlice port of the same name', () => {
    const objects = [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'web', port: 'http' })] }),
      service('shop', 'web', [
        { name: 'http', port: 80 },
        { name: 'admin', port: 9000 },
      ]),
      {
        ...endpointSlice('shop', 'web', ['10.0.0.1']),
        ports: [
          { name: 'admin', port: 9901 },
          { name: 'http', port: 8080 },
        ],
      },
    ];
    expect(enabledAddresses(backendNamed(routingModel(objects).model.backends, 'ing_shop_web_web_http'))).toEqual(['10.0.0.1:8080']);
  });

  it('excludes endpoints that are not ready and includes those without a ready condition', () => {
    const objects = [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'web' })] }),
      service('shop', 'web'),
      endpointSlice('shop', 'web', [{ address: '10.0.0.1', ready: true }, { address: '10.0.0.2', ready: false }, { address: '10.0.0.3' }]),
    ];
    expect(enabledAddresses(backendNamed(routingModel(objects).model.backends, WEB))).toEqual(['10.0.0.1:8080', '10.0.0.3:8080']);
  });

  it('merges the endpoints of every EndpointSlice of a Service', () => {
    const objects = [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'web' })] }),
      service('shop', 'web'),
      endpointSlice('shop', 'web', ['10.0.0.2'], undefined, 'web-a'),
      endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.2'], undefined, 'web-b'),
    ];
    expect(enabledAddresses(backendNamed(routingModel(objects).model.backends, WEB))).toEqual(['10.0.0.1:8080', '10.0.0.2:8080']);
  });

  it('brackets IPv6 endpoint addresses and renders them as valid server lines', async () => {
    const objects = [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'web' })] }),
      service('shop', 'web'),
      { ...endpointSlice('shop', 'web', ['fd00::1', '2001:db8::2']), addressType: 'IPv6' },
    ];
    expect(enabledAddresses(backendNamed(routingModel(objects).model.backends, WEB))).toEqual(['[2001:db8::2]:8080', '[fd00::1]:8080']);
    const out = renderOk(await defaultTemplateSet(), objects);
    expect(serverLines(out.haproxyConfig, WEB).slice(0, 2)).toEqual(['server srv1 [2001:db8::2]:8080', 'server srv2 [fd00::1]:8080']);
  });

  it('uses one backend per ingress, service and port, shared by every path that names them', () => {
    const { model } = routingModel(app({ rules: [rule('a.example.com', { path: '/x', service: 'web' }), rule('b.example.com', { path: '/y', service: 'web' })] }));
    expect(model.backends.map((b) => b.name)).toEqual([WEB]);
  });
});

describe('TLS certificates', () => {
  it('builds one PEM (certificate then key) per referenced Secret, named namespace_secret.pem, with its hosts sorted', () => {
    const data = exampleTlsData();
    const objects = [
      ...app({
        tls: [{ hosts: ['www.shop.example.com', 'shop.example.com'], secretName: 'shop-tls' }],
        rules: [rule('shop.example.com', { service: 'web' }), rule('www.shop.example.com', { service: 'web' })],
      }),
      tlsSecret('shop', 'shop-tls', data),
    ];
    const { model, warnings } = routingModel(objects);
    expect(warnings).toEqual([]);
    expect(model.certificates).toHaveLength(1);
    const cert = model.certificates[0];
    expect(cert?.name).toBe('shop_shop-tls.pem');
    expect(cert?.hosts).toEqual(['shop.example.com', 'www.shop.example.com']);
    const crt = Buffer.from(data['tls.crt'], 'base64').toString('utf8').trim();
    const key = Buffer.from(data['tls.key'], 'base64').toString('utf8').trim();
    expect(cert?.pem).toBe(`${crt}\n${key}\n`);
  });

  it('merges the hosts of Ingresses that share a Secret into one certificate', () => {
    const objects = [
      ingress('shop', 'a', { tls: [{ hosts: ['a.example.com'], secretName: 'wild' }], rules: [rule('a.example.com', { service: 'web' })] }),
      ingress('shop', 'b', { tls: [{ hosts: ['b.example.com', 'a.example.com'], secretName: 'wild' }], rules: [rule('b.example.com', { service: 'web' })] }),
      service('shop', 'web'),
      tlsSecret('shop', 'wild'),
    ];
    const { model } = routingModel(objects);
    expect(model.certificates.map((c) => [c.name, c.hosts])).toEqual([['shop_wild.pem', ['a.example.com', 'b.example.com']]]);
  });

  it('warns about a missing Secret and serves its hosts without a certificate', () => {
    const objects = app({ tls: [{ hosts: ['shop.example.com'], secretName: 'gone' }], rules: [rule('shop.example.com', { service: 'web' })] });
    const { model, warnings } = routingModel(objects);
    expect(model.certificates).toEqual([]);
    expect(warnings).toEqual([
      'Ingress shop/web: TLS secret shop/gone is missing or has no tls.crt/tls.key; its hosts are served without it',
    ]);
  });

  it('warns about a Secret without tls.key', () => {
    const objects = [
      ...app({ tls: [{ secretName: 'half' }], rules: [rule('shop.example.com', { service: 'web' })] }),
      tlsSecret('shop', 'half', { 'tls.crt': exampleTlsData()['tls.crt'] }),
    ];
    const { model, warnings } = routingModel(objects);
    expect(model.certificates).toEqual([]);
    expect(warnings.filter((w) => w.includes('TLS secret shop/half is missing or has no tls.crt/tls.key'))).toHaveLength(1);
  });

  it('renders an HTTPS frontend, a crt-list and the PEM file only when a certificate exists', async () => {
    const set = await defaultTemplateSet();
    const plain = renderOk(set, app({ rules: [rule('shop.example.com', { service: 'web' })] }));
    expect(plain.haproxyConfig).not.toContain('frontend https');
    expect(plain.auxiliaryFiles.certificates).toEqual({});

    const tls = renderOk(set, [
      ...app({ tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }], rules: [rule('shop.example.com', { service: 'web' })] }),
      tlsSecret('shop', 'shop-tls'),
    ]);
    // Without a default certificate the bind is strict-sni: an unknown SNI gets no certificate.
    expect(tls.haproxyConfig).toContain('frontend https\n  bind *:443 ssl crt-list /etc/haproxy/files/crt-list.txt alpn h2,http/1.1 strict-sni\n');
    expect(tls.auxiliaryFiles.files['crt-list.txt']).toBe('/etc/haproxy/certs/shop_shop-tls.pem shop.example.com\n');
    expect(Object.keys(tls.auxiliaryFiles.certificates)).toEqual(['shop_shop-tls.pem']);
    expect(tls.auxiliaryFiles.certificates['shop_shop-tls.pem']).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]*-----END PRIVATE KEY-----\n$/);
  });
});

describe('server slots', () => {
  const slots = (servers: readonly { address: string; enabled: boolean }[]): string[] => servers.map((s) => (s.enabled ? s.address : '-'));

  it('fills slots in order and parks the rest, disabled, at the parking address', () => {
    const servers = assignSlots(['10.0.0.1:80', '10.0.0.2:80'], undefined, 4);
    expect(servers).toEqual([
      { name: 'srv1', address: '10.0.0.1:80', enabled: true },
      { name: 'srv2', address: '10.0.0.2:80', enabled: true },
      { name: 'srv3', address: PARKED_ADDRESS, enabled: false },
      { name: 'srv4', address: PARKED_ADDRESS, enabled: false },
    ]);
  });

  it('keeps surviving endpoints in their slots and puts new endpoints into freed slots', () => {
    const servers = assignSlots(['b:1', 'c:1', 'd:1', 'e:1'], ['a:1', 'b:1', '', 'c:1'], 4);
    expect(slots(servers)).toEqual(['d:1', 'b:1', 'e:1', 'c:1']);
  });

  it('grows by whole blocks when the endpoints outnumber the slots', () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `10.0.0.${i + 1}:80`);
    expect(assignSlots(eleven, undefined, 10)).toHaveLength(20);
    expect(assignSlots(eleven.slice(0, 10), undefined, 10)).toHaveLength(10);
    expect(assignSlots([], undefined, 10)).toHaveLength(10);
    const previous = eleven.slice(0, 10);
    const grown = assignSlots(eleven, previous, 10);
    expect(slots(grown).slice(0, 10)).toEqual(previous);
    expect(slots(grown).slice(10)).toEqual(['10.0.0.11:80', '-', '-', '-', '-', '-', '-', '-', '-', '-']);
  });

  it('keeps the slot count of a baseline while at least half the slots are in use, and shrinks it after a spike', () => {
    const previous = Array.from({ length: 20 }, (_, i) => `10.0.0.${i + 1}:80`);
    const stays = assignSlots(previous.slice(5), previous, 10);
    expect(stays).toHaveLength(20);
    expect(slots(stays).slice(5)).toEqual(previous.slice(5));
    // One endpoint left of 20: back to one block, the survivor moved into it.
    const servers = assignSlots(['10.0.0.20:80'], previous, 10);
    expect(servers).toHaveLength(10);
    expect(slots(servers).filter((s) => s !== '-')).toEqual(['10.0.0.20:80']);
  });

  describe('across renders with a baseline', () => {
    let set: TemplateSetSource;
    beforeAll(async () => {
      set = await defaultTemplateSet();
    });

    const cluster = (addresses: string[]): KubeObject[] => [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { service: 'web' })] }),
      service('shop', 'web'),
      endpointSlice('shop', 'web', addresses),
    ];
    const baselineOf = (out: RenderSuccess): RenderBaseline => ({ haproxyConfig: out.haproxyConfig, auxiliaryFiles: out.auxiliaryFiles });

    it('writes the slot assignment to server-slots.txt', () => {
      const out = renderOk(set, cluster(['10.0.0.1', '10.0.0.2']));
      // One line per backend: its slots in order, '-' for an empty one.
      expect(out.auxiliaryFiles.files[SERVER_SLOTS_FILE]).toBe(`${WEB} 10.0.0.1:8080 10.0.0.2:8080 - - - - - - - -\n`);
      expect(parseSlotFile(out.auxiliaryFiles.files[SERVER_SLOTS_FILE]).get(WEB)).toEqual(['10.0.0.1:8080', '10.0.0.2:8080', '', '', '', '', '', '', '', '']);
    });

    it('keeps surviving endpoints in their slots through endpoint churn and changes only the freed slot', () => {
      const first = renderOk(set, cluster(['10.0.0.1', '10.0.0.2', '10.0.0.3']));
      // 10.0.0.1 goes away; 10.0.0.0 (which sorts first) arrives.
      const second = renderOk(set, cluster(['10.0.0.0', '10.0.0.2', '10.0.0.3']), baselineOf(first));
      const before = serverLines(first.haproxyConfig, WEB);
      const after = serverLines(second.haproxyConfig, WEB);
      expect(after).toHaveLength(before.length);
      const changed = after.map((line, i) => (line === before[i] ? null : `${before[i]} -> ${line}`)).filter((c) => c !== null);
      expect(changed).toEqual(['server srv1 10.0.0.1:8080 -> server srv1 10.0.0.0:8080']);
    });

    it('renders slots from scratch in sorted order without a baseline', () => {
      const out = renderOk(set, cluster(['10.0.0.0', '10.0.0.2', '10.0.0.3']));
      expect(serverLines(out.haproxyConfig, WEB).slice(0, 3)).toEqual([
        'server srv1 10.0.0.0:8080',
        'server srv2 10.0.0.2:8080',
        'server srv3 10.0.0.3:8080',
      ]);
    });

    it('disables the slot of a removed endpoint without moving the others', () => {
      const first = renderOk(set, cluster(['10.0.0.1', '10.0.0.2', '10.0.0.3']));
      const second = renderOk(set, cluster(['10.0.0.1', '10.0.0.3']), baselineOf(first));
      expect(serverLines(second.haproxyConfig, WEB).slice(0, 3)).toEqual([
        'server srv1 10.0.0.1:8080',
        `server srv2 ${PARKED_ADDRESS} disabled`,
        'server srv3 10.0.0.3:8080',
      ]);
    });

    it('grows a backend by a whole block of serverSlots when it runs out of slots', () => {
      const small = withValues(set, { serverSlots: 4 });
      const first = renderOk(small, cluster(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']));
      expect(serverLines(first.haproxyConfig, WEB)).toHaveLength(4);
      const second = renderOk(small, cluster(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5']), baselineOf(first));
      const lines = serverLines(second.haproxyConfig, WEB);
      expect(lines).toHaveLength(8);
      expect(lines.slice(0, 4)).toEqual(serverLines(first.haproxyConfig, WEB));
      expect(lines[4]).toBe('server srv5 10.0.0.5:8080');
    });
  });
});

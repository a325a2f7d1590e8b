import { describe, expect, it } from 'vitest';
import { ingress, routes, routingModel, rule, service } from '../../helpers/cluster.js';
import { app, WEB } from './ingress-fixtures.js';

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

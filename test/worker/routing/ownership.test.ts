import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { RouteIndex, routeTables, type RouteCandidate } from '../../../src/worker/routing/route-index.js';
import { endpointSlice, ingress, routes, routingModel, rule, service, tlsSecret } from '../../helpers/cluster.js';

const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
const NEW = { creationTimestamp: '2025-06-01T00:00:00Z' };

/** Services `web` and `api` (with endpoints) in each namespace, so only ownership warnings remain. */
function services(...namespaces: string[]): KubeObject[] {
  return namespaces.flatMap((ns) => [service(ns, 'web'), service(ns, 'api'), endpointSlice(ns, 'web', ['10.0.0.1']), endpointSlice(ns, 'api', ['10.0.0.2'])]);
}

describe('Exact before Prefix on the same path', () => {
  it('orders the wildcard regex table Exact keys first, so an Exact path beats a longer Prefix regex', () => {
    const { model } = routingModel([
      ingress('shop', 'wild', {
        rules: [rule('*.wild.example.com', { path: '/foo', pathType: 'Prefix', service: 'web' }, { path: '/foo', pathType: 'Exact', service: 'api' })],
      }),
      ...services('shop'),
    ]);
    const first = model.hostRegex.find((entry) => new RegExp(entry.key).test('a.wild.example.com/foo'));
    expect(first?.backend).toBe('ing_shop_wild_api_80');
    const forSubpath = model.hostRegex.find((entry) => new RegExp(entry.key).test('a.wild.example.com/foo/bar'));
    expect(forSubpath?.backend).toBe('ing_shop_wild_web_80');
  });

  it('keeps Exact keys first in the regex table when routes arrive one by one', () => {
    const prefix: RouteCandidate = { host: '*.w.example.com', path: '/a', exact: false, backend: 'p', owner: 'Ingress ns/a', namespace: 'ns', created: 0 };
    const exact: RouteCandidate = { ...prefix, exact: true, backend: 'e', owner: 'Ingress ns/b' };
    const index = new RouteIndex();
    index.add([prefix]);
    const before = index.tables(undefined, () => [prefix], () => undefined);
    index.add([exact]);
    const after = index.tables(before, () => [prefix, exact], () => undefined);
    expect(after.hostRegex.map((e) => e.backend)).toEqual(['e', 'p']);
    expect(after).toEqual(routeTables([prefix, exact], () => undefined));
  });

  it('gives an Exact host-less path precedence over a Prefix one, through the exact path map', () => {
    const { model } = routingModel([
      ingress('shop', 'a', { rules: [rule(undefined, { path: '/x', pathType: 'Prefix', service: 'web' })] }),
      ingress('shop', 'b', { rules: [rule(undefined, { path: '/x', pathType: 'Exact', service: 'api' })] }),
      ...services('shop'),
    ]);
    expect(routes(model.pathExact)).toEqual(['/x ing_shop_b_api_80']);
    expect(routes(model.pathPrefix)).toEqual(['/x/ ing_shop_a_web_80']);
  });
});

describe('ownership of hosts and paths across namespaces', () => {
  const claim = (ns: string, name: string, metadata: Record<string, unknown>, pathType = 'Prefix'): KubeObject =>
    ingress(ns, name, { rules: [rule('shop.example.com', { path: '/', pathType, service: 'web' })] }, metadata);

  it('keeps a host and path with its oldest claimant, whatever the namespace names, and warns naming both', () => {
    const { model, warnings } = routingModel([claim('shop', 'front', OLD), claim('aaa', 'grab', NEW), ...services('shop', 'aaa')]);
    expect(routes(model.hostPrefix)).toEqual(['shop.example.com/ ing_shop_front_web_80']);
    expect(warnings).toContain('Ingress aaa/grab: route shop.example.com/ is already served by Ingress shop/front; ignored');
  });

  it('refuses a newer Exact claim on the same host and path from another namespace', () => {
    const { model, warnings } = routingModel([claim('shop', 'front', OLD), claim('aaa', 'grab', NEW, 'Exact'), ...services('shop', 'aaa')]);
    expect(model.hostExact).toEqual([]);
    expect(warnings).toContain('Ingress aaa/grab: route shop.example.com/ is already served by Ingress shop/front; ignored');
  });

  it('ranks an Ingress without a creationTimestamp after one that has it', () => {
    const { model } = routingModel([claim('aaa', 'grab', {}), claim('shop', 'front', NEW), ...services('shop', 'aaa')]);
    expect(routes(model.hostPrefix)).toEqual(['shop.example.com/ ing_shop_front_web_80']);
  });

  it('falls back to namespace/name order between Ingresses of the same age', () => {
    const { model } = routingModel([claim('shop', 'front', OLD), claim('aaa', 'grab', OLD), ...services('shop', 'aaa')]);
    expect(routes(model.hostPrefix)).toEqual(['shop.example.com/ ing_aaa_grab_web_80']);
  });

  it('ranks by namespace/name alone with routeOwnership: name', () => {
    const { model } = routingModel([claim('shop', 'front', OLD), claim('aaa', 'grab', NEW), ...services('shop', 'aaa')], { routeOwnership: 'name' });
    expect(routes(model.hostPrefix)).toEqual(['shop.example.com/ ing_aaa_grab_web_80']);
  });

  it('refuses a routeOwnership that is not one of its choices', () => {
    expect(() => routingModel([], { routeOwnership: 'newest' })).toThrow('values.routeOwnership must be one of oldest, name, got "newest"');
  });

  it('lets Ingresses of one namespace share a host, an Exact path beating a Prefix path', () => {
    const { model, warnings } = routingModel([claim('shop', 'front', OLD), claim('shop', 'landing', NEW, 'Exact'), ...services('shop')]);
    expect(routes(model.hostExact)).toEqual(['shop.example.com/ ing_shop_landing_web_80']);
    expect(routes(model.hostPrefix)).toEqual(['shop.example.com/ ing_shop_front_web_80']);
    expect(warnings.filter((w) => w.includes('already served'))).toEqual([]);
  });
});

describe('ownership of a whole host, and of a wildcard with the hosts under it', () => {
  it('refuses a newer path under another namespace\'s host, whatever the path', () => {
    const { model, warnings } = routingModel([
      ingress('shop', 'front', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, OLD),
      ingress('aaa', 'grab', { rules: [rule('shop.example.com', { path: '/login', pathType: 'Exact', service: 'web' }, { path: '/api', service: 'web' })] }, NEW),
      ...services('shop', 'aaa'),
    ]);
    expect([...routes(model.hostExact), ...routes(model.hostPrefix)]).toEqual(['shop.example.com/ ing_shop_front_web_80']);
    expect(warnings).toContain('Ingress aaa/grab: route shop.example.com/login is refused: host shop.example.com belongs to namespace shop (Ingress shop/front claimed it first); ignored');
  });

  it('keeps a wildcard and the hosts one label under it with one namespace, and lets other namespaces have other hosts', () => {
    const { model, warnings } = routingModel([
      ingress('wild', 'all', { rules: [rule('*.apps.example.com', { service: 'web' })] }, OLD),
      ingress('aaa', 'carve', { rules: [rule('a.apps.example.com', { service: 'web' }), rule('x.y.apps.example.com', { service: 'web' })] }, NEW),
      ingress('bbb', 'own', { rules: [rule('b.example.com', { service: 'web' })] }, OLD),
      ingress('ccc', 'wide', { rules: [rule('*.example.com', { service: 'web' })] }, NEW),
      ...services('wild', 'aaa', 'bbb', 'ccc'),
    ]);
    expect(routes(model.hostPrefix)).toEqual(['x.y.apps.example.com/ ing_aaa_carve_web_80', 'b.example.com/ ing_bbb_own_web_80']);
    expect(model.hostRegex.map((entry) => entry.backend)).toEqual(['ing_wild_all_web_80']);
    expect(warnings).toContain('Ingress aaa/carve: route a.apps.example.com/ is refused: host *.apps.example.com belongs to namespace wild (Ingress wild/all claimed it first); ignored');
    expect(warnings).toContain('Ingress ccc/wide: route *.example.com/ is refused: host b.example.com belongs to namespace bbb (Ingress bbb/own claimed it first); ignored');
  });

  it('gives the rules without a host to one namespace', () => {
    const { model, warnings } = routingModel([
      ingress('aaa', 'root', { rules: [rule(undefined, { path: '/', service: 'web' })] }, OLD),
      ingress('zzz', 'login', { rules: [rule(undefined, { path: '/login', service: 'web' })] }, NEW),
      ...services('aaa', 'zzz'),
    ]);
    expect(routes(model.pathPrefix)).toEqual(['/ ing_aaa_root_web_80']);
    expect(warnings).toContain('Ingress zzz/login: route /login is refused: the rules without a host belongs to namespace aaa (Ingress aaa/root claimed it first); ignored');
  });

  it('keeps the route index equal to a one-go build, and its host holders, as claims across namespaces come and go', () => {
    const hosts = ['shop.example.com', 'a.example.com', '*.example.com', '', 'x.shop.example.com', '*.shop.example.com'];
    const route = fc.record({
      host: fc.constantFrom(...hosts),
      path: fc.constantFrom('/', '/a', '/a/b'),
      exact: fc.boolean(),
      namespace: fc.constantFrom('ns1', 'ns2', 'ns3'),
      created: fc.integer({ min: 0, max: 3 }),
      backend: fc.constantFrom('b1', 'b2'),
    });
    const step = fc.oneof(fc.record({ add: route }), fc.record({ remove: fc.nat() }));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const index = new RouteIndex();
        const live: RouteCandidate[] = [];
        let tables = index.tables(undefined, () => live, () => undefined);
        let n = 0;
        for (const s of steps) {
          if ('add' in s) {
            const candidate: RouteCandidate = { ...s.add, owner: `Ingress ${s.add.namespace}/i${n++}` };
            live.push(candidate);
            index.add([candidate]);
          } else if (live.length > 0) {
            const [gone] = live.splice(s.remove % live.length, 1) as [RouteCandidate];
            index.remove([gone]);
          }
          tables = index.tables(tables, () => live, () => undefined);
          const fresh = new RouteIndex();
          fresh.add(live);
          expect(tables).toEqual(fresh.tables(undefined, () => live, () => undefined));
          expect(tables).toEqual(routeTables(live, () => undefined));
          for (const host of hosts) for (const ns of ['ns1', 'ns2', 'ns3']) expect(index.hostHolder(host, ns)).toBe(fresh.hostHolder(host, ns));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('says the host owners are unchanged only when they are the owners of its previous answer', () => {
    const hosts = ['shop.example.com', 'a.example.com', '*.example.com', '', 'x.shop.example.com'];
    const route = fc.record({
      host: fc.constantFrom(...hosts),
      path: fc.constantFrom('/', '/a'),
      exact: fc.boolean(),
      namespace: fc.constantFrom('ns1', 'ns2'),
      created: fc.integer({ min: 0, max: 3 }),
      backend: fc.constantFrom('b1', 'b2'),
      held: fc.boolean(),
    });
    // A step adds routes, removes some, or both (an Ingress whose paths changed), then asks.
    const step = fc.record({ add: fc.array(route, { maxLength: 2 }), remove: fc.array(fc.nat(), { maxLength: 2 }) });
    const sorted = (owners: Map<string, unknown>): unknown[] => [...owners].sort(([a], [b]) => (a < b ? -1 : 1));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 25 }), (steps) => {
        const index = new RouteIndex();
        const live: RouteCandidate[] = [];
        let tables = index.tables(undefined, () => live, () => undefined);
        expect(index.ownersChanged()).toBe(true);
        let owners = sorted(index.hostOwners());
        let n = 0;
        for (const s of steps) {
          const gone = s.remove.flatMap((at) => (live.length === 0 ? [] : live.splice(at % live.length, 1)));
          index.remove(gone);
          const added = s.add.map((r): RouteCandidate => ({ ...r, owner: `Ingress ${r.namespace}/i${n++}` }));
          live.push(...added);
          index.add(added);
          tables = index.tables(tables, () => live, () => undefined);
          const changed = index.ownersChanged();
          const now = sorted(index.hostOwners());
          if (!changed) expect(now).toEqual(owners);
          owners = now;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('says the host owners are unchanged after the paths of an Ingress change on the hosts it owns', () => {
    const index = new RouteIndex();
    const before: RouteCandidate = { host: 'shop.example.com', path: '/v1', exact: false, backend: 'b1', owner: 'Ingress ns1/a', namespace: 'ns1', created: 0 };
    const other: RouteCandidate = { ...before, host: 'a.example.com', owner: 'Ingress ns2/b', namespace: 'ns2' };
    index.add([before, other]);
    let tables = index.tables(undefined, () => [before, other], () => undefined);
    expect(index.ownersChanged()).toBe(true);
    const after: RouteCandidate = { ...before, path: '/v2' };
    index.remove([before]);
    index.add([after]);
    tables = index.tables(tables, () => [after, other], () => undefined);
    expect(index.ownersChanged()).toBe(false);
    index.remove([other]);
    index.tables(tables, () => [after], () => undefined);
    expect(index.ownersChanged()).toBe(true);
  });
});

describe('ownership of TLS hosts', () => {
  const tlsIngress = (ns: string, name: string, metadata: Record<string, unknown>, routed: string[], tlsHosts: string[] | undefined, secret = `${ns}-tls`): KubeObject =>
    ingress(ns, name, { tls: [{ ...(tlsHosts === undefined ? {} : { hosts: tlsHosts }), secretName: secret }], rules: routed.map((h) => rule(h, { service: 'web' })) }, metadata);

  it('ignores a TLS host the Ingress does not route, with a warning', () => {
    const { model, warnings } = routingModel([
      tlsIngress('shop', 'front', NEW, ['shop.example.com'], ['shop.example.com']),
      tlsIngress('aaa', 'grab', OLD, ['aaa.example.com'], ['shop.example.com']),
      tlsSecret('shop', 'shop-tls'),
      tlsSecret('aaa', 'aaa-tls'),
      ...services('shop', 'aaa'),
    ]);
    expect(model.certificates.map((c) => [c.name, c.hosts])).toEqual([['shop_shop-tls.pem', ['shop.example.com']]]);
    expect(model.tlsHosts).toEqual(['shop.example.com']);
    expect(warnings).toContain('Ingress aaa/grab: TLS host shop.example.com is not routed by this Ingress; ignored');
  });

  it('gives a TLS host routed by two Ingresses to the oldest, warning about the other certificate', () => {
    const { model, warnings } = routingModel([
      tlsIngress('shop', 'front', OLD, ['shop.example.com'], ['shop.example.com']),
      tlsIngress('shop', 'other', NEW, ['shop.example.com'], ['shop.example.com'], 'other-tls'),
      tlsSecret('shop', 'shop-tls'),
      tlsSecret('shop', 'other-tls'),
      ...services('shop'),
    ]);
    expect(model.certificates.map((c) => [c.name, c.hosts])).toEqual([['shop_shop-tls.pem', ['shop.example.com']]]);
    expect(warnings).toContain('Ingress shop/other: TLS host shop.example.com is already served by Ingress shop/front; ignored');
  });

  it('refuses a TLS host, or a wildcard over it, to a namespace whose routes on it are refused', () => {
    const { model, warnings } = routingModel([
      ingress('shop', 'front', { rules: [rule('shop.example.com', { service: 'web' })] }, OLD),
      tlsIngress('aaa', 'grab', NEW, ['shop.example.com', '*.example.com'], ['shop.example.com', '*.example.com']),
      tlsSecret('aaa', 'aaa-tls'),
      ...services('shop', 'aaa'),
    ]);
    expect(model.certificates).toEqual([]);
    expect(model.tlsHosts).toEqual([]);
    expect(warnings).toContain('Ingress aaa/grab: TLS host shop.example.com belongs to namespace shop; ignored');
    expect(warnings).toContain('Ingress aaa/grab: TLS host *.example.com belongs to namespace shop; ignored');
  });

  it('counts every listed host under tlsHostOwnership: oldest', () => {
    const { model } = routingModel(
      [tlsIngress('aaa', 'grab', OLD, ['aaa.example.com'], ['shop.example.com']), tlsSecret('aaa', 'aaa-tls'), ...services('aaa')],
      { tlsHostOwnership: 'oldest' },
    );
    expect(model.tlsHosts).toEqual(['shop.example.com']);
  });

  it('covers the routed hosts with a TLS section that lists none', () => {
    const { model } = routingModel([
      tlsIngress('shop', 'front', OLD, ['shop.example.com', 'www.shop.example.com'], undefined),
      tlsSecret('shop', 'shop-tls'),
      ...services('shop'),
    ]);
    expect(model.certificates.map((c) => c.hosts)).toEqual([['shop.example.com', 'www.shop.example.com']]);
  });
});

describe('spec.defaultBackend', () => {
  const withDefault = (ns: string, name: string, metadata: Record<string, unknown>): KubeObject =>
    ingress(ns, name, { defaultBackend: { service: { name: 'web', port: { number: 80 } } } }, metadata);

  it("does not beat another Ingress's host-less / rule: it is the default backend, not a route", () => {
    const { model } = routingModel([withDefault('aaa', 'catch', OLD), ingress('zzz', 'root', { rules: [rule(undefined, { path: '/', service: 'api' })] }), ...services('aaa', 'zzz')]);
    expect(routes(model.pathPrefix)).toEqual(['/ ing_zzz_root_api_80']);
    expect(model.defaultBackend).toBe('ing_aaa_catch_web_80');
  });

  it('takes the oldest of several, warning about each other one', () => {
    const { model, warnings } = routingModel([withDefault('aaa', 'newer', NEW), withDefault('zzz', 'older', OLD), ...services('aaa', 'zzz')]);
    expect(model.defaultBackend).toBe('ing_zzz_older_web_80');
    expect(warnings).toContain(
      'Ingress aaa/newer: spec.defaultBackend serves only the unmatched paths of the hosts namespace aaa owns; for other hosts the default backend of Ingress zzz/older (the oldest) applies',
    );
  });

  it('ignores a newer one of the same namespace, naming the oldest of that namespace', () => {
    const { warnings } = routingModel([withDefault('zzz', 'newer', NEW), withDefault('zzz', 'older', OLD), ...services('zzz')]);
    expect(warnings).toContain('Ingress zzz/newer: spec.defaultBackend is ignored; the default backend of Ingress zzz/older (the oldest in namespace zzz) applies');
  });
});

// Where an owned host's unmatched paths go (host-fallback.ts), and the claims a rejected Ingress
// keeps (held-claims.ts), in the routing model: never to another namespace's rules without a
// host or default backend; a held host answers 503 and keeps its TLS from newer claims; the
// incremental builder decides exactly as a cold build while Ingresses are rejected and fixed.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { buildRoutingModel, modelOptions, RoutingModelBuilder } from '../../../src/worker/routing/ingress-model.js';
import { hostFallbacks } from '../../../src/worker/routing/host-fallback.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import { checkIngress } from '../../../src/worker/store/ingress-check.js';
import { endpointSlice, ingress, ROUTING_STORES, routes, routingModel, rule, service, storeNameFor, tlsSecret } from '../../helpers/cluster.js';

const OLD = { creationTimestamp: '2024-01-01T00:00:00Z' };
const MID = { creationTimestamp: '2024-06-01T00:00:00Z' };
const NEW = { creationTimestamp: '2025-01-01T00:00:00Z' };

function services(...namespaces: string[]): KubeObject[] {
  return namespaces.flatMap((ns) => [service(ns, 'web'), endpointSlice(ns, 'web', ['10.0.0.1'])]);
}

const defaultTo = (name: string): Record<string, unknown> => ({ defaultBackend: { service: { name, port: { number: 80 } } } });
/** An annotation value with a newline: the object checks reject the whole Ingress. */
const BROKEN = { annotations: { 'haproxy.org/timeout-server': '5s\nfrontend evil' } };

describe('the unmatched paths of an owned host', () => {
  it("go to the owner's own default backend, or 404, when another namespace owns the rules without a host", () => {
    const { model } = routingModel([
      ingress('shop', 'web', { ...defaultTo('web'), rules: [rule('shop.example.com', { path: '/app', service: 'web' })] }, OLD),
      ingress('plain', 'web', { rules: [rule('plain.example.com', { path: '/app', service: 'web' }), rule('*.w.example.com', { path: '/', service: 'web' })] }, OLD),
      ingress('evil', 'catch', { ...defaultTo('web'), rules: [rule(undefined, { path: '/', service: 'web' })] }, NEW),
      ...services('shop', 'plain', 'evil'),
    ]);
    expect(routes(model.hostFallback)).toEqual(['*.w.example.com default_404', 'plain.example.com default_404', 'shop.example.com ing_shop_web_web_80']);
    expect(model.hostFallbackLate).toEqual([]);
    // The oldest default backend still serves hosts nobody owns.
    expect(model.defaultBackend).toBe('ing_shop_web_web_80');
  });

  it("go, for the namespace owning the rules without a host, through those rules first and then to its own default backend, not another's", () => {
    const { model } = routingModel([
      ingress('first', 'default', defaultTo('web'), OLD),
      ingress('ops', 'web', { rules: [rule(undefined, { path: '/status', pathType: 'Exact', service: 'web' }), rule('ops.example.com', { path: '/app', service: 'web' })] }, MID),
      ...services('first', 'ops'),
    ]);
    expect(model.hostFallback).toEqual([]);
    expect(routes(model.hostFallbackLate)).toEqual(['ops.example.com default_404']);
  });

  it('are listed nowhere in a cluster of one namespace, where the lookups already end with its own backends', () => {
    const { model } = routingModel([
      ingress('shop', 'a', { ...defaultTo('web'), rules: [rule(undefined, { path: '/x', service: 'web' })] }, OLD),
      ingress('shop', 'b', { rules: [rule('shop.example.com', { path: '/app', service: 'web' })] }, NEW),
      ...services('shop'),
    ]);
    expect(model.hostFallback).toEqual([]);
    expect(model.hostFallbackLate).toEqual([]);
  });

  it('are decided from the owners alone: held hosts 503 first, whoever owns the rules without a host', () => {
    const owners = new Map([
      ['', { namespace: 'a', held: false }],
      ['a.example.com', { namespace: 'a', held: true }],
      ['b.example.com', { namespace: 'b', held: false }],
    ]);
    expect(hostFallbacks(owners, new Map([['b', 'ing_b']]), 'ing_b')).toEqual({
      early: [
        { key: 'a.example.com', backend: 'default_503' },
        { key: 'b.example.com', backend: 'ing_b' },
      ],
      late: [],
    });
  });
});

describe('a host under a held wildcard', () => {
  it("gets its own fallback, not the wildcard's 503, though its namespace owns the rules without a host", () => {
    const owners = new Map([
      ['', { namespace: 'a', held: false }],
      ['*.a.example.com', { namespace: 'a', held: true }],
      ['x.a.example.com', { namespace: 'a', held: false }],
    ]);
    expect(hostFallbacks(owners, new Map(), undefined).early).toEqual([
      { key: '*.a.example.com', backend: 'default_503' },
      { key: 'x.a.example.com', backend: 'default_404' },
    ]);
  });
});

describe('a rejected Ingress', () => {
  const owner = (metadata: Record<string, unknown>): KubeObject =>
    ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' }), rule('*.shop.example.com', { path: '/', service: 'web' })] }, { ...OLD, ...metadata });
  const thief = ingress(
    'evil',
    'grab',
    { tls: [{ hosts: ['shop.example.com'], secretName: 'tls' }], rules: [rule('shop.example.com', { path: '/login', service: 'web' }), rule('a.shop.example.com', { path: '/', service: 'web' })] },
    NEW,
  );
  const others = [thief, ...services('shop', 'evil'), tlsSecret('evil', 'tls')];

  it('keeps its hosts (503) and their TLS from a newer claim of another namespace', () => {
    const { model, warnings } = routingModel([owner(BROKEN), ...others]);
    expect(routes(model.hostFallback)).toEqual(['*.shop.example.com default_503', 'shop.example.com default_503']);
    expect(routes(model.hostPrefix)).toEqual([]);
    expect(model.certificates).toEqual([]);
    expect(warnings).toEqual(
      expect.arrayContaining([
        'Ingress evil/grab: route shop.example.com/login is refused: host shop.example.com belongs to namespace shop (Ingress shop/web claimed it first); ignored',
        'Ingress evil/grab: route a.shop.example.com/ is refused: host *.shop.example.com belongs to namespace shop (Ingress shop/web claimed it first); ignored',
        'Ingress evil/grab: TLS host shop.example.com belongs to namespace shop; ignored',
      ]),
    );
  });

  it('serves its hosts again once fixed, and gives them up once deleted; the incremental builder agrees with a cold build at each step', () => {
    const stores = new Map(ROUTING_STORES.map((def) => [def.name, new IndexedStore(def.name, def.indexBy)]));
    const upsert = (object: KubeObject): void => {
      stores.get(storeNameFor(object, ROUTING_STORES))?.upsert(object);
    };
    for (const object of [owner(BROKEN), ...others]) upsert(object);
    const options = modelOptions({});
    const builder = new RoutingModelBuilder(options);
    const both = (): ReturnType<typeof buildRoutingModel> => {
      const warm: string[] = [];
      const cold: string[] = [];
      const model = builder.build(new GuardedReader((name) => stores.get(name), (m) => warm.push(m)), undefined, (m) => warm.push(m));
      const reference = buildRoutingModel(new GuardedReader((name) => stores.get(name), (m) => cold.push(m)), options, undefined, (m) => cold.push(m));
      expect(model).toEqual(reference);
      expect(warm).toEqual(cold);
      return model;
    };
    expect(routes(both().hostFallback)).toEqual(['*.shop.example.com default_503', 'shop.example.com default_503']);
    upsert(owner({}));
    const fixed = both();
    expect(fixed.hostFallback).toEqual([]);
    expect(routes(fixed.hostPrefix)).toEqual(['shop.example.com/ ing_shop_web_web_80']);
    upsert(owner(BROKEN));
    expect(routes(both().hostFallback)).toEqual(['*.shop.example.com default_503', 'shop.example.com default_503']);
    stores.get('ingresses')?.delete('shop/web');
    const gone = both();
    expect(gone.hostFallback).toEqual([]);
    expect(routes(gone.hostPrefix)).toEqual(['shop.example.com/login/ ing_evil_grab_web_80', 'a.shop.example.com/ ing_evil_grab_web_80']);
    expect(gone.certificates.map((c) => c.name)).toEqual(['evil_tls.pem']);
  });

  it('left out by the routing model for its size keeps its hosts (503) in the same way', () => {
    const big = ingress('shop', 'big', { rules: [rule('shop.example.com', ...Array.from({ length: 40 }, (_, i) => ({ path: `/p${i}`, service: 'web' })))] }, OLD);
    const { model, warnings } = routingModel([big, thief, ...services('shop', 'evil'), tlsSecret('evil', 'tls')], { maxOutputBytes: 48_000 });
    expect(warnings.some((w) => w.startsWith('Ingress shop/big: would add about ') && w.endsWith('it is not served (its hosts answer 503)'))).toBe(true);
    expect(routes(model.hostFallback)).toEqual(['shop.example.com default_503']);
    expect(model.hostPrefix.map((e) => e.key)).toEqual(['a.shop.example.com/']);
    expect(model.certificates).toEqual([]);
  });

  it('of another class holds nothing', () => {
    const { model } = routingModel([{ ...owner(BROKEN), spec: { ...(owner(BROKEN).spec as Record<string, unknown>), ingressClassName: 'nginx' } }, ...others]);
    expect(model.hostFallback).toEqual([]);
    expect(model.certificates.map((c) => c.name)).toEqual(['evil_tls.pem']);
  });
});

describe('hosts written with a trailing dot or capitals in an Ingress', () => {
  it('are refused with their rule, so they never become a second spelling of an owned host', () => {
    for (const host of ['shop.example.com.', 'Shop.example.com']) {
      const outcome = checkIngress(ingress('evil', 'dot', { rules: [rule(host, { path: '/', service: 'web' })] }));
      expect('dropped' in outcome && outcome.dropped.map((p) => p.reason), host).toEqual([expect.stringContaining('the rule and its paths are dropped')]);
    }
  });
});

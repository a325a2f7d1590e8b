import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { ingress, routes, routingModel, rule, service } from '../../helpers/cluster.js';

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

import { describe, expect, it } from 'vitest';
import { PARKED_ADDRESS, type Backend } from '../../../src/worker/routing/ingress-model.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, routingModel, rule, service } from '../../helpers/cluster.js';
import { app, serverLines, WEB } from './ingress-fixtures.js';

function backendNamed(backends: readonly Backend[], name: string): Backend {
  const backend = backends.find((b) => b.name === name);
  if (backend === undefined) throw new Error(`no backend ${name}; have ${backends.map((b) => b.name).join(', ')}`);
  return backend;
}

function enabledAddresses(backend: Backend): string[] {
  return backend.servers.filter((s) => s.enabled).map((s) => s.address);
}

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

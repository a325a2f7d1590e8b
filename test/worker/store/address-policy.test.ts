// The endpoint address policy: unspecified, link-local (cloud metadata), multicast, reserved and
// zone-ID addresses are always refused; loopback only with values.allowLoopbackEndpoints; and an
// address of HAProxy's own host on one of HAProxy's own ports never, so a tenant cannot reach
// the status page or cloud metadata through its host. Refused endpoints go one by one, each with
// a rejection; the slice's other endpoints stay.
import { networkInterfaces } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderOk, rule, service, withValues } from '../../helpers/cluster.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

function app(addresses: string[], port = 8080): KubeObject[] {
  return [
    ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }),
    service('shop', 'web'),
    { ...endpointSlice('shop', 'web', addresses, { name: 'http', port }), addressType: addresses.some((a) => a.includes(':')) ? 'IPv6' : 'IPv4' },
  ];
}

/** The addresses of the shop backend's enabled servers. */
function servers(config: string): string[] {
  const section = config.slice(config.indexOf('backend ing_shop_web_web_80')).split('\n\n')[0] ?? '';
  const lines = section.split('\n').map((line) => line.trim().split(' '));
  return lines.filter((words) => words[0] === 'server' && !words.includes('disabled')).map((words) => words[2] ?? '');
}

describe('endpoints the policy always refuses', () => {
  it.each([
    ['the unspecified address 0.0.0.0', '0.0.0.0', /is an unspecified address/],
    ['the unspecified address ::', '::', /is an unspecified address/],
    ['the cloud metadata address 169.254.169.254', '169.254.169.254', /is a link-local address/],
    ['a link-local IPv6 address', 'fe80::1', /is a link-local address/],
    ['an IPv6 address with a zone ID, which HAProxy refuses', 'fe80::1%eth0', /has an IPv6 zone ID/],
    ['a multicast address', '224.0.0.251', /is a multicast address/],
    ['loopback written as IPv4-mapped IPv6', '::ffff:127.0.0.1', /is a loopback address/],
    ['metadata reached through NAT64', '64:ff9b::169.254.169.254', /is a link-local address/],
  ])('drops %s and keeps the slice\'s other endpoints', (_title, address, reason) => {
    const out = renderOk(set, app(['10.0.0.1', address, '10.0.0.2']));
    expect(servers(out.haproxyConfig)).toEqual(['10.0.0.1:8080', '10.0.0.2:8080']);
    expect(out.rejections).toEqual([{ kind: 'EndpointSlice', namespace: 'shop', name: 'web-slice', scope: 'endpoint', reason: expect.stringMatching(reason) }]);
  });
});

describe('loopback endpoints', () => {
  it('are refused by default', () => {
    const out = renderOk(set, app(['10.0.0.1', '127.0.0.1', '::1']));
    expect(servers(out.haproxyConfig)).toEqual(['10.0.0.1:8080']);
    expect(out.rejections.map((r) => r.reason)).toEqual([
      expect.stringContaining('"127.0.0.1" is a loopback address (set values.allowLoopbackEndpoints to allow it)'),
      expect.stringContaining('"::1" is a loopback address'),
    ]);
  });

  it('are allowed with values.allowLoopbackEndpoints', () => {
    const out = renderOk(withValues(set, { allowLoopbackEndpoints: true }), app(['127.0.0.1', '127.0.0.2']));
    expect(servers(out.haproxyConfig)).toEqual(['127.0.0.1:8080', '127.0.0.2:8080']);
    expect(out.rejections).toEqual([]);
  });

  it.each([
    ['statusPort', 8404],
    ['httpPort', 80],
    ['httpsPort', 443],
  ])('are refused on HAProxy\'s own %s even with allowLoopbackEndpoints', (_value, port) => {
    const out = renderOk(withValues(set, { allowLoopbackEndpoints: true }), app(['127.0.0.1', '::1', '0.0.0.0'], port));
    expect(servers(out.haproxyConfig)).toEqual([]);
    expect(out.rejections.map((r) => r.reason)).toEqual([
      expect.stringContaining(`"127.0.0.1" is HAProxy's own host on HAProxy's own port ${port}`),
      expect.stringContaining(`"::1" is HAProxy's own host on HAProxy's own port ${port}`),
      expect.stringContaining('"0.0.0.0" is an unspecified address'),
    ]);
  });

  it('follow the ports the values set: 127.0.0.1:<statusPort> is refused when the status port moves', () => {
    const moved = withValues(set, { allowLoopbackEndpoints: true, statusPort: 9000 });
    expect(servers(renderOk(moved, app(['127.0.0.1'], 9000)).haproxyConfig)).toEqual([]);
    expect(servers(renderOk(moved, app(['127.0.0.1'], 8404)).haproxyConfig)).toEqual(['127.0.0.1:8404']);
  });
});

describe('this host\'s own addresses', () => {
  const own = Object.values(networkInterfaces()).flat().find((info) => info !== undefined && !info.internal && info.family === 'IPv4')?.address;

  it.runIf(own !== undefined)('are refused on HAProxy\'s own ports, where HAProxy binds every address', () => {
    const out = renderOk(set, app([own as string], 8404));
    expect(servers(out.haproxyConfig)).toEqual([]);
    expect(servers(renderOk(set, app([own as string], 8080)).haproxyConfig)).toEqual([`${own as string}:8080`]);
  });
});

describe('ExternalName Services', () => {
  it('that name a refused address literal are rejected', () => {
    const objects = [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'meta' })] }),
      { ...service('shop', 'meta'), spec: { type: 'ExternalName', externalName: '169.254.169.254', ports: [{ name: 'http', port: 80 }] } },
    ];
    const out = renderOk(set, objects);
    expect(out.haproxyConfig).not.toContain('169.254.169.254');
    expect(out.rejections).toEqual([expect.objectContaining({ kind: 'Service', name: 'meta', scope: 'endpoint', reason: expect.stringContaining('is a link-local address') })]);
  });
});

import { describe, expect, it } from 'vitest';
import { defaultTemplateSet, exampleTlsData, ingress, renderOk, routingModel, rule, service, tlsSecret } from '../../helpers/cluster.js';
import { app } from './ingress-fixtures.js';

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

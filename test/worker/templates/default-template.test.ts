import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, ingress, renderObjects, renderOk, rule, service, tlsSecret, withValues } from '../../helpers/cluster.js';

/** One Ingress routing shop.example.com (with TLS) and plain.example.com to Service web. */
function shop(): KubeObject[] {
  return [
    ingress('shop', 'front', {
      tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
      rules: [rule('shop.example.com', { service: 'web' }), rule('plain.example.com', { service: 'web' })],
    }),
    service('shop', 'web'),
    endpointSlice('shop', 'web', ['10.0.0.1', '10.0.0.2']),
    tlsSecret('shop', 'shop-tls'),
  ];
}

function section(config: string, header: string): string {
  const found = config.split(/\n(?=backend |frontend |resolvers |defaults)/).find((s) => s.startsWith(`${header}\n`));
  if (found === undefined) throw new Error(`no section ${header}`);
  return found;
}

describe('the default template set', () => {
  it('health-checks every server of a backend, empty slots staying disabled (and so unchecked)', async () => {
    const config = renderOk(await defaultTemplateSet(), shop()).haproxyConfig;
    const backend = section(config, 'backend ing_shop_front_web_80');
    expect(backend).toContain('\n  default-server check\n');
    expect(backend).toContain('\n  server srv1 10.0.0.1:8080\n  server srv2 10.0.0.2:8080\n  server srv3 127.0.0.1:1 disabled\n');
  });

  it('redirects HTTP to https:// for hosts with a certificate, with 302, to the HTTPS port when it is not 443', async () => {
    const set = await defaultTemplateSet();
    const out = renderOk(set, shop());
    const redirect = 'http-request redirect location https://%[var(txn.host)]%[pathq] code 302 if !{ ssl_fc } { var(txn.tls) -m found }';
    expect(section(out.haproxyConfig, 'backend ing_shop_front_web_80')).toContain(`\n  ${redirect}\n`);
    expect(out.auxiliaryFiles.maps['tls-hosts.lst']).toBe('shop.example.com\n');
    expect(section(out.haproxyConfig, 'frontend http')).toContain('-m str -f /etc/haproxy/maps/tls-hosts.lst');
    const elsewhere = renderOk(withValues(set, { httpsPort: 8443 }), shop()).haproxyConfig;
    expect(elsewhere).toContain('location https://%[var(txn.host)]:8443%[pathq] code 302');
  });

  it('sets X-Forwarded-For and X-Forwarded-Proto, and negotiates h2 on the HTTPS bind', async () => {
    const config = renderOk(await defaultTemplateSet(), shop()).haproxyConfig;
    expect(section(config, 'defaults')).toContain('\n  option forwardfor\n');
    expect(section(config, 'frontend http')).toContain('\n  http-request set-header X-Forwarded-Proto http\n');
    expect(section(config, 'frontend https')).toContain('alpn h2,http/1.1');
    expect(section(config, 'frontend https')).toContain('\n  http-request set-header X-Forwarded-Proto https\n');
  });

  it('refuses with 508 a request that carries this instance\'s loop token, before any routing, and marks the others, in both frontends', async () => {
    const config = renderOk(withValues(await defaultTemplateSet(), { loopGuardToken: 'a1-b2_c3' }), shop()).haproxyConfig;
    for (const [frontend, proto] of [['frontend http', 'http'], ['frontend https', 'https']] as const) {
      expect(section(config, frontend)).toContain(
        '\n  http-request deny status 508 content-type text/plain string "loop detected" if { req.hdr(x-haptic-loop) -m str a1-b2_c3 }' +
          '\n  http-request add-header x-haptic-loop a1-b2_c3' +
          `\n  http-request set-header X-Forwarded-Proto ${proto}\n`,
      );
    }
    expect(section(config, 'frontend status')).not.toContain('x-haptic-loop');
  });

  it('renders no loop guard without a token, and refuses a token that is not one safe word', async () => {
    const set = await defaultTemplateSet();
    expect(renderOk(set, shop()).haproxyConfig).not.toContain('x-haptic-loop');
    const bad = renderObjects(withValues(set, { loopGuardToken: 'x }; http-request allow' }), shop());
    expect(bad.ok).toBe(false);
    expect(bad.ok ? '' : bad.message).toContain('values.loopGuardToken must be at most 64 letters, digits');
  });

  it('serves /stats only when values.stats names an address', async () => {
    const set = await defaultTemplateSet();
    expect(renderOk(set, shop()).haproxyConfig).not.toContain('stats enable');
    const config = renderOk(withValues(set, { stats: '127.0.0.1:8405' }), shop()).haproxyConfig;
    expect(section(config, 'frontend stats')).toBe('frontend stats\n  bind 127.0.0.1:8405\n  stats enable\n  stats uri /stats\n  stats refresh 10s\n');
    expect(section(config, 'frontend status')).not.toContain('stats');
  });

  it('sends what no rule matches to the default backend of the oldest spec.defaultBackend', async () => {
    const objects = [ingress('ops', 'catch', { defaultBackend: { service: { name: 'web', port: { number: 80 } } } }), service('ops', 'web'), endpointSlice('ops', 'web', ['10.0.0.9'])];
    const config = renderOk(await defaultTemplateSet(), objects).haproxyConfig;
    expect(section(config, 'frontend http')).toContain('\n  default_backend ing_ops_catch_web_80\n');
    expect(renderOk(await defaultTemplateSet(), shop()).haproxyConfig).toContain('\n  default_backend default_404\n');
  });
});

// Hostile tenants against a real HAProxy 2.6: objects that used to pass our validator and then make
// `haproxy -c` refuse everyone's config (a mismatched certificate and key, a fake PEM body,
// certificates OpenSSL finds too weak, an IPv6 endpoint with a zone ID, an endpoint on HAProxy's own
// status port) and words and numeric external names that failed everyone's render are rejected
// alone, and the config HAProxy gets is valid and serves the good app.
// With CI=true these tests always run (and fail when HAProxy is missing).
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/main/haproxy/haproxy-check.js';
import { exampleTlsData } from '../helpers/cluster.js';
import { SKIP_HAPROXY, skipNotice, startHaproxy } from '../helpers/haproxy-harness.js';
import { b64, backed, externalName, get, routeTo, tenant, useHostileRender } from '../helpers/hostile-tenants.js';
import { RSA_1024_CERT, RSA_1024_KEY, SHA1_SIGNED_CERT, SHA1_SIGNED_KEY } from '../worker/store/tls-fixtures.js';

skipNotice('test/e2e/hostile-config-check.test.ts');

const { echo, renderAndWrite } = useHostileRender();

describe.skipIf(SKIP_HAPROXY)('hostile tenants against a real HAProxy', () => {
  it('cannot make haproxy -c refuse everyone\'s config: bad certificates and endpoints are rejected alone, and the good app is served', async () => {
    const shop = await echo('shop');
    const otherKey = b64(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    const { 'tls.crt': crt, 'tls.key': key } = exampleTlsData();
    const fakeBody = b64(`-----BEGIN CERTIFICATE-----\n${b64('not a certificate, only base64 text that looks the part')}\n-----END CERTIFICATE-----\n`);
    const { dirs, result, ports } = await renderAndWrite(({ status }) => [
      ...tenant('shop', 'shop.example.com', [`127.0.0.1:${shop}`]),
      ...tenant('secure', 'secure.example.com', ['10.0.0.1:80'], exampleTlsData()),
      ...tenant('mismatch', 'mismatch.example.com', ['10.0.0.1:80'], { 'tls.crt': crt, 'tls.key': otherKey }),
      ...tenant('fake', 'fake.example.com', ['10.0.0.1:80'], { 'tls.crt': fakeBody, 'tls.key': key }),
      ...tenant('weak', 'weak.example.com', ['10.0.0.1:80'], { 'tls.crt': b64(SHA1_SIGNED_CERT), 'tls.key': b64(SHA1_SIGNED_KEY) }),
      ...tenant('small', 'small.example.com', ['10.0.0.1:80'], { 'tls.crt': b64(RSA_1024_CERT), 'tls.key': b64(RSA_1024_KEY) }),
      ...tenant('zone', 'zone.example.com', ['fe80::1%eth0:8080', 'fd00::7:8080']),
      ...tenant('meta', 'meta.example.com', ['169.254.169.254:80']),
      ...tenant('admin', 'admin.example.com', [`127.0.0.1:${status}`]),
    ]);
    expect(result.rejections.map((r) => `${r.kind} ${r.namespace}/${r.name} ${r.scope}`).sort()).toEqual([
      'EndpointSlice admin/web-0 endpoint',
      'EndpointSlice meta/web-0 endpoint',
      'EndpointSlice zone/web-0 endpoint',
      'Secret fake/tls tls',
      'Secret mismatch/tls tls',
      'Secret small/tls tls',
      'Secret weak/tls tls',
    ]);
    expect(Object.keys(result.auxiliaryFiles.certificates)).toEqual(['secure_tls.pem']);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ body: 'shop' });
      // The status page is not reachable through a tenant's host.
      expect((await get(ports.http, 'admin.example.com')).status).toBe(503);
    } finally {
      await haproxy.stop();
    }
  });

  it("cannot fail everyone's render with a word or a number: each such object is rejected alone", async () => {
    const shop = await echo('shop');
    const { dirs, result, ports } = await renderAndWrite(() => [
      routeTo('shop', 'shop.example.com', 'web'),
      ...backed('shop', 'web', shop),
      // HAProxy reads these by position, but the config check took each `if` / `unless` for a condition.
      routeTo('sethost', 'a.example.com', 'web', 80, { 'haproxy.org/set-host': 'if' }),
      routeTo('reqname', 'b.example.com', 'web', 80, { 'haproxy.org/request-set-header': 'if v' }),
      routeTo('reqvalue', 'c.example.com', 'web', 80, { 'haproxy.org/response-set-header': 'X-A unless' }),
      routeTo('cors', 'd.example.com', 'web', 80, { 'haproxy.org/cors-enable': 'true', 'haproxy.org/cors-allow-headers': 'unless' }),
      // Numbers the config check refused as IPv4 addresses, for the whole render.
      routeTo('decimal', 'e.example.com', 'ext'),
      externalName('decimal', '2130706433'),
      routeTo('short', 'f.example.com', 'ext'),
      externalName('short', '127.1'),
      routeTo('five', 'g.example.com', 'ext'),
      externalName('five', '1.2.3.4.5'),
    ]);
    expect(result.rejections.map((r) => `${r.kind} ${r.namespace} ${r.scope}`).sort()).toEqual([
      'Ingress cors annotation',
      'Ingress reqname annotation',
      'Ingress reqvalue annotation',
      'Ingress sethost annotation',
      'Service decimal endpoint',
      'Service five endpoint',
      'Service short endpoint',
    ]);
    expect(result.rejections.find((r) => r.namespace === 'sethost')?.reason).toContain('a word that opens a condition on a rule line');
    expect(result.rejections.find((r) => r.namespace === 'decimal')?.reason).toBe('spec.externalName "2130706433" reads as an IPv4 address, not a name; write the address as a.b.c.d');
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
    } finally {
      await haproxy.stop();
    }
  });
});

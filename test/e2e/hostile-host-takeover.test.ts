// Hostile tenants against a real HAProxy 2.6: the 16 KB path that split HAProxy's map line buffer
// cannot take shop.example.com, and a newer namespace can take no path, certificate or
// wildcard-covered host of another's.
// With CI=true these tests always run (and fail when HAProxy is missing).
import { describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/main/haproxy/haproxy-check.js';
import { ingress, rule, tlsSecret } from '../helpers/cluster.js';
import { servedCertificate } from '../helpers/e2e-client.js';
import { SKIP_HAPROXY, skipNotice, startHaproxy } from '../helpers/haproxy-harness.js';
import { backed, get, NEW, OLD, tenant, useHostileRender } from '../helpers/hostile-tenants.js';

skipNotice('test/e2e/hostile-host-takeover.test.ts');

const { echo, renderAndWrite } = useHostileRender();

describe.skipIf(SKIP_HAPROXY)('hostile tenants against a real HAProxy', () => {
  it('cannot take shop.example.com/ with a 16 KB path that HAProxy would split in its map', async () => {
    const shop = await echo('shop');
    const attacker = await echo('attacker');
    const path = `/${'a'.repeat(16_366)}shop.example.com/`;
    const { dirs, result, ports } = await renderAndWrite(() => [
      ...tenant('shop', 'shop.example.com', [`127.0.0.1:${shop}`], undefined, '/'),
      ...tenant('attacker', 'attacker.example.com', [`127.0.0.1:${attacker}`], undefined, path),
    ]);
    expect(result.rejections).toEqual([expect.objectContaining({ namespace: 'attacker', scope: 'path' })]);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com', '/')).toMatchObject({ status: 200, body: 'shop' });
    } finally {
      await haproxy.stop();
    }
  });

  it("cannot take a path, the certificate or a wildcard-covered host of another namespace's host", async () => {
    const shop = await echo('shop');
    const wild = await echo('wild');
    const evil = await echo('evil');
    const { dirs, result, ports } = await renderAndWrite(() => [
      ingress('shop', 'web', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }, OLD),
      ...backed('shop', 'web', shop),
      ingress('wild', 'web', { rules: [rule('*.wild.example.com', { path: '/', service: 'web' })] }, OLD),
      ...backed('wild', 'web', wild),
      // Newer, from another namespace: a path under shop's host and a wildcard over it, each with
      // a certificate, and a host the older wildcard serves.
      ingress(
        'evil',
        'grab',
        {
          tls: [{ hosts: ['shop.example.com', '*.example.com'], secretName: 'tls' }],
          rules: [
            rule('shop.example.com', { path: '/login', pathType: 'Exact', service: 'web' }),
            rule('*.example.com', { path: '/', service: 'web' }),
            rule('a.wild.example.com', { path: '/', service: 'web' }),
          ],
        },
        NEW,
      ),
      ...backed('evil', 'web', evil),
      tlsSecret('evil', 'tls'),
    ]);
    expect(result.warnings).toEqual(
      expect.arrayContaining([
        'Ingress evil/grab: route shop.example.com/login is refused: host shop.example.com belongs to namespace shop (Ingress shop/web claimed it first); ignored',
        'Ingress evil/grab: route a.wild.example.com/ is refused: host *.wild.example.com belongs to namespace wild (Ingress wild/web claimed it first); ignored',
        'Ingress evil/grab: route *.example.com/ is refused: host shop.example.com belongs to namespace shop (Ingress shop/web claimed it first); ignored',
        'Ingress evil/grab: TLS host shop.example.com belongs to namespace shop; ignored',
        'Ingress evil/grab: TLS host *.example.com belongs to namespace shop; ignored',
      ]),
    );
    expect(result.auxiliaryFiles.certificates).toEqual({});
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      // No redirect to HTTPS (evil's TLS host would have set one), and every path is shop's.
      expect(await get(ports.http, 'shop.example.com', '/login')).toMatchObject({ status: 200, body: 'shop' });
      expect(await get(ports.http, 'shop.example.com', '/')).toMatchObject({ status: 200, body: 'shop' });
      expect(await get(ports.http, 'a.wild.example.com', '/')).toMatchObject({ status: 200, body: 'wild' });
      expect((await get(ports.http, 'other.example.com', '/')).status).toBe(404);
      // No certificate of evil's is served for shop.example.com (strict-sni: none at all).
      await expect(servedCertificate(ports.https, 'shop.example.com')).rejects.toThrow();
    } finally {
      await haproxy.stop();
    }
  });
});

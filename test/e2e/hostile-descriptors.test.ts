// Hostile tenants against a real HAProxy 2.6: health-checked server slots cannot take the
// descriptors HAProxy needs to start, and slots without health checks take none.
// With CI=true these tests always run (and fail when HAProxy is missing).
import { describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/main/haproxy/haproxy-check.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { ingress, service } from '../helpers/cluster.js';
import { SKIP_HAPROXY, skipNotice, startHaproxy } from '../helpers/haproxy-harness.js';
import { backed, get, routeTo, useHostileRender } from '../helpers/hostile-tenants.js';

skipNotice('test/e2e/hostile-descriptors.test.ts');

const { echo, renderAndWrite } = useHostileRender();

describe.skipIf(SKIP_HAPROXY)('hostile tenants against a real HAProxy', () => {
  it('serves every backend whose Services turn health checks off, since their slots hold no descriptor', async () => {
    const shop = await echo('shop');
    const fan = await echo('fan');
    const unchecked = { 'haproxy.org/check': 'false' };
    const paths = Array.from({ length: 250 }, (_, i) => ({ path: `/p${i}`, pathType: 'Prefix', backend: { service: { name: `s${i}`, port: { number: 80 } } } }));
    const withoutChecks = (objects: KubeObject[]): KubeObject[] =>
      objects.map((o) => (o.kind === 'Service' ? { ...o, metadata: { ...o.metadata, annotations: unchecked } } : o));
    const { dirs, result, ports } = await renderAndWrite(
      () => [
        routeTo('shop', 'shop.example.com', 'web'),
        ...backed('shop', 'web', shop),
        ...[0, 1].map((n) => ingress('evil', `fan-${n}`, { rules: [{ host: `fan-${n}.example.com`, http: { paths } }] })),
        ...withoutChecks(Array.from({ length: 250 }, (_, i) => (i === 1 ? backed('evil', 's1', fan) : [service('evil', `s${i}`)])).flat()),
      ],
      { fdHardLimit: 4000 },
    );
    expect(result.warnings.filter((w) => w.includes('its backends get no servers'))).toEqual([]);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
      expect(await get(ports.http, 'fan-0.example.com', '/p1')).toMatchObject({ status: 200, body: 'fan' });
    } finally {
      await haproxy.stop();
    }
  });

  it('cannot keep HAProxy from starting by filling its descriptors with health-checked server slots', async () => {
    const shop = await echo('shop');
    // Backends of Services that do not exist still get a block of (checked, empty) server slots:
    // 500 of them hold 5,000 descriptors, more than an fd-hard-limit of 4,000 leaves HAProxy.
    const paths = Array.from({ length: 250 }, (_, i) => ({ path: `/p${i}`, pathType: 'Prefix', backend: { service: { name: `s${i}`, port: { number: 80 } } } }));
    const { dirs, result, ports } = await renderAndWrite(
      () => [
        routeTo('shop', 'shop.example.com', 'web'),
        ...backed('shop', 'web', shop),
        ...[0, 1].map((n) => ingress('evil', `fan-${n}`, { rules: [{ host: `fan-${n}.example.com`, http: { paths } }] })),
      ],
      { fdHardLimit: 4000 },
    );
    expect(result.warnings.filter((w) => w.includes('its backends get no servers')).map((w) => w.slice(0, w.indexOf(':')))).toEqual(['Ingress evil/fan-1', 'Ingress evil/fan-0']);
    expect((result.haproxyConfig.match(/^ {2}server /gm) ?? []).length).toBe(10);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
      expect((await get(ports.http, 'fan-0.example.com', '/p1')).status).toBe(503);
    } finally {
      await haproxy.stop();
    }
  });
});

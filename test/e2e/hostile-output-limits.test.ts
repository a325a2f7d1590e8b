// Hostile tenants against a real HAProxy 2.6: a small Ingress cannot blow the output past its cap
// for everyone, a Secret name too long for a file name cannot stop the output from being written,
// nor can a certificate for a thousand hosts outgrow a crt-list line.
// With CI=true these tests always run (and fail when HAProxy is missing).
import { describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/main/haproxy/haproxy-check.js';
import type { KubeObject } from '../../src/worker/protocol.js';
import { ingress, rule, tlsSecret } from '../helpers/cluster.js';
import { servedCertificate } from '../helpers/e2e-client.js';
import { SKIP_HAPROXY, skipNotice, startHaproxy } from '../helpers/haproxy-harness.js';
import { backed, get, routeTo, useHostileRender } from '../helpers/hostile-tenants.js';

skipNotice('test/e2e/hostile-output-limits.test.ts');

const { echo, renderAndWrite } = useHostileRender();

describe.skipIf(SKIP_HAPROXY)('hostile tenants against a real HAProxy', () => {
  it("cannot blow the output past values.maxOutputBytes for everyone with a few small Ingresses", async () => {
    const shop = await echo('shop');
    // One Service of 100 ports with 100 endpoints, and Ingresses of 100 paths (one per port):
    // each Ingress a few KB, each rendering 100 backends of 100 server slots.
    const servicePorts = Array.from({ length: 100 }, (_, i) => ({ name: `p${i}`, port: 1000 + i }));
    const big: KubeObject[] = [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'many', namespace: 'evil' }, spec: { ports: servicePorts } },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'many-1', namespace: 'evil', labels: { 'kubernetes.io/service-name': 'many' } },
        addressType: 'IPv4',
        ports: servicePorts,
        endpoints: Array.from({ length: 100 }, (_, i) => ({ addresses: [`10.1.0.${i + 1}`] })),
      },
      ...Array.from({ length: 3 }, (_, n) =>
        ingress('evil', `fan-${n}`, {
          rules: [{ host: `fan-${n}.example.com`, http: { paths: servicePorts.map((p, i) => ({ path: `/p${i}`, pathType: 'Prefix', backend: { service: { name: 'many', port: { number: p.port } } } })) } }],
        }),
      ),
    ];
    const { dirs, result, ports } = await renderAndWrite(() => [routeTo('shop', 'shop.example.com', 'web'), ...backed('shop', 'web', shop), ...big], { maxOutputBytes: 1_048_576 });
    const notServed = result.warnings.filter((w) => w.includes('for one Ingress (values.maxOutputBytes / 16); it is not served'));
    expect(notServed.map((w) => w.slice(0, w.indexOf(':')))).toEqual(['Ingress evil/fan-0', 'Ingress evil/fan-1', 'Ingress evil/fan-2']);
    expect(result.haproxyConfig).not.toContain('ing_evil_fan');
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
    } finally {
      await haproxy.stop();
    }
  });

  it("cannot stop everyone's output from being written with a Secret name too long for a file name", async () => {
    const shop = await echo('shop');
    // 253 characters, a valid Secret name: its certificate file <namespace>_<secret>.pem would be over 255.
    const secretName = [63, 63, 63, 61].map((n) => 's'.repeat(n)).join('.');
    const { dirs, result, ports } = await renderAndWrite(() => [
      routeTo('shop', 'shop.example.com', 'web'),
      ...backed('shop', 'web', shop),
      ingress('longname', 'web', { tls: [{ hosts: ['long.example.com'], secretName }], rules: [rule('long.example.com', { path: '/', service: 'web' })] }),
      ...backed('longname', 'web', shop),
      tlsSecret('longname', secretName),
    ]);
    expect(result.rejections).toEqual([
      expect.objectContaining({ namespace: 'longname', scope: 'tls', reason: expect.stringContaining('its certificate file name would be over 255 characters') }),
    ]);
    expect(Object.keys(result.auxiliaryFiles.certificates)).toEqual([]);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
      expect(await get(ports.http, 'long.example.com')).toMatchObject({ status: 200, body: 'shop' });
    } finally {
      await haproxy.stop();
    }
  });

  it("cannot fail everyone's render with one certificate for a thousand hosts", async () => {
    const shop = await echo('shop');
    const hosts = Array.from({ length: 1000 }, (_, i) => `host-${i}.many.example.com`);
    const { dirs, result, ports } = await renderAndWrite(() => [
      routeTo('shop', 'shop.example.com', 'web'),
      ...backed('shop', 'web', shop),
      ingress('many', 'web', { tls: [{ hosts, secretName: 'tls' }], rules: hosts.map((host) => rule(host, { path: '/', service: 'web' })) }),
      ...backed('many', 'web', shop),
      tlsSecret('many', 'tls'),
    ]);
    const crtList = result.auxiliaryFiles.files['crt-list.txt'] as string;
    expect(Math.max(...crtList.split('\n').map((line) => line.length))).toBeLessThan(15_360);
    expect(crtList.split('\n').filter((line) => line.startsWith(`${dirs.certsDir}/many_tls.pem `))).toHaveLength(32);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect(await get(ports.http, 'shop.example.com')).toMatchObject({ status: 200, body: 'shop' });
      expect((await servedCertificate(ports.https, 'host-999.many.example.com')).subject).toContain('CN=shop.example.com');
    } finally {
      await haproxy.stop();
    }
  });
});

// Hostile tenants against a real HAProxy 2.6: external names cannot reach loopback (in any
// spelling), cloud metadata or HAProxy's own ports, and no endpoint can sit on the stats port.
// With CI=true these tests always run (and fail when HAProxy is missing).
import { describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../src/main/haproxy/haproxy-check.js';
import { freePorts, SKIP_HAPROXY, skipNotice, startHaproxy } from '../helpers/haproxy-harness.js';
import { backed, externalName, get, routeTo, useHostileRender } from '../helpers/hostile-tenants.js';

skipNotice('test/e2e/hostile-external-names.test.ts');

const { renderAndWrite } = useHostileRender();

describe.skipIf(SKIP_HAPROXY)('hostile tenants against a real HAProxy', () => {
  it("cannot point an external name at loopback in another spelling, at cloud metadata, or at HAProxy's own ports", async () => {
    const [statsPort] = (await freePorts(1)) as [number];
    const { dirs, result, ports } = await renderAndWrite(
      ({ status }) => [
        routeTo('hex', 'hex.example.com', 'ext'),
        externalName('hex', '0x7f000001'),
        routeTo('meta', 'meta.example.com', 'ext'),
        externalName('meta', '0xa9.0xfe.0xa9.0xfe'),
        routeTo('gcp', 'gcp.example.com', 'ext'),
        externalName('gcp', 'metadata.google.internal'),
        // The Service lists port 9999, the Ingress uses HAProxy's status port.
        routeTo('status', 'status.example.com', 'ext', status),
        externalName('status', '127.0.0.1', 9999),
        // An endpoint on the stats page's port.
        routeTo('stats', 'stats.example.com', 'web'),
        ...backed('stats', 'web', statsPort),
      ],
      { stats: `127.0.0.1:${statsPort}`, externalNameServices: true },
    );
    expect(result.rejections.map((r) => `${r.kind} ${r.namespace} ${r.scope}`).sort()).toEqual([
      'EndpointSlice stats endpoint',
      'Service gcp endpoint',
      'Service hex endpoint',
      'Service meta endpoint',
    ]);
    expect(result.warnings).toContain(
      `Ingress status/web: service status/ext: externalName "127.0.0.1" on port ${ports.status} is HAProxy's own host on HAProxy's own port ${ports.status}; its backend has no servers`,
    );
    expect(result.haproxyConfig).not.toMatch(/server srv\d+ (0x|127\.0\.0\.1:(\d+) resolvers|metadata)/);
    const verdict = await checkConfigFile(dirs.configFile);
    expect(verdict.ok, verdict.message).toBe(true);
    const haproxy = await startHaproxy(dirs.configFile, { statusPort: ports.status });
    try {
      expect((await get(ports.http, 'status.example.com', '/healthz')).status).toBe(503);
      expect((await get(ports.http, 'stats.example.com', '/stats')).status).toBe(503);
    } finally {
      await haproxy.stop();
    }
  });
});

// HTTPS Gateway listeners on a real HAProxy (conformance HTTPSListener and
// GatewayInvalidTLSConfiguration): TLS terminated with the listener's certificateRef, picked by
// SNI; a listener whose certificate is missing or in another namespace without a ReferenceGrant
// is not bound, its status says why, and HAProxy still starts on the rest.
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleTlsData, tlsSecret } from '../helpers/cluster.js';
import { send, servedCertificate } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { expectBackend, infraServices, INFRA, startInfraBackends } from '../helpers/e2e-gateway.js';
import { renderToDir, withHaproxy } from '../helpers/e2e-render.js';
import { gateway, gatewayClass, httpRoute, ref } from '../helpers/gateway-objects.js';
import { freePorts, SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/gateway-https.test.ts');

let root: string;
const echoes = new EchoFleet();
let backends: EchoServer[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-gateway-https-'));
  if (!SKIP_HAPROXY) backends = await startInfraBackends(echoes);
});
afterAll(async () => {
  await echoes.stopAll();
  await rm(root, { recursive: true, force: true });
});

describe.skipIf(SKIP_HAPROXY)('HTTPS Gateway listeners on a real HAProxy', () => {
  it('terminates TLS with the certificateRef picked by SNI, and leaves listeners with unusable certificates unbound', async () => {
    const [https, broken, foreign] = (await freePorts(3)) as [number, number, number];
    const tls = (name: string, namespace?: string) => ({ mode: 'Terminate', certificateRefs: [{ kind: 'Secret', group: '', name, ...(namespace === undefined ? {} : { namespace }) }] });
    const objects = [
      gatewayClass(),
      gateway(INFRA, 'secure', [
        { name: 'https', port: https, protocol: 'HTTPS', hostname: 'shop.example.com', tls: tls('shop-tls') },
        { name: 'broken', port: broken, protocol: 'HTTPS', tls: tls('missing') },
        { name: 'foreign', port: foreign, protocol: 'HTTPS', tls: tls('shop-tls', 'vault') },
      ]),
      tlsSecret(INFRA, 'shop-tls'),
      tlsSecret('vault', 'shop-tls'),
      ...infraServices(backends),
      httpRoute(INFRA, 'secure-route', { parentRefs: [{ name: 'secure' }], rules: [{ backendRefs: [ref('v1')] }] }),
    ];
    const rendered = await renderToDir(join(root, 'out'), objects);
    const listeners = rendered.result.gatewayStatus?.gateways[0]?.listeners ?? [];
    expect(listeners.map((l) => [l.name, l.conditions.find((c) => c.type === 'ResolvedRefs')?.reason, l.attachedRoutes])).toEqual([
      ['https', 'ResolvedRefs', 1],
      // Unbound for their certificates, they still count the route attached to them (the spec's attachedRoutes).
      ['broken', 'InvalidCertificateRef', 1],
      ['foreign', 'RefNotPermitted', 1],
    ]);
    expect(rendered.result.haproxyConfig).not.toContain(`:${broken}`);
    expect(rendered.result.haproxyConfig).not.toContain(`:${foreign}`);
    const expected = new X509Certificate(Buffer.from(exampleTlsData()['tls.crt'], 'base64')).fingerprint256;
    await withHaproxy(rendered, async () => {
      const reply = await send({ port: https, host: 'shop.example.com', path: '/secure', tls: true });
      expectBackend(reply, 'v1', '/secure');
      expect(reply.echo?.headers['x-forwarded-proto']).toBe('https');
      expect((await servedCertificate(https, 'shop.example.com')).fingerprint256).toBe(expected);
      // No listener without a hostname: strict SNI, an unknown name gets no certificate.
      await expect(servedCertificate(https, 'other.example.com')).rejects.toThrow();
      await expect(send({ port: broken, host: 'shop.example.com', tls: true })).rejects.toThrow();
    });
  });
});

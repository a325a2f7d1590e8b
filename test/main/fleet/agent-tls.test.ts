import { randomBytes, webcrypto } from 'node:crypto';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentState } from '../../../src/main/agent/agent-protocol.js';
import { startAgentServer, type AgentServer } from '../../../src/main/agent/agent-server.js';
import { BearerAuth } from '../../../src/main/agent/bearer-auth.js';
import { AgentClient, AgentUnreachableError } from '../../../src/main/fleet/agent-client.js';
import { ConcurrencyLimit } from '../../../src/main/fleet/concurrency-limit.js';
import { silentLogger } from '../../helpers/loggers.js';

/** A self-signed certificate for the IP address 127.0.0.1, and its key. */
async function certificateFor127(): Promise<{ cert: string; key: string }> {
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: `01${randomBytes(8).toString('hex')}`,
    name: 'CN=agent',
    notBefore: new Date(Date.now() - 3_600_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: algorithm,
    keys: keys as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }])],
  });
  const key = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { cert: certificate.toString('pem'), key };
}

const STATE: AgentState = { epoch: 0, sequence: 0, checksum: null, files: {}, haproxy: { version: null, running: false }, ready: false };
let server: AgentServer;
let tls: { cert: string; key: string };
let port: number;

function client(ca?: string): AgentClient {
  return new AgentClient({ endpoint: { host: '127.0.0.1', port }, token: 't0ken', limit: new ConcurrencyLimit(1), timeoutMs: 3000, ...(ca === undefined ? {} : { ca }) });
}

describe('the agent API over TLS', () => {
  beforeAll(async () => {
    tls = await certificateFor127();
    server = await startAgentServer({
      listen: '127.0.0.1:0',
      agent: { ready: false, state: () => STATE, apply: () => Promise.reject(new Error('not used')) },
      auth: new BearerAuth('t0ken', silentLogger()),
      logger: silentLogger(),
      tls,
    });
    port = Number(server.address.split(':')[1]);
  });

  afterAll(async () => {
    await server.close();
  });

  it('answers a leader that verifies the agent certificate against the CA it was given', async () => {
    expect(await client(tls.cert).send('GET', '/v1/state', 'state')).toEqual({ status: 200, body: STATE });
  });

  it('keeps one connection, with one TLS handshake, for consecutive exchanges', async () => {
    const counted = createHttpsServer({ cert: tls.cert, key: tls.key }, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    let handshakes = 0;
    counted.on('secureConnection', () => handshakes++);
    await new Promise<void>((resolve) => counted.listen(0, '127.0.0.1', resolve));
    const one = new AgentClient({ endpoint: { host: '127.0.0.1', port: (counted.address() as AddressInfo).port }, token: 't0ken', limit: new ConcurrencyLimit(1), timeoutMs: 3000, ca: tls.cert });
    try {
      for (let i = 0; i < 3; i++) expect(await one.send('POST', '/v1/apply', 'runtime', { i })).toEqual({ status: 200, body: { ok: true } });
      expect(handshakes).toBe(1);
    } finally {
      counted.closeAllConnections();
      await new Promise((resolve) => counted.close(resolve));
    }
  });

  it('is unreachable for a leader that trusts another CA, or that talks plain HTTP', async () => {
    const other = await certificateFor127();
    await expect(client(other.cert).send('GET', '/v1/state', 'state')).rejects.toBeInstanceOf(AgentUnreachableError);
    await expect(client().send('GET', '/v1/state', 'state')).rejects.toBeInstanceOf(AgentUnreachableError);
  });
});

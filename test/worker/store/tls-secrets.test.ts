// TLS Secrets checked with node:crypto in the object checks: a certificate that is not valid PEM,
// a fake PEM body, a key that does not match, or a key or signature HAProxy's OpenSSL refuses
// rejects the Secret (scope 'tls') and drops TLS for the hosts that use it, never the render and
// never anyone else's TLS. What is written is the parsed chain and key, re-serialised.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, TemplateSetSource } from '../../../src/worker/protocol.js';
import { defaultTemplateSet, endpointSlice, exampleTlsData, ingress, renderObjects, rule, service, tlsSecret } from '../../helpers/cluster.js';
import { ED25519_CERT, ED25519_KEY, RSA_1024_CERT, RSA_1024_KEY, RSA_6144_CERT, RSA_6144_KEY, SHA1_SIGNED_CERT, SHA1_SIGNED_KEY } from './tls-fixtures.js';

let set: TemplateSetSource;
beforeAll(async () => {
  set = await defaultTemplateSet();
});

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const decoded = (data: string): string => Buffer.from(data, 'base64').toString('utf8');

/** Two tenants: `good` with the example certificate, `evil` with the Secret under test. */
function cluster(evilData: Record<string, string>, evilSecret: Partial<KubeObject> = {}): KubeObject[] {
  const app = (ns: string, host: string): KubeObject[] => [
    ingress(ns, 'web', { tls: [{ hosts: [host], secretName: 'tls' }], rules: [rule(host, { path: '/', service: 'web' })] }),
    service(ns, 'web'),
    endpointSlice(ns, 'web', ['10.0.0.1']),
  ];
  return [...app('good', 'good.example.com'), tlsSecret('good', 'tls'), ...app('evil', 'evil.example.com'), { ...tlsSecret('evil', 'tls', evilData), ...evilSecret }];
}

/** Renders, and requires success: no Secret may fail the render. */
function render(objects: KubeObject[]) {
  const outcome = renderObjects(set, objects);
  if (!outcome.ok) throw new Error(`the ${outcome.phase} phase failed: ${outcome.message}`);
  return outcome;
}

function expectTlsDroppedForEvilOnly(objects: KubeObject[], reason: RegExp): void {
  const out = render(objects);
  expect(Object.keys(out.auxiliaryFiles.certificates).filter((name) => name.startsWith('evil'))).toEqual([]);
  expect(out.auxiliaryFiles.certificates['good_tls.pem']).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
  expect(out.auxiliaryFiles.files['crt-list.txt']).toContain('good.example.com');
  expect(out.auxiliaryFiles.files['crt-list.txt']).not.toContain('evil.example.com');
  // HTTP keeps routing the host that lost TLS.
  expect(out.auxiliaryFiles.maps['host-prefix.map']).toContain('evil.example.com/ ing_evil_web_web_80\n');
  expect(out.rejections).toEqual([{ kind: 'Secret', namespace: 'evil', name: 'tls', scope: 'tls', reason: expect.stringMatching(reason), wholeObject: true }]);
  expect(out.warnings.some((w) => w.startsWith('rejected Secret evil/tls: '))).toBe(true);
}

describe('TLS Secrets that HAProxy could not load drop TLS for their hosts only', () => {
  const example = (): { 'tls.crt': string; 'tls.key': string } => exampleTlsData();

  it('a certificate that is not valid PEM (invalid base64 in the block) is a rejection, not an auxiliary-phase failure', () => {
    const crt = b64('-----BEGIN CERTIFICATE-----\n!!!! not base64 !!!!\n-----END CERTIFICATE-----\n');
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': crt, 'tls.key': example()['tls.key'] }), /^the certificate in tls\.crt is not a valid X\.509 certificate/);
  });

  it('a fake PEM body (valid base64, not a certificate) is refused before haproxy -c sees it', () => {
    const crt = b64(`-----BEGIN CERTIFICATE-----\n${Buffer.from('this is not DER at all, only base64 of text').toString('base64')}\n-----END CERTIFICATE-----\n`);
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': crt, 'tls.key': example()['tls.key'] }), /^the certificate in tls\.crt is not a valid X\.509 certificate/);
  });

  it('a certificate with a key that does not match is refused', () => {
    const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': example()['tls.crt'], 'tls.key': b64(key) }), /^tls\.key does not match the certificate in tls\.crt$/);
  });

  it('a key that is not a private key, or data that is not base64, is refused', () => {
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': example()['tls.crt'], 'tls.key': b64('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n') }), /^tls\.key is not a valid unencrypted private key/);
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': 'not base64!', 'tls.key': example()['tls.key'] }), /^data\["tls\.crt"\] is not base64$/);
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': example()['tls.crt'] }), /^has no tls\.key$/);
  });

  it('a 1,024-bit RSA key and a SHA-1 signed certificate, which OpenSSL refuses at its default level, are refused', () => {
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': b64(RSA_1024_CERT), 'tls.key': b64(RSA_1024_KEY) }), /has a 1024-bit RSA key, which HAProxy's OpenSSL refuses$/);
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': b64(SHA1_SIGNED_CERT), 'tls.key': b64(SHA1_SIGNED_KEY) }), /is signed with SHA-1, which HAProxy's OpenSSL refuses$/);
  });

  it("a leaf RSA key over 4,096 bits, which would make every handshake to the host cost HAProxy's shared CPU dearly, is refused", () => {
    expectTlsDroppedForEvilOnly(
      cluster({ 'tls.crt': b64(RSA_6144_CERT), 'tls.key': b64(RSA_6144_KEY) }),
      /^the certificate in tls\.crt has a 6144-bit RSA key, over the limit of 4096 bits \(HAProxy signs every TLS handshake with it\)$/,
    );
  });
});

/** A self-signed P-256 certificate with `names` subject alternative names, made by the openssl command. */
function certificateWithNames(names: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'chain-'));
  try {
    const san = Array.from({ length: names }, (_, i) => `DNS:host-${i}.a-rather-long-domain-name.example.com`).join(',');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '30', '-subj', '/CN=big', '-addext', `subjectAltName=${san}`, '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')], { stdio: 'ignore' });
    return readFileSync(join(dir, 'c.pem'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('TLS Secrets whose chain HAProxy would send in every handshake are capped', () => {
  it('a chain of 11 certificates (over 10) drops TLS for its hosts only', () => {
    const { 'tls.crt': crt, 'tls.key': key } = exampleTlsData();
    const chain = decoded(crt) + decoded(crt).repeat(10);
    expectTlsDroppedForEvilOnly(cluster({ 'tls.crt': b64(chain), 'tls.key': key }), /^tls\.crt holds 11 certificates, over the limit of 10$/);
  });

  it('a chain of 8 certificates over 64 KiB drops TLS for its hosts only; a 10-certificate chain under it is served', () => {
    const { 'tls.crt': crt, 'tls.key': key } = exampleTlsData();
    const big = certificateWithNames(250);
    expect(big.length).toBeGreaterThan(9_000);
    expectTlsDroppedForEvilOnly(
      cluster({ 'tls.crt': b64(decoded(crt) + big.repeat(7)), 'tls.key': key }),
      /^the certificate chain in tls\.crt is \d+ bytes, over the limit of 65536 bytes \(HAProxy sends it in every TLS handshake\)$/,
    );
    const out = render(cluster({ 'tls.crt': b64(decoded(crt).repeat(10)), 'tls.key': key }));
    expect(out.rejections).toEqual([]);
    expect(out.auxiliaryFiles.certificates['evil_tls.pem']?.match(/BEGIN CERTIFICATE/g)).toHaveLength(10);
  });
});

describe('TLS Secrets that HAProxy can load', () => {
  it('are read from stringData (plain PEM) as well as from data (base64)', () => {
    const { 'tls.crt': crt, 'tls.key': key } = exampleTlsData();
    const objects = cluster({}, { data: undefined, stringData: { 'tls.crt': decoded(crt), 'tls.key': decoded(key) } } as Partial<KubeObject>);
    const out = render(objects);
    expect(out.rejections).toEqual([]);
    expect(out.auxiliaryFiles.certificates['evil_tls.pem']).toBe(out.auxiliaryFiles.certificates['good_tls.pem']);
  });

  it('are written re-serialised from the parsed certificate and key: text around the PEM blocks never reaches the output', () => {
    const { 'tls.crt': crt, 'tls.key': key } = exampleTlsData();
    const noisy = b64(`frontend injected\n${decoded(crt)}\nbackend injected\n`);
    const out = render(cluster({ 'tls.crt': noisy, 'tls.key': key }));
    expect(out.auxiliaryFiles.certificates['evil_tls.pem']).not.toContain('injected');
    expect(out.auxiliaryFiles.certificates['evil_tls.pem']).toMatch(/^-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/);
  });

  it('include Ed25519 certificates, which HAProxy 2.6 loads', () => {
    const objects = [
      ingress('ed', 'web', { tls: [{ hosts: ['ed.example.com'], secretName: 'tls' }], rules: [rule('ed.example.com', { path: '/', service: 'web' })] }),
      service('ed', 'web'),
      endpointSlice('ed', 'web', ['10.0.0.1']),
      tlsSecret('ed', 'tls', { 'tls.crt': b64(ED25519_CERT), 'tls.key': b64(ED25519_KEY) }),
    ];
    const out = render(objects);
    expect(out.rejections).toEqual([]);
    expect(Object.keys(out.auxiliaryFiles.certificates)).toContain('ed_tls.pem');
  });
});

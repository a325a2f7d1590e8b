// The self-signed default certificate of an output directory: what HAProxy serves for an SNI name
// no Ingress owns, so a stranger never gets another tenant's certificate. Generated once (ECDSA
// P-256, @peculiar/x509 over WebCrypto: node:crypto alone cannot issue X.509 certificates) on the
// main thread when `render` or `run` starts, kept in <out>/.haptic-default-certificate.pem (0600,
// written atomically, never through a symlink), and reused until it is unreadable or near expiry.
// It reaches templates as the `selfSignedCertificate` value (the PEM text; see templates/default.yaml).
import { X509Certificate, createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock, type Clock } from '../core/clock.js';
import { readKeptFile, writeKeptFile } from './kept-file.js';

export const DEFAULT_CERTIFICATE_FILE = '.haptic-default-certificate.pem';
/** The subject of a generated certificate. */
export const DEFAULT_CERTIFICATE_SUBJECT = 'CN=haptic-reconciler default certificate';

const VALIDITY_DAYS = 825;
/** A kept certificate closer than this to its expiry is replaced. */
const RENEW_BEFORE_MS = 30 * 86_400_000;
const MAX_FILE_BYTES = 64 * 1024;

export interface DefaultCertificateOptions {
  readonly clock?: Clock;
}

/**
 * The PEM (certificate, then key) of `outDir`'s default certificate: the kept one when it is
 * still good, otherwise a new one, written for the next start. Creates `outDir` if needed.
 */
export async function defaultCertificateFor(outDir: string, options: DefaultCertificateOptions = {}): Promise<string> {
  const now = (options.clock ?? systemClock).now();
  const file = join(outDir, DEFAULT_CERTIFICATE_FILE);
  await mkdir(outDir, { recursive: true, mode: 0o755 });
  const kept = await readKeptFile(file, MAX_FILE_BYTES);
  if (kept !== undefined && usable(kept, now)) return kept;
  const pem = await generateSelfSigned(now);
  await writeKeptFile(file, pem);
  return pem;
}

/** A new self-signed certificate (subject `subject`, an X.500 name) and its key, as one PEM text. */
export async function generateSelfSigned(now: number, subject: string = DEFAULT_CERTIFICATE_SUBJECT): Promise<string> {
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const serial = randomBytes(16);
  serial[0] = (serial[0] as number) & 0x7f; // a positive serial number
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: subject,
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + VALIDITY_DAYS * 86_400_000),
    signingAlgorithm: algorithm,
    keys: keys as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  });
  const key = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return `${certificate.toString('pem').trim()}\n${key.trim()}\n`;
}

/** Whether the PEM holds a certificate valid for 30 more days and the key that matches it. */
function usable(pem: string, now: number): boolean {
  try {
    const certificate = new X509Certificate(pem);
    const key = createPrivateKey(pem);
    return certificate.checkPrivateKey(key) && Date.parse(certificate.validFrom) <= now && Date.parse(certificate.validTo) - RENEW_BEFORE_MS > now;
  } catch {
    return false;
  }
}

// A TLS Secret's certificate chain and private key, parsed with node:crypto as HAProxy's OpenSSL
// would load them: every certificate must be X.509, the key must be a private key that matches
// the leaf, and nothing may be weak enough for OpenSSL's default security level to refuse it
// (RSA under 2,048 bits, small curves, MD5/SHA-1 signatures on certificates that are not
// self-signed), since HAProxy refuses the whole configuration over one such file. Nor may the
// leaf's RSA key be over MAX_RSA_KEY_BITS, which would make every handshake costly, nor the chain
// over MAX_CHAIN_CERTIFICATES certificates or MAX_CHAIN_BYTES, which HAProxy sends in every
// handshake. What is written is re-serialised from the parsed objects, so no fake PEM body can
// reach the output.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { MAX_CHAIN_BYTES, MAX_CHAIN_CERTIFICATES, MAX_RSA_KEY_BITS } from './value-limits.js';

/** A checked certificate and key, as the one PEM file HAProxy loads: the chain, then the key. */
export interface TlsMaterial {
  readonly pem: string;
}

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n([\s\S]*?)-----END CERTIFICATE-----/g;
const CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1', 'secp256k1']);
/** Signature algorithm OIDs (DER contents, hex) of MD2/MD4/MD5/SHA-1 signatures. */
const WEAK_SIGNATURES = new Map([
  ['2a864886f70d010102', 'MD2'],
  ['2a864886f70d010103', 'MD4'],
  ['2a864886f70d010104', 'MD5'],
  ['2a864886f70d010105', 'SHA-1'],
  ['2b0e03021d', 'SHA-1'],
  ['2a8648ce3d0401', 'SHA-1'],
  ['2a8648ce380403', 'SHA-1'],
]);

/** The material of a certificate and key in PEM text, or why HAProxy could not load it. */
export function parseTlsPair(crt: string, key: string): { material: TlsMaterial } | { problem: string } {
  const blocks = [...crt.matchAll(CERTIFICATE_BLOCK)].map((m) => m[0]);
  if (blocks.length === 0) return { problem: 'tls.crt holds no PEM certificate' };
  if (blocks.length > MAX_CHAIN_CERTIFICATES) return { problem: `tls.crt holds ${blocks.length} certificates, over the limit of ${MAX_CHAIN_CERTIFICATES}` };
  const chain: X509Certificate[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const which = i === 0 ? 'the certificate in tls.crt' : `certificate ${i + 1} of the chain in tls.crt`;
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(blocks[i] as string);
    } catch (error) {
      return { problem: `${which} is not a valid X.509 certificate (${messageOf(error)})` };
    }
    const weakness = keyWeakness(certificate.publicKey) ?? signatureWeakness(certificate);
    if (weakness !== null) return { problem: `${which} ${weakness}, which HAProxy's OpenSSL refuses` };
    chain.push(certificate);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key, format: 'pem' });
  } catch (error) {
    return { problem: `tls.key is not a valid unencrypted private key (${messageOf(error)})` };
  }
  const leaf = chain[0] as X509Certificate;
  if (!leaf.checkPrivateKey(privateKey)) return { problem: 'tls.key does not match the certificate in tls.crt' };
  const bits = leaf.publicKey.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits > MAX_RSA_KEY_BITS) {
    return { problem: `the certificate in tls.crt has a ${bits}-bit RSA key, over the limit of ${MAX_RSA_KEY_BITS} bits (HAProxy signs every TLS handshake with it)` };
  }
  const certificates = chain.map((c) => withNewline(c.toString())).join('');
  if (certificates.length > MAX_CHAIN_BYTES) {
    return { problem: `the certificate chain in tls.crt is ${certificates.length} bytes, over the limit of ${MAX_CHAIN_BYTES} bytes (HAProxy sends it in every TLS handshake)` };
  }
  const keyPem = withNewline(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  return { material: Object.freeze({ pem: certificates + keyPem }) };
}

function keyWeakness(key: KeyObject): string | null {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  switch (type) {
    case 'rsa':
    case 'rsa-pss':
      return (details.modulusLength ?? 0) < 2048 ? `has a ${details.modulusLength ?? 0}-bit RSA key` : null;
    case 'ec':
      return CURVES.has(details.namedCurve ?? '') ? null : `uses the curve ${details.namedCurve ?? 'unknown'}`;
    case 'ed25519':
    case 'ed448':
      return null;
    default:
      return `has a ${type ?? 'unknown'} key`;
  }
}

/** A weak signature on a certificate that is not self-signed (self-signatures are not checked). */
function signatureWeakness(certificate: X509Certificate): string | null {
  const algorithm = WEAK_SIGNATURES.get(signatureOid(certificate.raw));
  if (algorithm === undefined) return null;
  return certificate.checkIssued(certificate) ? null : `is signed with ${algorithm}`;
}

/**
 * The signature algorithm OID of a DER certificate (hex), read from the outer SEQUENCE:
 * tbsCertificate, then signatureAlgorithm { OID, ... }. '' when the DER is not as expected.
 */
function signatureOid(der: Buffer): string {
  let pos = 0;
  const header = (tag: number): number => {
    if (der[pos] !== tag) return -1;
    let length = der[pos + 1] ?? 0;
    pos += 2;
    if (length & 0x80) {
      const bytes = length & 0x7f;
      length = 0;
      for (let i = 0; i < bytes; i++) length = length * 256 + (der[pos++] ?? 0);
    }
    return length;
  };
  if (header(0x30) < 0) return '';
  const tbs = header(0x30);
  if (tbs < 0) return '';
  pos += tbs;
  if (header(0x30) < 0) return '';
  const oid = header(0x06);
  return oid < 0 ? '' : der.subarray(pos, pos + oid).toString('hex');
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

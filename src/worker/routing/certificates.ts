// TLS certificates of the routing model: a Secret's `tls.crt` and `tls.key` become one PEM file,
// and the TLS sections of all Ingresses are merged into one certificate per Secret. Each section's
// Secret lookup is cached with its Ingress, so merging replays it exactly as a cold build would.
import type { KubeObject } from '../protocol.js';
import type { Certificate } from './model.js';

/** One TLS section of an Ingress, with the Secret lookup done when the Ingress was computed. */
export interface TlsUse {
  readonly certName: string;
  readonly hosts: readonly string[];
  /** The Secret's PEM, or undefined when it is missing or incomplete. */
  readonly pem: string | undefined;
  /** Guard rejections met by the Secret lookup, replayed only when a cold build would look. */
  readonly rejections: readonly string[];
  readonly missing: string;
}

/** The certificate and key of a TLS Secret as one PEM file, or undefined when either is missing. */
export function pemFromSecret(secret: KubeObject): string | undefined {
  const data = secret.data as Record<string, string> | undefined;
  const crt = data?.['tls.crt'];
  const key = data?.['tls.key'];
  if (crt === undefined || key === undefined) return undefined;
  const decode = (b64: string): string => Buffer.from(b64, 'base64').toString('utf8').trim();
  return `${decode(crt)}\n${decode(key)}\n`;
}

/**
 * Merges one TLS use into `certificates` (by file name) exactly as a cold build would: the first
 * use of a Secret looks it up (its rejections and a missing Secret are reported then); later uses
 * of a Secret found only add hosts.
 */
export function mergeTlsUse(
  certificates: Map<string, Certificate>,
  use: TlsUse,
  source: { reject(reason: string): void },
  warn: (message: string) => void,
): void {
  const existing = certificates.get(use.certName);
  if (existing !== undefined) {
    certificates.set(use.certName, { ...existing, hosts: [...new Set([...existing.hosts, ...use.hosts])].sort() });
    return;
  }
  for (const reason of use.rejections) source.reject(reason);
  if (use.pem === undefined) warn(use.missing);
  else certificates.set(use.certName, { name: use.certName, pem: use.pem, hosts: use.hosts });
}

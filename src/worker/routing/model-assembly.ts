// The parts of the routing model that are decided across Ingresses, in claimant order (oldest
// first, see claimant.ts): which Ingress's certificate serves each TLS host, whose
// `spec.defaultBackend` is the default, and the default certificate for unknown SNI names.
// Pure functions of the Ingress entries: the builder calls them whenever an entry changed, so
// an incremental build decides exactly as a cold one.
import { pemFromSecret } from './certificates.js';
import { compareClaimants, type Claimant } from './claimant.js';
import type { Certificate, ModelOptions } from './model.js';
import type { StoreReader } from './model-source.js';
import { findingOf, type Warn } from './findings.js';

/** A TLS section of an Ingress whose Secret was found: the hosts it claims for its certificate. */
export interface TlsClaim {
  /** File name of the certificate: `<namespace>_<secret>.pem`. */
  readonly certName: string;
  readonly pem: string;
  /** The hosts it claims (already filtered by the TLS host policy), sorted. */
  readonly hosts: readonly string[];
}

/** What the cross-Ingress decisions read of one Ingress entry. */
export interface ClaimSource {
  readonly claimant: Claimant;
  readonly tls: readonly TlsClaim[];
  /** The backend of its `spec.defaultBackend`, if it has one. */
  readonly defaultBackend: string | undefined;
}

export interface TlsAssignment {
  /** Each certificate with the hosts it owns, sorted by name; certificates that own no host are left out. */
  readonly certificates: Certificate[];
  /** Every owned TLS host, sorted. */
  readonly hosts: string[];
}

/**
 * Each TLS host goes to its oldest claimant; a later claim with another certificate is refused
 * with a warning naming both Ingresses (a claim of the same certificate is no conflict). With
 * `hostHolder` (under `tlsHostOwnership: routed-oldest`: the namespace whose served routes keep
 * a namespace from a host, see RouteIndex.hostHolder), a claim on a host another namespace holds
 * is refused first: no namespace can put its certificate, and with it the HTTPS redirect, on a
 * host (or under a wildcard) another namespace routes.
 */
export function assignTlsHosts(
  sources: readonly ClaimSource[],
  warn: Warn,
  hostHolder?: (host: string, namespace: string) => string | undefined,
): TlsAssignment {
  const ordered = sources.filter((s) => s.tls.length > 0).sort((a, b) => compareClaimants(a.claimant, b.claimant));
  const owners = new Map<string, { claimant: Claimant; certName: string }>();
  const byCert = new Map<string, { pem: string; hosts: string[] }>();
  for (const source of ordered) {
    for (const claim of source.tls) {
      for (const host of claim.hosts) {
        const holder = hostHolder?.(host, source.claimant.namespace);
        if (holder !== undefined) {
          warn(`${source.claimant.owner}: TLS host ${host} belongs to namespace ${holder}; ignored`, findingOf(source.claimant, 'HostConflict', 'tls'));
          continue;
        }
        const owner = owners.get(host);
        if (owner !== undefined) {
          if (owner.certName !== claim.certName) warn(`${source.claimant.owner}: TLS host ${host} is already served by ${owner.claimant.owner}; ignored`, findingOf(source.claimant, 'HostConflict', 'tls'));
          continue;
        }
        owners.set(host, { claimant: source.claimant, certName: claim.certName });
        let cert = byCert.get(claim.certName);
        if (cert === undefined) {
          cert = { pem: claim.pem, hosts: [] };
          byCert.set(claim.certName, cert);
        }
        cert.hosts.push(host);
      }
    }
  }
  const certificates = [...byCert].map(([name, { pem, hosts }]) => certificate(name, pem, hosts.sort())).sort((a, b) => (a.name < b.name ? -1 : 1));
  return { certificates, hosts: [...owners.keys()].sort() };
}

/**
 * Host names per crt-list line: 32 names of at most 253 characters stay far below the validator's
 * line cap (and HAProxy's line buffer), however many hosts the Ingresses of a namespace give one
 * certificate (a line of them all failed every render).
 */
export const CRT_LIST_HOSTS_PER_LINE = 32;

function certificate(name: string, pem: string, hosts: readonly string[]): Certificate {
  const hostLines: (readonly string[])[] = [];
  for (let i = 0; i < hosts.length; i += CRT_LIST_HOSTS_PER_LINE) hostLines.push(hosts.slice(i, i + CRT_LIST_HOSTS_PER_LINE));
  return { name, pem, hosts, hostLines };
}

/**
 * The oldest `spec.defaultBackend`, for hosts nobody owns. Every other one is named in a
 * warning: the oldest of each other namespace still serves the unmatched paths of the hosts its
 * namespace owns (host-fallback.ts); a newer one of the same namespace is ignored.
 */
export function chooseDefaultBackend(sources: readonly ClaimSource[], warn: (message: string) => void): string | undefined {
  const candidates = sources.filter((s) => s.defaultBackend !== undefined).sort((a, b) => compareClaimants(a.claimant, b.claimant));
  const winner = candidates[0];
  const namespaces = new Map<string, Claimant>();
  for (const candidate of candidates) {
    const first = namespaces.get(candidate.claimant.namespace);
    if (first === undefined) namespaces.set(candidate.claimant.namespace, candidate.claimant);
    if (candidate === winner) continue;
    if (first === undefined) {
      warn(
        `${candidate.claimant.owner}: spec.defaultBackend serves only the unmatched paths of the hosts namespace ${candidate.claimant.namespace} owns; ` +
          `for other hosts the default backend of ${winner?.claimant.owner} (the oldest) applies`,
      );
    } else {
      warn(`${candidate.claimant.owner}: spec.defaultBackend is ignored; the default backend of ${first.owner} (the oldest in namespace ${candidate.claimant.namespace}) applies`);
    }
  }
  return winner?.defaultBackend;
}

/** File name of the default certificate; tenant certificates are `<namespace>_<secret>.pem`, and a namespace has no `_`. */
export const DEFAULT_CERTIFICATE_NAME = 'default.pem';

/**
 * The certificate for unknown SNI names: the Secret named by `values.defaultCertificate`, or else
 * the self-signed one the command line made for the output directory. Undefined without either.
 */
export function resolveDefaultCertificate(reader: StoreReader, options: ModelOptions, warn: (message: string) => void): Certificate | undefined {
  if (options.defaultCertificate !== '') {
    const parts = options.defaultCertificate.split('/');
    const secret = parts.length === 2 ? reader.getSingle(options.stores.secrets, parts) : undefined;
    const pem = secret === undefined ? undefined : pemFromSecret(secret);
    if (pem !== undefined) return certificate(DEFAULT_CERTIFICATE_NAME, pem, []);
    const fallback = options.selfSignedCertificate === '' ? 'unknown SNI names get no certificate' : 'the self-signed certificate is used';
    warn(`values.defaultCertificate: secret ${JSON.stringify(options.defaultCertificate)} is missing or has no tls.crt/tls.key; ${fallback}`);
  }
  return options.selfSignedCertificate === '' ? undefined : certificate(DEFAULT_CERTIFICATE_NAME, options.selfSignedCertificate, []);
}

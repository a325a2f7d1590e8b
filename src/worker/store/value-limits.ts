// The caps on values taken from cluster objects, in one table the README prints. They keep every
// line built from object data far below HAProxy's 16,384-byte line buffer (a longer map line is
// split, and its tail becomes a map entry of its own), and every list an object brings bounded.
// The validator's line cap (validate/line-limits.ts) is a second, independent wall behind them.
import { DEFAULT_BUFSIZE, maxLineLength } from '../validate/line-limits.js';

/** Hosts (`spec.rules[].host`, `spec.tls[].hosts[]`, `externalName`): DNS names. */
export const MAX_HOST = 253;
export const MAX_DNS_LABEL = 63;
/** `spec.rules[].http.paths[].path`. */
export const MAX_PATH = 2048;
/** Every annotation value. */
export const MAX_ANNOTATION_VALUE = 4096;
/** All annotations of one object together, keys included (Kubernetes' own limit). */
export const MAX_ANNOTATIONS_TOTAL = 262_144;
/** Label and annotation keys: a 253-character DNS prefix, '/', a 63-character name. */
export const MAX_QUALIFIED_NAME = 253 + 1 + 63;
export const MAX_LABEL_VALUE = 63;
/** Port names (IANA service names). */
export const MAX_PORT_NAME = 15;
/** Paths of one Ingress, over all its rules (and its default backend). */
export const MAX_INGRESS_PATHS = 1000;
/** Hosts of one Ingress's TLS entries together. */
export const MAX_TLS_HOSTS = 1000;
/** Ports of one Service or EndpointSlice (Kubernetes caps EndpointSlice ports at 100). */
export const MAX_PORTS = 100;
/** Endpoints of one EndpointSlice, and addresses of one endpoint (Kubernetes' own limits). */
export const MAX_SLICE_ENDPOINTS = 1000;
export const MAX_ENDPOINT_ADDRESSES = 100;
/** One Secret value, decoded; Kubernetes refuses objects over 1 MiB. */
export const MAX_SECRET_VALUE = 1_048_576;
/**
 * Certificates in one `tls.crt` (the leaf and its chain), and the bytes of the chain as written
 * (PEM). HAProxy sends the chain in every full handshake and holds it per connection while it
 * does: a 1 MiB chain cost 687 KB per handshake and 1.1 MB of memory per connection. Public
 * chains have 2 to 4 certificates of 1 to 2 KB each.
 */
export const MAX_CHAIN_CERTIFICATES = 10;
export const MAX_CHAIN_BYTES = 65_536;
/**
 * Bits of a leaf certificate's RSA key. HAProxy signs every full TLS handshake with it: about a
 * millisecond of CPU at 2,048 bits, 6 at 4,096, 400 at 15,360, so one tenant's huge key would let
 * anyone who opens connections to its host take the CPU everyone shares.
 */
export const MAX_RSA_KEY_BITS = 4096;
/** Default of `values.maxEndpointsPerService`: ready endpoints one backend takes from its Service. */
export const DEFAULT_MAX_ENDPOINTS_PER_SERVICE = 1000;
/** Server slots per backend, both the `serverSlots` block and the total. */
export const MAX_SERVER_SLOTS = 1000;
/** A file name in the output directory (the file systems' NAME_MAX); a certificate's is `<namespace>_<secret>.pem`. */
export const MAX_FILE_NAME = 255;
/** Default of `values.maxOutputBytes`: the config and every auxiliary file together. */
export const DEFAULT_MAX_OUTPUT_BYTES = 32 * 1024 * 1024;
/**
 * One Ingress may add at most this share of `values.maxOutputBytes` to the output (estimated from
 * its backends, server slots, options and routes). Its options are written into each of its
 * backends, and each backend holds the endpoints of its Service port, so a small Ingress could
 * otherwise render megabytes, and two of them fail every render at the output cap.
 */
export const INGRESS_OUTPUT_SHARE = 16;
/**
 * What the Ingresses of all namespaces may add to the output together, estimated, as a share of
 * `values.maxOutputBytes`; the rest is for the template's own text and the estimate's error.
 * Past it, the namespace adding the most gives up its newest Ingress until the rest fit.
 */
export const TENANT_OUTPUT_SHARE = 0.75;

export interface ValueLimit {
  readonly value: string;
  readonly max: number;
  readonly unit: 'characters' | 'bytes' | 'entries' | 'bits';
  /** What happens past the cap. */
  readonly over: string;
}

/** Every cap on object data, for the README's security model. */
export const VALUE_LIMITS: readonly ValueLimit[] = [
  { value: 'Ingress rule host, TLS host, Service externalName', max: MAX_HOST, unit: 'characters', over: 'the rule (or TLS host) is dropped' },
  { value: 'DNS label of a host (between dots)', max: MAX_DNS_LABEL, unit: 'characters', over: 'as for the host' },
  { value: 'Ingress path', max: MAX_PATH, unit: 'characters', over: 'the path is dropped' },
  { value: 'annotation value', max: MAX_ANNOTATION_VALUE, unit: 'characters', over: 'the object is rejected' },
  { value: 'all annotations of an object', max: MAX_ANNOTATIONS_TOTAL, unit: 'characters', over: 'the object is rejected' },
  { value: 'label or annotation key', max: MAX_QUALIFIED_NAME, unit: 'characters', over: 'the object is rejected' },
  { value: 'label value', max: MAX_LABEL_VALUE, unit: 'characters', over: 'the object is rejected' },
  { value: 'metadata.name, ingressClassName, TLS secretName', max: 253, unit: 'characters', over: 'the object (or TLS entry) is rejected' },
  {
    value: 'namespace and TLS secretName together, as the certificate file name <namespace>_<secret>.pem',
    max: MAX_FILE_NAME,
    unit: 'characters',
    over: 'the TLS entry is dropped',
  },
  { value: 'metadata.namespace, backend service name', max: MAX_DNS_LABEL, unit: 'characters', over: 'the object (or path) is rejected' },
  { value: 'Ingress backend port name (Service and EndpointSlice port names are DNS labels, 63)', max: MAX_PORT_NAME, unit: 'characters', over: 'the path (or the object) is rejected' },
  { value: 'paths of one Ingress', max: MAX_INGRESS_PATHS, unit: 'entries', over: 'the Ingress is rejected' },
  { value: 'TLS hosts of one Ingress', max: MAX_TLS_HOSTS, unit: 'entries', over: 'TLS of the Ingress is dropped' },
  { value: 'ports of a Service or EndpointSlice', max: MAX_PORTS, unit: 'entries', over: 'the object is rejected' },
  { value: 'endpoints of one EndpointSlice', max: MAX_SLICE_ENDPOINTS, unit: 'entries', over: 'the EndpointSlice is rejected' },
  { value: 'addresses of one endpoint', max: MAX_ENDPOINT_ADDRESSES, unit: 'entries', over: 'the endpoint is dropped' },
  { value: 'Secret value (decoded)', max: MAX_SECRET_VALUE, unit: 'bytes', over: 'the Secret is rejected' },
  { value: 'certificates in tls.crt', max: MAX_CHAIN_CERTIFICATES, unit: 'entries', over: 'the Secret is rejected (TLS dropped)' },
  { value: 'certificate chain of tls.crt, as written (PEM)', max: MAX_CHAIN_BYTES, unit: 'bytes', over: 'the Secret is rejected (TLS dropped)' },
  { value: "bits of the RSA key of tls.crt's certificate", max: MAX_RSA_KEY_BITS, unit: 'bits', over: 'the Secret is rejected (TLS dropped)' },
  {
    value: 'ready endpoints per Service backend (values.maxEndpointsPerService)',
    max: DEFAULT_MAX_ENDPOINTS_PER_SERVICE,
    unit: 'entries',
    over: 'the rest are left out, with a warning naming the Service',
  },
  { value: 'server slots per backend (values.serverSlots, block and total)', max: MAX_SERVER_SLOTS, unit: 'entries', over: 'clamped, with a warning' },
  {
    value: 'server slots of all backends together (values.fdHardLimit / 2, here at its default 65,536): each health-checked slot holds a descriptor',
    max: 65_536 / 2,
    unit: 'entries',
    over: "the namespace holding the most gives up its newest Ingress's slots (503), with a warning, until the rest fit",
  },
  {
    value: 'what one Ingress adds to the output, estimated (values.maxOutputBytes / 16)',
    max: DEFAULT_MAX_OUTPUT_BYTES / INGRESS_OUTPUT_SHARE,
    unit: 'bytes',
    over: 'the Ingress is not served, with a warning naming its size',
  },
  {
    value: 'what all Ingresses add to the output together, certificates included, estimated (values.maxOutputBytes x 3/4)',
    max: DEFAULT_MAX_OUTPUT_BYTES * TENANT_OUTPUT_SHARE,
    unit: 'bytes',
    over: 'the namespace adding the most loses its newest Ingress, with a warning naming both, until the rest fit',
  },
  { value: 'rendered output (values.maxOutputBytes)', max: DEFAULT_MAX_OUTPUT_BYTES, unit: 'bytes', over: 'the render fails, naming the size' },
  {
    value: 'any line of the config, a map or a file (tune.bufsize minus a margin; the validator, not the guard)',
    max: maxLineLength(DEFAULT_BUFSIZE),
    unit: 'characters',
    over: 'validation fails, naming the file and line',
  },
];

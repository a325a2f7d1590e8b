// The annotation registry: every supported annotation of the HAProxy Kubernetes Ingress
// Controller, by its name without prefix, with the objects it applies to, its value parser, its
// default and what it does (the README's table is this table), plus the names refused outright
// (config snippets and other raw HAProxy text). Data and lookups only: reading an object's
// annotations is annotation-reader.ts, turning values into model options is ingress-options.ts.
import { parseSourceList } from './access.js';
import { DEFAULT_AUTH_REALM, parseAuthType, parseRealm, parseSecretRef } from './auth.js';
import { parseCookieName, parseLoadBalance, parsePodMaxconn, parseServerProto, parseTimeout } from './backend-tuning.js';
import { parseCorsHeaders, parseCorsMaxAge, parseCorsMethods, parseCorsOrigin } from './cors.js';
import { parseCheckHttp, parseCheckInterval } from './health.js';
import { parseRateLimitPeriod, parseRateLimitRequests, parseRateLimitStatus } from './rate-limit.js';
import { parsePort, parseRedirectTarget } from './redirect.js';
import { parseHeaderSettings, parseHostPort, parsePathRewrite } from './rewrite.js';
import { parseBool, parseRedirectCode, type Parsed } from './values.js';

/** The prefixes of our annotations, in the order of precedence when one name is set under several. */
export const ANNOTATION_PREFIXES: readonly string[] = ['haproxy.org/', 'haproxy.com/', 'ingress.kubernetes.io/'];

export type AnnotationTarget = 'Ingress' | 'Service';
export type AnnotationFamily = 'access' | 'auth' | 'tls' | 'redirect' | 'rewrite' | 'backend' | 'rate-limit' | 'cors' | 'health';

export interface AnnotationSpec {
  /** The name after the prefix. */
  readonly name: string;
  /** Other names for it; the name itself wins over an alias. */
  readonly aliases?: readonly string[];
  readonly family: AnnotationFamily;
  /** Objects it is read from; on both, the Ingress wins. */
  readonly appliesTo: readonly AnnotationTarget[];
  /** Access rules and authentication: a bad value rejects the Ingress, which is never served open. */
  readonly security: boolean;
  /** The value may hold several lines (one rule or header per line). */
  readonly multiLine?: boolean;
  readonly parse: (value: string) => Parsed<unknown>;
  /** For the README: accepted values, the default, and what the annotation does. */
  readonly values: string;
  readonly default: string;
  readonly effect: string;
}

const INGRESS: readonly AnnotationTarget[] = ['Ingress'];
const BOTH: readonly AnnotationTarget[] = ['Ingress', 'Service'];
const BOOL = 'true, false';
const TIME = 'HAProxy time: number + ms, s, m, h or d';

function spec(fields: AnnotationSpec): AnnotationSpec {
  return Object.freeze(fields);
}

export const ANNOTATIONS: readonly AnnotationSpec[] = [
  spec({ name: 'allow-list', aliases: ['whitelist'], family: 'access', appliesTo: INGRESS, security: true, parse: parseSourceList, values: 'IPs and CIDR blocks (IPv4, IPv6), comma-separated', default: 'none', effect: 'Only these source addresses are served; any other gets 403' }),
  spec({ name: 'deny-list', aliases: ['blacklist'], family: 'access', appliesTo: INGRESS, security: true, parse: parseSourceList, values: 'IPs and CIDR blocks (IPv4, IPv6), comma-separated', default: 'none', effect: 'These source addresses get 403' }),
  spec({ name: 'auth-type', family: 'auth', appliesTo: INGRESS, security: true, parse: parseAuthType, values: 'basic-auth', default: 'none', effect: 'HTTP basic authentication: 401 without valid credentials' }),
  spec({ name: 'auth-secret', family: 'auth', appliesTo: INGRESS, security: true, parse: parseSecretRef, values: '`name` or `namespace/name`; the namespace must be the Ingress\'s own', default: 'none (required with auth-type)', effect: 'Secret of users: each key a user name, each value a crypt(3) hash ($1$, $5$, $6$, $2a$/$2b$/$2y$, $y$), in data or stringData' }),
  spec({ name: 'auth-realm', family: 'auth', appliesTo: INGRESS, security: true, parse: parseRealm, values: 'text (printable ASCII, no `"` `\\` `$`), at most 128', default: DEFAULT_AUTH_REALM, effect: 'The realm of the authentication challenge' }),
  spec({ name: 'ssl-redirect', family: 'tls', appliesTo: INGRESS, security: false, parse: parseBool, values: BOOL, default: 'true', effect: 'Redirect HTTP to HTTPS for the hosts of the Ingress that have a certificate' }),
  spec({ name: 'ssl-redirect-code', family: 'tls', appliesTo: INGRESS, security: false, parse: parseRedirectCode, values: '301, 302, 303, 307, 308', default: '302', effect: 'Status of the HTTPS redirect' }),
  spec({ name: 'ssl-redirect-port', family: 'tls', appliesTo: INGRESS, security: false, parse: parsePort, values: '1-65535', default: 'values.httpsPort', effect: 'Port of the `https://` location (443 is left out of it)' }),
  spec({ name: 'request-redirect', family: 'redirect', appliesTo: INGRESS, security: false, parse: parseRedirectTarget, values: '`host[:port]`, or `http://` / `https://` + `host[:port]`', default: 'none', effect: 'Redirect every request to this host (http unless https:// is given), keeping path and query' }),
  spec({ name: 'request-redirect-code', family: 'redirect', appliesTo: INGRESS, security: false, parse: parseRedirectCode, values: '301, 302, 303, 307, 308', default: '302', effect: 'Status of request-redirect' }),
  spec({ name: 'path-rewrite', family: 'rewrite', appliesTo: INGRESS, security: false, multiLine: true, parse: parsePathRewrite, values: 'a path, or `regex replacement` (PCRE, compiled by HAProxy\'s PCRE2 before use; `\\1`..`\\9`); one rule per line, at most 16', default: 'none', effect: 'Rewrite the path sent to the backend (`http-request replace-path`)' }),
  spec({ name: 'set-host', family: 'rewrite', appliesTo: INGRESS, security: false, parse: parseHostPort, values: '`host[:port]`', default: 'none', effect: 'The Host header sent to the backend' }),
  spec({ name: 'request-set-header', family: 'rewrite', appliesTo: INGRESS, security: false, multiLine: true, parse: parseHeaderSettings, values: '`Name value` per line (value literal, optionally in double quotes; `Name ""` is an empty value; `x-haptic-*` names are reserved), at most 32', default: 'none', effect: 'Set request headers sent to the backend' }),
  spec({ name: 'response-set-header', family: 'rewrite', appliesTo: INGRESS, security: false, multiLine: true, parse: parseHeaderSettings, values: '`Name value` per line (value literal, optionally in double quotes; `Name ""` is an empty value; `x-haptic-*` names are reserved), at most 32', default: 'none', effect: 'Set response headers sent to the client' }),
  spec({ name: 'load-balance', family: 'backend', appliesTo: BOTH, security: false, parse: parseLoadBalance, values: 'roundrobin, static-rr, leastconn, first, source, `uri [path-only] [whole] [len N] [depth N]`, `url_param <name> [check_post N]`, `hdr(<name>) [use_domain_only]`, `random[(N)]`, `rdp-cookie[(<name>)]`', default: 'roundrobin', effect: 'The balance algorithm' }),
  spec({ name: 'cookie-persistence', family: 'backend', appliesTo: INGRESS, security: false, parse: parseCookieName, values: 'cookie name (letters, digits, `-`, `_`)', default: 'none', effect: 'Sticky sessions: `cookie <name> insert indirect nocache`, each server named in it' }),
  spec({ name: 'timeout-server', family: 'backend', appliesTo: INGRESS, security: false, parse: parseTimeout, values: `${TIME}; 1ms to 24h`, default: 'values.timeoutServer', effect: 'Server inactivity timeout (504 when a response takes longer)' }),
  spec({ name: 'timeout-connect', family: 'backend', appliesTo: INGRESS, security: false, parse: parseTimeout, values: `${TIME}; 1ms to 24h`, default: 'values.timeoutConnect', effect: 'Connect timeout to a server' }),
  spec({ name: 'timeout-tunnel', family: 'backend', appliesTo: INGRESS, security: false, parse: parseTimeout, values: `${TIME}; 1ms to 24h`, default: 'HAProxy: timeout-server', effect: 'Inactivity timeout of tunnels (WebSocket, CONNECT)' }),
  spec({ name: 'timeout-queue', family: 'backend', appliesTo: INGRESS, security: false, parse: parseTimeout, values: `${TIME}; 1ms to 24h`, default: 'HAProxy: timeout-connect', effect: 'Time a request may wait for a free server' }),
  spec({ name: 'pod-maxconn', family: 'backend', appliesTo: BOTH, security: false, parse: parsePodMaxconn, values: '1-1000000', default: 'none', effect: 'Concurrent connections per server (per HAProxy instance: not divided by the number of replicas)' }),
  spec({ name: 'server-ssl', family: 'backend', appliesTo: BOTH, security: false, parse: parseBool, values: BOOL, default: 'false', effect: 'TLS to the pods (`ssl verify none alpn h2,http/1.1`): encrypted, the pod certificate is not verified' }),
  spec({ name: 'server-proto', family: 'backend', appliesTo: BOTH, security: false, parse: parseServerProto, values: 'h2', default: 'none (HTTP/1.1)', effect: 'Clear-text HTTP/2 to the pods (`proto h2`); ignored with server-ssl' }),
  spec({ name: 'rate-limit-requests', family: 'rate-limit', appliesTo: INGRESS, security: false, parse: parseRateLimitRequests, values: '1-1000000', default: 'none', effect: 'Requests one source address may send per period' }),
  spec({ name: 'rate-limit-period', family: 'rate-limit', appliesTo: INGRESS, security: false, parse: parseRateLimitPeriod, values: `${TIME}; 100ms to 24h`, default: '1s', effect: 'The period of rate-limit-requests' }),
  spec({ name: 'rate-limit-status-code', family: 'rate-limit', appliesTo: INGRESS, security: false, parse: parseRateLimitStatus, values: '400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500-504', default: '403', effect: 'Status past the rate limit' }),
  spec({ name: 'cors-enable', family: 'cors', appliesTo: INGRESS, security: false, parse: parseBool, values: BOOL, default: 'false', effect: 'CORS: Access-Control-* headers for allowed origins; preflights answered 204' }),
  spec({ name: 'cors-allow-origin', family: 'cors', appliesTo: INGRESS, security: false, parse: parseCorsOrigin, values: '`*`, an origin (`https://host[:port]`), or a PCRE (compiled by HAProxy\'s PCRE2 before use)', default: '*', effect: 'Origins allowed (the request Origin is echoed unless `*`)' }),
  spec({ name: 'cors-allow-methods', family: 'cors', appliesTo: INGRESS, security: false, parse: parseCorsMethods, values: '`*` or methods, comma-separated', default: '*', effect: 'Access-Control-Allow-Methods' }),
  spec({ name: 'cors-allow-headers', family: 'cors', appliesTo: INGRESS, security: false, parse: parseCorsHeaders, values: '`*` or header names, comma-separated', default: '*', effect: 'Access-Control-Allow-Headers' }),
  spec({ name: 'cors-allow-credentials', family: 'cors', appliesTo: INGRESS, security: false, parse: parseBool, values: BOOL, default: 'false', effect: 'Access-Control-Allow-Credentials: true' }),
  spec({ name: 'cors-max-age', family: 'cors', appliesTo: INGRESS, security: false, parse: parseCorsMaxAge, values: `${TIME}; up to 24h`, default: '5s', effect: 'Access-Control-Max-Age (whole seconds)' }),
  spec({ name: 'check', family: 'health', appliesTo: BOTH, security: false, parse: parseBool, values: BOOL, default: 'true', effect: 'Health-check the servers (TCP connect unless check-http)' }),
  spec({ name: 'check-http', family: 'health', appliesTo: BOTH, security: false, parse: parseCheckHttp, values: '`[METHOD] path [HTTP/1.0|HTTP/1.1]`', default: 'none (METHOD: OPTIONS)', effect: 'HTTP health check (`option httpchk`)' }),
  spec({ name: 'check-interval', family: 'health', appliesTo: BOTH, security: false, parse: parseCheckInterval, values: `${TIME}; 100ms to 24h`, default: '2s (HAProxy)', effect: 'Time between checks' }),
];

/** Names (without prefix) refused with a warning, and why; the object is served without them. */
export const REFUSED_ANNOTATIONS: readonly { readonly name: string; readonly reason: string }[] = [
  { name: '*-config-snippet', reason: 'config snippets insert raw HAProxy configuration, the way IngressNightmare-style injections happen' },
  { name: 'route-acl', reason: 'it inserts a raw HAProxy ACL into the shared frontends' },
  { name: 'request-capture', reason: 'it inserts raw HAProxy sample expressions' },
];

const BY_NAME: ReadonlyMap<string, AnnotationSpec> = new Map(ANNOTATIONS.flatMap((s) => [s.name, ...(s.aliases ?? [])].map((name) => [name, s] as const)));

export type AnnotationLookup =
  | { readonly kind: 'known'; readonly prefix: string; readonly name: string; readonly spec: AnnotationSpec }
  | { readonly kind: 'refused'; readonly prefix: string; readonly name: string; readonly reason: string }
  | { readonly kind: 'unknown'; readonly prefix: string; readonly name: string };

/** What an annotation key is to us; undefined when it has none of our prefixes. */
export function lookupAnnotation(key: string): AnnotationLookup | undefined {
  const prefix = ANNOTATION_PREFIXES.find((p) => key.startsWith(p));
  if (prefix === undefined) return undefined;
  const name = key.slice(prefix.length);
  const found = BY_NAME.get(name);
  if (found !== undefined) return { kind: 'known', prefix, name, spec: found };
  if (name.endsWith('config-snippet')) return { kind: 'refused', prefix, name, reason: (REFUSED_ANNOTATIONS[0] as { reason: string }).reason };
  const refused = REFUSED_ANNOTATIONS.find((r) => r.name === name);
  if (refused !== undefined) return { kind: 'refused', prefix, name, reason: refused.reason };
  return { kind: 'unknown', prefix, name };
}

/** The spec of a canonical name. */
export function annotationSpec(name: string): AnnotationSpec | undefined {
  return BY_NAME.get(name);
}

// The routing model behind the default template set, as templates see it: backends with their
// server slots and typed options, host and path route tables, TLS certificates, the default
// backend; plus the options it is built with. Plain data and no imports, so the builder and the
// route index can both depend on it without depending on each other (the Gateway API part is
// gateway-model.ts, plain data too).
import type { GatewayFilters, GatewayModel } from './gateway-model.js';

export interface Server {
  readonly name: string;
  /** `ip:port`, `[ipv6]:port`, `dns-name:port` (a DNS backend), or the parking address of an empty slot. */
  readonly address: string;
  readonly enabled: boolean;
}

/** HTTP to HTTPS redirect of an Ingress's routes, for hosts that have a certificate. */
export interface SslRedirect {
  /** @default true (`haproxy.org/ssl-redirect`) */
  readonly enabled: boolean;
  /** 301, 302, 303, 307 or 308. @default 302 (`haproxy.org/ssl-redirect-code`) */
  readonly code: number;
  /** The port of the `https://` location; 443 is left out of it. @default values.httpsPort (`haproxy.org/ssl-redirect-port`) */
  readonly port: number;
}

/** Source address rules of an Ingress: `acl` lines of normalized IPs and CIDR blocks (at most 32 a line). */
export interface AccessRules {
  /** Only these sources are served; the others get 403 (`haproxy.org/allow-list`, alias `whitelist`). */
  readonly allow?: readonly (readonly string[])[] | undefined;
  /** These sources get 403 (`haproxy.org/deny-list`, alias `blacklist`). */
  readonly deny?: readonly (readonly string[])[] | undefined;
}

/** One user of a basic-auth Secret: a name and a crypt(3) hash in a format HAProxy accepts. */
export interface AuthUser {
  readonly name: string;
  readonly hash: string;
}

/**
 * Basic authentication (`haproxy.org/auth-type: basic-auth`): a `userlist` per backend and
 * `http-request auth` unless the credentials match. No users (a missing Secret) means nobody gets in.
 */
export interface BasicAuth {
  /** Printable ASCII without `"`, `\` or `$`, written between double quotes. @default 'Protected Content' */
  readonly realm: string;
  readonly users: readonly AuthUser[];
}

/** Every request of the Ingress redirected to another host (`haproxy.org/request-redirect`), path and query kept. */
export interface RequestRedirect {
  readonly scheme: 'http' | 'https';
  /** `host` or `host:port`, lowercased. */
  readonly authority: string;
  /** 301, 302, 303, 307 or 308. @default 302 (`haproxy.org/request-redirect-code`) */
  readonly code: number;
}

/** One `http-request replace-path` rule (`haproxy.org/path-rewrite`). */
export interface PathRewrite {
  /** A PCRE matched against the path; `(.*)` for the one-word form. */
  readonly match: string;
  /** The new path as a log-format string: `\1`..`\9` back-references, every '%' doubled. */
  readonly replace: string;
}

/** One header set on requests or responses. */
export interface HeaderSetting {
  readonly name: string;
  /** Literal text as a log-format string (every '%' doubled), written between double quotes; an empty value is `%[str()]`, an empty sample. */
  readonly value: string;
}

/** Requests per source address and period (`haproxy.org/rate-limit-*`), counted in a stick-table of the backend. */
export interface RateLimit {
  readonly requests: number;
  /** @default 1000 */
  readonly periodMs: number;
  /** The status past the limit. @default 403 */
  readonly status: number;
}

/** Which request origins CORS answers: any (`*`), one origin exactly, or a PCRE. */
export type CorsOrigin =
  | { readonly match: 'any' }
  | { readonly match: 'exact'; readonly origin: string }
  | { readonly match: 'regex'; readonly pattern: string };

/** CORS (`haproxy.org/cors-enable` and the `cors-allow-*` annotations). */
export interface Cors {
  readonly origin: CorsOrigin;
  /** `*` or `GET, POST`. @default '*' */
  readonly methods: string;
  /** `*` or `X-One, X-Two`. @default '*' */
  readonly headers: string;
  /** @default false */
  readonly credentials: boolean;
  /** Seconds. @default 5 */
  readonly maxAge: number;
}

/**
 * Options of one Ingress, applied to every route it serves. A backend belongs to exactly one
 * Ingress, so templates render them in the backend section (`backend.ingressOptions`): that is
 * where a route's per-Ingress behaviour (redirects, rewrites, access rules...) goes.
 * Fields are typed values parsed from annotations (src/worker/routing/annotations/); an absent
 * optional field means the feature is off. Add fields here; `ingressOptionsOf` (ingress-options.ts) fills them.
 */
export interface IngressOptions {
  readonly sslRedirect: SslRedirect;
  /** Refuse every request with 403: set only when a security setting could not be applied, so the Ingress is never served open. */
  readonly denyAll?: true | undefined;
  readonly access?: AccessRules | undefined;
  readonly auth?: BasicAuth | undefined;
  readonly requestRedirect?: RequestRedirect | undefined;
  readonly pathRewrites?: readonly PathRewrite[] | undefined;
  /** The Host header sent to the backend (`haproxy.org/set-host`): `host` or `host:port`. */
  readonly setHost?: string | undefined;
  /** `haproxy.org/request-set-header`. */
  readonly requestHeaders?: readonly HeaderSetting[] | undefined;
  /** `haproxy.org/response-set-header`. */
  readonly responseHeaders?: readonly HeaderSetting[] | undefined;
  readonly rateLimit?: RateLimit | undefined;
  readonly cors?: Cors | undefined;
}

/** An HTTP health check request (`option httpchk <method> <path> [<version>]`). */
export interface HttpCheck {
  readonly method: string;
  readonly path: string;
  /** `HTTP/1.0` or `HTTP/1.1`; HAProxy's default when undefined. */
  readonly version?: string | undefined;
}

/** `balance <algorithm>[(<argument>)] <options...>`, HAProxy's words, validated. */
export interface LoadBalance {
  readonly algorithm: string;
  readonly argument?: string | undefined;
  readonly options: readonly string[];
}

/** Backend timeouts in milliseconds (`haproxy.org/timeout-*`); the defaults section's when undefined. */
export interface Timeouts {
  readonly server?: number | undefined;
  readonly connect?: number | undefined;
  readonly tunnel?: number | undefined;
  readonly queue?: number | undefined;
}

/**
 * Options of one backend (a Service port used by one Ingress): from the Service, overridden by
 * the Ingress. Add fields here; `backendOptionsOf` (ingress-options.ts) fills them.
 */
export interface BackendOptions {
  /** Health-check the populated server slots (`haproxy.org/check`). @default true */
  readonly check: boolean;
  /** An HTTP check instead of a TCP connect (`haproxy.org/check-http`). @default undefined */
  readonly checkHttp?: HttpCheck | undefined;
  /** Milliseconds between checks (`haproxy.org/check-interval`); HAProxy's 2000 when undefined. */
  readonly checkInterval?: number | undefined;
  /** `haproxy.org/load-balance`. @default roundrobin */
  readonly balance: LoadBalance;
  /** Sticky sessions: the name of the cookie inserted, naming the server (`haproxy.org/cookie-persistence`). */
  readonly cookie?: string | undefined;
  readonly timeouts?: Timeouts | undefined;
  /** Concurrent connections per server (`haproxy.org/pod-maxconn`). */
  readonly maxconn?: number | undefined;
  /** TLS to the servers, certificates not verified (`haproxy.org/server-ssl`). */
  readonly serverSsl?: true | undefined;
  /** `haproxy.org/server-proto` (ignored with serverSsl, where ALPN offers h2 and http/1.1). */
  readonly serverProto?: 'h2' | undefined;
}

export interface Backend {
  readonly name: string;
  readonly namespace: string;
  readonly ingress: string;
  readonly service: string;
  readonly port: string;
  /** Servers are DNS names (an ExternalName Service), resolved through the `dns` resolvers section. */
  readonly dns: boolean;
  readonly options: BackendOptions;
  /** The options of the Ingress this backend belongs to (one object shared by its backends). */
  readonly ingressOptions: IngressOptions;
  readonly servers: readonly Server[];
  /** The Service's namespace when it is not `namespace` (an HTTPRoute's backendRef to another namespace). */
  readonly serviceNamespace?: string | undefined;
  /** `HTTPRoute` for an HTTPRoute's backend (`gw_…`, whose `ingress` is then the route's name); undefined for an Ingress's. */
  readonly kind?: 'HTTPRoute' | undefined;
  /** Set only for an HTTPRoute backend (`gw_…`): the filters of its rule. */
  readonly gateway?: GatewayFilters | undefined;
  /** Entries of its rate-limit stick-table, when below the default (rate-limit-tables.ts). */
  readonly rateLimitTableSize?: number | undefined;
  /** Milliseconds between checks when options.checkInterval is below the shared floor (check-budget.ts). */
  readonly checkInterval?: number | undefined;
}

/** The template's backend answering 404 ("no route"). */
export const NOT_FOUND_BACKEND = 'default_404';
/** The template's backend answering 503: the hosts held by a rejected Ingress. */
export const HELD_BACKEND = 'default_503';

export interface RouteEntry {
  readonly key: string;
  readonly backend: string;
}

/** The five route tables of the model, kept up to date by the route index. */
export interface RouteTables {
  /** `host/path` keys. */
  readonly hostExact: readonly RouteEntry[];
  /** `host/prefix/` keys, longest first (map_beg takes the first match). */
  readonly hostPrefix: readonly RouteEntry[];
  /** Regular expressions for wildcard hosts: Exact paths first, then longest path first (map_reg takes the first match). */
  readonly hostRegex: readonly RouteEntry[];
  /** Rules without a host: path keys. */
  readonly pathExact: readonly RouteEntry[];
  readonly pathPrefix: readonly RouteEntry[];
}

export interface Certificate {
  /** File name under the certificates directory. */
  readonly name: string;
  readonly pem: string;
  readonly hosts: readonly string[];
  /**
   * `hosts` cut into crt-list lines of at most CRT_LIST_HOSTS_PER_LINE names (lines of one
   * certificate are one certificate to HAProxy), so no line outgrows HAProxy's line buffer.
   */
  readonly hostLines: readonly (readonly string[])[];
}

export interface RoutingModel extends RouteTables {
  readonly backends: readonly Backend[];
  /** Tenant certificates, each with the TLS hosts it owns, sorted by name. */
  readonly certificates: readonly Certificate[];
  /**
   * The certificate for an unknown SNI: the first entry of the crt-list. Undefined when the set
   * has neither `defaultCertificate` nor `selfSignedCertificate`; the HTTPS bind is then `strict-sni`.
   */
  readonly defaultCertificate: Certificate | undefined;
  /** Every host with a tenant certificate (exact and `*.` wildcard names), sorted: HTTP to these is redirected. */
  readonly tlsHosts: readonly string[];
  /** The backend of the oldest Ingress's `spec.defaultBackend`: used when no rule of any Ingress matches. */
  readonly defaultBackend: string | undefined;
  /**
   * Where the unmatched paths of an owned host go (host-fallback.ts), as `host` or `*.domain`
   * keys: looked up after the host tables and before the rules without a host, so no other
   * namespace's host-less rule or default backend serves an owned host.
   */
  readonly hostFallback: readonly RouteEntry[];
  /** Likewise, looked up after the rules without a host: owned hosts of the namespace that owns those rules. */
  readonly hostFallbackLate: readonly RouteEntry[];
  /** Some backend resolves DNS names: the config needs its `dns` resolvers section. */
  readonly resolvers: boolean;
  /** `values.loopGuardToken`, checked: the frontends refuse a request carrying it and add it to the ones they forward; '' for no guard. */
  readonly loopGuardToken: string;
  /** The slot assignment, written as an auxiliary file and read back as the next baseline. */
  readonly serverSlotsFile: string;
  /** The Gateway API frontends and acceptance results (gateway-model.ts); empty without Gateways. */
  readonly gateway: GatewayModel;
}

/** Who owns a contested host and path: `oldest` (creationTimestamp, then namespace/name) or `name` (namespace/name alone). */
export type RouteOwnership = 'oldest' | 'name';
/** Which TLS hosts count: `routed-oldest` (only hosts the Ingress routes; oldest wins) or `oldest` (any listed host; oldest wins). */
export type TlsHostOwnership = 'routed-oldest' | 'oldest';

export interface ModelOptions {
  /** This class is always ours. @default 'haproxy' */
  readonly ingressClass: string;
  /** IngressClasses whose `spec.controller` is this are ours. @default 'haproxy.org/ingress-controller' */
  readonly controllerName: string;
  /** Also accept Ingresses without a class (also when one of our classes is the default class). @default true */
  readonly watchIngressWithoutClass: boolean;
  /** Slots per backend, and the block size by which a backend grows. @default 10 */
  readonly serverSlots: number;
  /** @default 'oldest' */
  readonly routeOwnership: RouteOwnership;
  /** @default 'routed-oldest' */
  readonly tlsHostOwnership: TlsHostOwnership;
  /** `namespace/name` of the Secret whose certificate serves unknown SNI names; '' for none. */
  readonly defaultCertificate: string;
  /** PEM (certificate and key) used when `defaultCertificate` is unset or unusable; '' for none. */
  readonly selfSignedCertificate: string;
  /** The HTTPS port, where redirects point by default. @default 443 */
  readonly httpsPort: number;
  /** Loopback endpoints (and ExternalName `localhost`) are accepted; for test rigs. @default false */
  readonly allowLoopbackEndpoints: boolean;
  /**
   * ExternalName Services are routed. Off, their backends have no servers (with a warning): the
   * name is resolved by HAProxy at run time, past the address policy. @default false
   */
  readonly externalNameServices: boolean;
  /** Letters, digits, `-` and `_` (at most LOOP_GUARD_TOKEN_MAX); '' turns the loop guard off. @default '' */
  readonly loopGuardToken: string;
  /** `values.maxOutputBytes`, of which one Ingress may take a share (INGRESS_OUTPUT_SHARE). Unset: the default 32 MiB. */
  readonly maxOutputBytes?: number | undefined;
  /**
   * Server slots of all backends together: half of `values.fdHardLimit`, since HAProxy holds a
   * descriptor for every health-checked slot (empty ones included) and will not start when they
   * leave too few for connections. Unset (no fdHardLimit): no limit.
   */
  readonly maxServerSlotsTotal?: number | undefined;
  readonly stores: {
    readonly ingresses: string;
    readonly services: string;
    readonly endpointSlices: string;
    readonly secrets: string;
    readonly ingressClasses: string;
  };
}

export const LOOP_GUARD_TOKEN_MAX = 64;
const LOOP_GUARD_TOKEN = new RegExp(`^[A-Za-z0-9_-]{1,${LOOP_GUARD_TOKEN_MAX}}$`);

/** The model options of a template set's values; a policy value that is not one of its choices is a TypeError. */
export function modelOptions(values: Readonly<Record<string, unknown>>): ModelOptions {
  const slots = Number(values.serverSlots ?? 10);
  const httpsPort = Number(values.httpsPort ?? 443);
  const maxOutput = Number(values.maxOutputBytes);
  const fdHardLimit = values.fdHardLimit === '' || values.fdHardLimit === undefined ? Number.NaN : Number(values.fdHardLimit);
  return {
    ingressClass: String(values.ingressClass ?? 'haproxy'),
    controllerName: String(values.controllerName ?? 'haproxy.org/ingress-controller'),
    watchIngressWithoutClass: values.watchIngressWithoutClass !== false && values.watchIngressWithoutClass !== 'false',
    serverSlots: Number.isInteger(slots) && slots > 0 ? slots : 10,
    routeOwnership: choice(values, 'routeOwnership', ['oldest', 'name'] as const),
    tlsHostOwnership: choice(values, 'tlsHostOwnership', ['routed-oldest', 'oldest'] as const),
    defaultCertificate: stringValue(values.defaultCertificate),
    selfSignedCertificate: stringValue(values.selfSignedCertificate),
    httpsPort: Number.isInteger(httpsPort) && httpsPort > 0 && httpsPort < 65536 ? httpsPort : 443,
    allowLoopbackEndpoints: flag(values.allowLoopbackEndpoints),
    externalNameServices: flag(values.externalNameServices),
    loopGuardToken: loopGuardToken(values.loopGuardToken),
    maxOutputBytes: Number.isInteger(maxOutput) && maxOutput > 0 ? maxOutput : undefined,
    maxServerSlotsTotal: Number.isInteger(fdHardLimit) && fdHardLimit > 0 ? Math.floor(fdHardLimit / 2) : undefined,
    stores: { ingresses: 'ingresses', services: 'services', endpointSlices: 'endpointslices', secrets: 'secrets', ingressClasses: 'ingressclasses' },
  };
}

/** A boolean value; `--set` types `true`, a values file may hold the string. */
function flag(value: unknown): boolean {
  return value === true || value === 'true';
}

/** The token is written bare into rule lines, so it is held to one safe word. */
function loopGuardToken(value: unknown): string {
  if (value === undefined || value === null || value === '') return '';
  // `--set loopGuardToken=123` arrives as a number.
  const text = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : value;
  if (typeof text === 'string' && LOOP_GUARD_TOKEN.test(text)) return text;
  throw new TypeError(`values.loopGuardToken must be at most ${LOOP_GUARD_TOKEN_MAX} letters, digits, '-' or '_', got ${JSON.stringify(value)}`);
}

function stringValue(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The value of `key`, one of `choices` (the first when unset). */
function choice<T extends string>(values: Readonly<Record<string, unknown>>, key: string, choices: readonly T[]): T {
  const value = values[key];
  if (value === undefined || value === null || value === '') return choices[0] as T;
  if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T;
  throw new TypeError(`values.${key} must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}`);
}

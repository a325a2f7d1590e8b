// Typed options of Ingresses and backends: where annotations enter the routing model. Each value
// is parsed (annotations/) into a typed field; templates never read an annotation string. The
// object guard has already rejected objects with bad values (annotations/guard-hook.ts); what
// is left to report here are warnings: unknown and refused names, settings without effect, an
// auth Secret that is missing. Unchanged options keep one shared frozen object, so backends
// compare cheaply and memo blocks keep their text; everything passed to `warn` is replayed.
import './annotations/guard-hook.js';
import type { KubeObject } from '../protocol.js';
import { acceptedView, describe } from '../store/object-guard.js';
import { parseSourceList, sourceLines } from './annotations/access.js';
import { readAnnotations, type AnnotationRead } from './annotations/annotation-reader.js';
import { DEFAULT_AUTH_REALM, parseRealm, parseSecretRef, usersOfSecret } from './annotations/auth.js';
import { DEFAULT_LOAD_BALANCE, parseCookieName, parseLoadBalance, parsePodMaxconn, parseServerProto, parseTimeout } from './annotations/backend-tuning.js';
import { DEFAULT_CORS_MAX_AGE_MS, parseCorsHeaders, parseCorsMaxAge, parseCorsMethods, parseCorsOrigin } from './annotations/cors.js';
import { parseCheckHttp, parseCheckInterval } from './annotations/health.js';
import { DEFAULT_RATE_LIMIT_PERIOD_MS, DEFAULT_RATE_LIMIT_STATUS, parseRateLimitPeriod, parseRateLimitRequests, parseRateLimitStatus } from './annotations/rate-limit.js';
import { DEFAULT_REDIRECT_CODE, parsePort, parseRedirectTarget } from './annotations/redirect.js';
import { annotationSpec, type AnnotationFamily } from './annotations/registry.js';
import { parseHeaderSettings, parseHostPort, parsePathRewrite } from './annotations/rewrite.js';
import { parseBool, parseRedirectCode, type Parsed } from './annotations/values.js';
import type { BackendOptions, BasicAuth, Cors, IngressOptions, ModelOptions, Timeouts } from './model.js';
import type { StoreReader } from './model-source.js';

const DEFAULT_BACKEND_OPTIONS: BackendOptions = Object.freeze({ check: true, balance: DEFAULT_LOAD_BALANCE });
const INGRESS_FAMILIES: ReadonlySet<AnnotationFamily> = new Set(['access', 'auth', 'tls', 'redirect', 'rewrite', 'rate-limit', 'cors']);
const BACKEND_FAMILIES: ReadonlySet<AnnotationFamily> = new Set(['backend', 'health']);

/** The default Ingress options of each builder's model options, shared by all its builds. */
const defaultIngressOptions = new WeakMap<ModelOptions, IngressOptions>();

/**
 * The options of one Ingress; `warn` reports what was ignored or refused. `reads` are the store
 * reads of the Ingress's computation (recorded, so a change of its auth Secret recomputes it);
 * without them an auth Secret cannot be read, and nobody is let in.
 */
export function ingressOptionsOf(ingress: KubeObject, options: ModelOptions, warn: (message: string) => void, reads?: StoreReader): IngressOptions {
  let defaults = defaultIngressOptions.get(options);
  if (defaults === undefined) {
    defaults = Object.freeze({ sslRedirect: Object.freeze({ enabled: true, code: 302, port: options.httpsPort }) });
    defaultIngressOptions.set(options, defaults);
  }
  const read = readAnnotations(ingress, 'Ingress');
  const owner = describe(ingress);
  for (const message of read.warnings) warn(`${owner}: ${message}`);
  if (!hasFamily(read, INGRESS_FAMILIES)) return defaults;
  const get = getter(read, owner, warn);
  const fields: { -readonly [K in keyof IngressOptions]: IngressOptions[K] } = { sslRedirect: defaults.sslRedirect };
  let denyAll = false;

  if (read.values.has('ssl-redirect') || read.values.has('ssl-redirect-code') || read.values.has('ssl-redirect-port')) {
    fields.sslRedirect = Object.freeze({
      enabled: get('ssl-redirect', parseBool) ?? true,
      code: get('ssl-redirect-code', parseRedirectCode) ?? 302,
      port: get('ssl-redirect-port', parsePort) ?? options.httpsPort,
    });
  }
  for (const [name, field] of [['allow-list', 'allow'], ['deny-list', 'deny']] as const) {
    if (!read.values.has(name)) continue;
    const list = get(name, parseSourceList);
    if (list === undefined) denyAll = true;
    else fields.access = Object.freeze({ ...fields.access, [field]: sourceLines(list) });
  }
  if (read.values.has('auth-type')) {
    const auth = authOf(read, ingress, options, owner, warn, reads);
    if (auth === undefined) denyAll = true;
    else fields.auth = auth;
  }
  const target = get('request-redirect', parseRedirectTarget);
  if (target === undefined) {
    if (read.values.has('request-redirect-code')) warn(`${owner}: annotation ${read.keys.get('request-redirect-code')} has no effect without request-redirect`);
    fields.pathRewrites = get('path-rewrite', parsePathRewrite);
    fields.setHost = get('set-host', parseHostPort);
    fields.requestHeaders = get('request-set-header', parseHeaderSettings);
  } else {
    fields.requestRedirect = Object.freeze({ ...target, code: get('request-redirect-code', parseRedirectCode) ?? DEFAULT_REDIRECT_CODE });
    // Nothing reaches the backend: rewriting the request would only change the redirect's path.
    for (const name of ['path-rewrite', 'set-host', 'request-set-header']) {
      if (read.values.has(name)) warn(`${owner}: annotation ${read.keys.get(name)} has no effect with request-redirect, which sends every request away; ignored`);
    }
  }
  fields.responseHeaders = get('response-set-header', parseHeaderSettings);
  const requests = get('rate-limit-requests', parseRateLimitRequests);
  if (requests !== undefined) {
    fields.rateLimit = Object.freeze({
      requests,
      periodMs: get('rate-limit-period', parseRateLimitPeriod) ?? DEFAULT_RATE_LIMIT_PERIOD_MS,
      status: get('rate-limit-status-code', parseRateLimitStatus) ?? DEFAULT_RATE_LIMIT_STATUS,
    });
  } else {
    withoutEffect(read, ['rate-limit-period', 'rate-limit-status-code'], 'rate-limit-requests', owner, warn);
  }
  if (get('cors-enable', parseBool) === true) fields.cors = corsOf(get);
  else withoutEffect(read, ['cors-allow-origin', 'cors-allow-methods', 'cors-allow-headers', 'cors-allow-credentials', 'cors-max-age'], 'cors-enable: "true"', owner, warn);
  if (denyAll) fields.denyAll = true;
  for (const key of Object.keys(fields) as (keyof IngressOptions)[]) if (fields[key] === undefined) delete fields[key];
  return Object.freeze(fields);
}

/**
 * The options of an Ingress's backend for `service` (undefined when it is missing). Service
 * settings go first and the Ingress's override them; `warn` reports what was ignored.
 */
export function backendOptionsOf(ingress: KubeObject, service: KubeObject | undefined, warn: (message: string) => void): BackendOptions {
  const fromIngress = readAnnotations(ingress, 'Ingress');
  const fromService = service === undefined ? undefined : readAnnotations(service, 'Service');
  if (service !== undefined && fromService !== undefined) for (const message of fromService.warnings) warn(`${describe(service)}: ${message}`);
  const fromServiceUsed = fromService !== undefined && hasFamily(fromService, BACKEND_FAMILIES);
  if (!hasFamily(fromIngress, BACKEND_FAMILIES) && !fromServiceUsed) return DEFAULT_BACKEND_OPTIONS;
  const ingressGet = getter(fromIngress, describe(ingress), warn);
  const serviceGet = fromService === undefined || service === undefined ? undefined : getter(fromService, describe(service), warn);
  const get = <T>(name: string, parse: (raw: string) => Parsed<T>): T | undefined => {
    const own = fromIngress.values.has(name) ? ingressGet(name, parse) : undefined;
    return own !== undefined || serviceGet === undefined || !fromService?.values.has(name) ? own : serviceGet(name, parse);
  };
  const timeouts: { -readonly [K in keyof Timeouts]: Timeouts[K] } = {};
  for (const name of ['server', 'connect', 'tunnel', 'queue'] as const) {
    const ms = get(`timeout-${name}`, parseTimeout);
    if (ms !== undefined) timeouts[name] = ms;
  }
  const fields: { -readonly [K in keyof BackendOptions]: BackendOptions[K] } = {
    check: get('check', parseBool) ?? true,
    checkHttp: get('check-http', parseCheckHttp),
    checkInterval: get('check-interval', parseCheckInterval),
    balance: get('load-balance', parseLoadBalance) ?? DEFAULT_LOAD_BALANCE,
    cookie: get('cookie-persistence', parseCookieName),
    timeouts: Object.keys(timeouts).length > 0 ? Object.freeze(timeouts) : undefined,
    maxconn: get('pod-maxconn', parsePodMaxconn),
    serverSsl: get('server-ssl', parseBool) === true ? true : undefined,
    serverProto: get('server-proto', parseServerProto),
  };
  for (const key of Object.keys(fields) as (keyof BackendOptions)[]) if (fields[key] === undefined) delete fields[key];
  return Object.freeze(fields);
}

/** Deep equality of option objects (plain data: objects, arrays, primitives). */
export function sameOptions(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  for (const key of keysA) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) return false;
    if (!sameOptions((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

type Getter = <T>(name: string, parse: (raw: string) => Parsed<T>) => T | undefined;

/**
 * Reads canonical names of `read` through their parsers. The guard has rejected objects with
 * bad values, so a value that does not parse here is a guard that did not run: it is ignored
 * with a warning (and a security setting then closes the Ingress, see `denyAll`).
 */
function getter(read: AnnotationRead, owner: string, warn: (message: string) => void): Getter {
  return <T>(name: string, parse: (raw: string) => Parsed<T>): T | undefined => {
    const raw = read.values.get(name);
    if (raw === undefined) return undefined;
    const parsed = parse(raw);
    if (parsed.ok) return parsed.value;
    warn(`${owner}: annotation ${read.keys.get(name)} ${parsed.reason}; ignored`);
    return undefined;
  };
}

function hasFamily(read: AnnotationRead, families: ReadonlySet<AnnotationFamily>): boolean {
  for (const name of read.values.keys()) {
    const spec = annotationSpec(name);
    if (spec !== undefined && families.has(spec.family)) return true;
  }
  return false;
}

function withoutEffect(read: AnnotationRead, names: readonly string[], needs: string, owner: string, warn: (message: string) => void): void {
  for (const name of names) if (read.values.has(name)) warn(`${owner}: annotation ${read.keys.get(name)} has no effect without ${needs}`);
}

function corsOf(get: Getter): Cors {
  return Object.freeze({
    origin: get('cors-allow-origin', parseCorsOrigin) ?? Object.freeze({ match: 'any' as const }),
    methods: get('cors-allow-methods', parseCorsMethods) ?? '*',
    headers: get('cors-allow-headers', parseCorsHeaders) ?? '*',
    credentials: get('cors-allow-credentials', parseBool) ?? false,
    maxAge: get('cors-max-age', parseCorsMaxAge) ?? DEFAULT_CORS_MAX_AGE_MS / 1000,
  });
}

/**
 * Basic auth of an Ingress: the users of its Secret (of its own namespace; the guard rejects
 * any other). A missing Secret or one without usable users lets nobody in, with a warning;
 * undefined when the settings themselves are unusable (the Ingress is then closed).
 */
function authOf(read: AnnotationRead, ingress: KubeObject, options: ModelOptions, owner: string, warn: (message: string) => void, reads: StoreReader | undefined): BasicAuth | undefined {
  const ns = ingress.metadata.namespace ?? 'default';
  const ref = parseSecretRef(read.values.get('auth-secret') ?? '');
  const realm = read.values.has('auth-realm') ? parseRealm(read.values.get('auth-realm') as string) : { ok: true as const, value: DEFAULT_AUTH_REALM };
  if (!ref.ok || !realm.ok || (ref.value.namespace !== undefined && ref.value.namespace !== ns)) {
    warn(`${owner}: the auth annotations are unusable; every request is refused`);
    return undefined;
  }
  const where = `auth secret ${ns}/${ref.value.name}`;
  const found = reads?.getSingle(options.stores.secrets, [ns, ref.value.name]);
  // The accepted view: its `data` has `stringData` merged in.
  const secret = found === undefined ? undefined : acceptedView(found);
  if (secret === undefined) {
    warn(`${owner}: ${where} ${reads === undefined ? 'cannot be read' : 'is missing (or was rejected)'}; nobody is let in`);
    return Object.freeze({ realm: realm.value, users: Object.freeze([]) });
  }
  const { users, problems } = usersOfSecret(secret);
  for (const problem of problems) warn(`${owner}: ${where}: ${problem}`);
  if (users.length === 0) warn(`${owner}: ${where} has no usable users; nobody is let in`);
  return Object.freeze({ realm: realm.value, users });
}

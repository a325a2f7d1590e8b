// The backends of one HTTPRoute: one per rule and backendRef (`gw_<ns>_<route>_<rule>_<ref>`),
// each a Service port resolved through its EndpointSlices with server slots, as an Ingress
// backend is, and carrying its rule's filters and request timeout. References of the route to the
// same Service port whose rules have the same backend filters and timeout share one backend, the
// first one's: its section would be the same but for its name. A reference that cannot be
// used (another kind than Service, another namespace without a ReferenceGrant, a missing
// Service or port) sends its share of the rule's weight to the 500 backend, and sets the
// route's ResolvedRefs condition.
import type { KubeObject } from '../protocol.js';
import { durationMs, REDIRECT_CODES, type RedirectCode } from '../store/gateway-fields.js';
import { describe } from '../store/object-guard.js';
import type { BackendRef } from './endpoints.js';
import type { GatewayCondition, GatewayFilters, GatewayRedirect, HeaderEdits } from './gateway-model.js';
import { backendOptionsOf } from './ingress-options.js';
import type { Backend, BackendOptions, IngressOptions, ModelOptions } from './model.js';
import type { RecordedReads } from './recorded-reads.js';
import { assignSlots } from './server-slots.js';
import { serviceServers } from './service-backend.js';

/** The 500 answer for the invalid share of a rule (a static backend of the template). */
export const INVALID_BACKEND = 'gateway_500';

/** Route backends do none of the Ingress annotations' work. */
const GATEWAY_INGRESS_OPTIONS: IngressOptions = Object.freeze({ sslRedirect: Object.freeze({ enabled: false, code: 302, port: 443 }) });
/** What backendOptionsOf reads Ingress annotations from: nothing (routes have no annotations we read). */
const NO_ANNOTATIONS = Object.freeze({ metadata: Object.freeze({ name: 'httproute' }) }) as KubeObject;

export interface RuleSpec {
  matches?: MatchSpec[];
  filters?: FilterSpec[];
  backendRefs?: { group?: string; kind?: string; name: string; namespace?: string; port?: number; weight?: number }[];
  timeouts?: { request?: string; backendRequest?: string };
}
export interface MatchSpec {
  path?: { type?: string; value?: string };
  headers?: { name: string; value: string }[];
  queryParams?: { name: string; value: string }[];
  method?: string;
}
interface PathModifier {
  type: string;
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}
export interface FilterSpec {
  type: string;
  requestHeaderModifier?: ModifierSpec;
  responseHeaderModifier?: ModifierSpec;
  requestRedirect?: { scheme?: string; hostname?: string; port?: number; path?: PathModifier; statusCode?: number };
  urlRewrite?: { hostname?: string; path?: PathModifier };
}
interface ModifierSpec {
  set?: { name: string; value: string }[];
  add?: { name: string; value: string }[];
  remove?: string[];
}

/** One rule, ready for its match lines: weighted shares of backends, or a redirect. */
export interface RuleTargets {
  readonly shares: readonly { readonly backend: string; readonly weight: number }[];
  readonly redirect?: RedirectSpec | undefined;
}

/** A RequestRedirect before the listener's port is known. */
export interface RedirectSpec {
  readonly scheme?: string | undefined;
  readonly hostname?: string | undefined;
  readonly port?: number | undefined;
  readonly path?: PathModifier | undefined;
  readonly prefixes: readonly string[];
  readonly code: RedirectCode;
}

export interface RouteBackends {
  readonly backends: Backend[];
  /** Per rule index (undefined for a rule the check dropped). */
  readonly rules: (RuleTargets | undefined)[];
  readonly resolvedRefs: GatewayCondition;
}

/** A path prefix as matched: without its trailing '/', except for '/' itself. */
export function normalizePrefix(value: string | undefined): string {
  const path = value ?? '/';
  return path.length > 1 && path.endsWith('/') ? path.replace(/\/+$/, '') || '/' : path;
}

export function routeBackends(
  route: KubeObject,
  reads: RecordedReads,
  options: ModelOptions,
  grants: (from: string, to: string, service: string) => boolean,
  previousSlots: (backend: string) => readonly string[] | undefined,
): RouteBackends {
  const ns = route.metadata.namespace ?? '';
  const name = route.metadata.name;
  const owner = describe(route);
  const backends: Backend[] = [];
  /** The backend already made for a Service port, filters and timeout, by sharedKey. */
  const shared = new Map<string, string>();
  let resolved: GatewayCondition = { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' };
  const fail = (reason: string, message: string): void => {
    reads.warn(`${owner}: ${message}; its share of the rule answers 500`);
    if (resolved.status === 'True') resolved = { type: 'ResolvedRefs', status: 'False', reason, message };
  };
  const rules = ((route.spec as { rules?: (RuleSpec | null)[] }).rules ?? []).map((rule, r): RuleTargets | undefined => {
    if (rule === null || typeof rule !== 'object') return undefined;
    const filters = rule.filters ?? [];
    const redirect = filters.find((f) => f.type === 'RequestRedirect')?.requestRedirect;
    const prefixes = [...new Set((rule.matches ?? [{}]).filter((m) => (m.path?.type ?? 'PathPrefix') === 'PathPrefix').map((m) => normalizePrefix(m.path?.value)))];
    if (redirect !== undefined) {
      const code = REDIRECT_CODES.find((c) => c === redirect.statusCode) ?? 302;
      return { shares: [], redirect: { scheme: redirect.scheme, hostname: redirect.hostname, port: redirect.port, path: redirect.path, prefixes, code } };
    }
    const gatewayFilters = filtersOf(filters, prefixes);
    const timeoutMs = timeoutOf(rule.timeouts);
    const filterKey = gatewayFilters === undefined ? '' : JSON.stringify(gatewayFilters);
    const shares: { backend: string; weight: number }[] = [];
    for (const [b, ref] of (rule.backendRefs ?? []).entries()) {
      const weight = ref.weight ?? 1;
      const target = ref.namespace ?? ns;
      const where = `rule ${r} backendRef ${b} (${target}/${ref.name})`;
      let backend = INVALID_BACKEND;
      if ((ref.group ?? '') !== '' || (ref.kind ?? 'Service') !== 'Service') fail('InvalidKind', `${where} is a ${ref.group ?? ''}/${ref.kind ?? ''}, not a Service`);
      else if (ref.port === undefined) fail('UnsupportedValue', `${where} has no port`);
      else if (target !== ns && !grants(ns, target, ref.name)) fail('RefNotPermitted', `${where} is in another namespace and no ReferenceGrant there allows it`);
      else if (shared.has(sharedKey(target, ref.name, ref.port, timeoutMs, filterKey))) backend = shared.get(sharedKey(target, ref.name, ref.port, timeoutMs, filterKey)) as string;
      else {
        const backendName = `gw_${ns}_${name}_${r}_${b}`;
        const backendRef: BackendRef = { service: { name: ref.name, port: { number: ref.port } } };
        const logged = reads.log.length;
        const { service, addresses, dns } = serviceServers(reads, options, target, backendRef, owner);
        if (service === undefined) {
          reads.log.length = logged;
          fail('BackendNotFound', `${where}: the Service does not exist`);
        } else {
          const base = backendOptionsOf(NO_ANNOTATIONS, service, (m) => reads.warn(m));
          backends.push({
            name: backendName,
            kind: 'HTTPRoute',
            namespace: ns,
            ingress: name,
            service: ref.name,
            ...(target === ns ? {} : { serviceNamespace: target }),
            port: String(ref.port),
            dns,
            options: withTimeout(base, timeoutMs),
            ingressOptions: GATEWAY_INGRESS_OPTIONS,
            servers: assignSlots(addresses, previousSlots(backendName), options.serverSlots),
            gateway: gatewayFilters,
          });
          backend = backendName;
          shared.set(sharedKey(target, ref.name, ref.port, timeoutMs, filterKey), backendName);
        }
      }
      shares.push({ backend, weight });
    }
    return { shares };
  });
  return { backends, rules, resolvedRefs: resolved };
}

/** What makes two references' backends the same section: the Service port, the timeout and the filters. */
function sharedKey(namespace: string, service: string, port: number, timeoutMs: number | undefined, filters: string): string {
  return `${namespace}\0${service}\0${port}\0${timeoutMs ?? ''}\0${filters}`;
}

function withTimeout(options: BackendOptions, ms: number | undefined): BackendOptions {
  if (ms === undefined) return options;
  return Object.freeze({ ...options, timeouts: Object.freeze({ ...(options.timeouts ?? {}), server: ms }) });
}

function timeoutOf(timeouts: RuleSpec['timeouts']): number | undefined {
  const values = [timeouts?.request, timeouts?.backendRequest].map(durationMs).filter((v): v is number => v !== undefined && v > 0);
  return values.length === 0 ? undefined : Math.min(...values);
}


function edits(modifier: ModifierSpec | undefined): HeaderEdits | undefined {
  if (modifier === undefined) return undefined;
  const lower = (list: { name: string; value: string }[] | undefined) => (list ?? []).map((e) => ({ name: e.name.toLowerCase(), value: e.value }));
  return { set: lower(modifier.set), add: lower(modifier.add), remove: (modifier.remove ?? []).map((n) => ({ name: n.toLowerCase() })) };
}

/** A path as log-format text: '%' doubled. */
function logFormat(text: string): string {
  return text.replace(/%/g, '%%');
}

/** A path as a regular expression: its special characters in brackets (no backslashes in the config). */
export function pathRegex(path: string): string {
  return path.replace(/[.$()*+]/g, (c) => `[${c}]`);
}

function filtersOf(filters: readonly FilterSpec[], prefixes: readonly string[]): GatewayFilters | undefined {
  const result: { -readonly [K in keyof GatewayFilters]: GatewayFilters[K] } = {};
  for (const filter of filters) {
    if (filter.type === 'RequestHeaderModifier') result.requestHeaders = edits(filter.requestHeaderModifier);
    if (filter.type === 'ResponseHeaderModifier') result.responseHeaders = edits(filter.responseHeaderModifier);
    if (filter.type === 'URLRewrite') {
      const rewrite = filter.urlRewrite ?? {};
      if (rewrite.hostname !== undefined) result.rewriteHost = rewrite.hostname;
      if (rewrite.path?.type === 'ReplaceFullPath') result.rewritePath = { match: '.*', replace: logFormat(rewrite.path.replaceFullPath ?? '/') };
      if (rewrite.path?.type === 'ReplacePrefixMatch' && prefixes.length > 0) {
        const target = rewrite.path.replacePrefixMatch ?? '/';
        const alternatives = prefixes.map((p) => (p === '/' ? '' : pathRegex(p))).join('|');
        const stripped = target.replace(/\/+$/, '');
        // `/` as the new prefix: keep the rest as is, or '/' when nothing is left.
        result.rewritePath =
          stripped === '' ? { match: `^(?:${alternatives})/?(.*)$`, replace: '/\\1' } : { match: `^(?:${alternatives})(/.*)?$`, replace: `${logFormat(stripped)}\\1` };
      }
    }
  }
  return Object.keys(result).length === 0 ? undefined : Object.freeze(result);
}

/** The Location of a redirect on a listener (its port and scheme are the defaults): literal checked parts, the request's own otherwise. */
export function redirectOf(spec: RedirectSpec, listenerPort: number, listenerScheme: 'http' | 'https'): Omit<GatewayRedirect, 'name'> {
  const scheme = spec.scheme ?? listenerScheme;
  const port = spec.port ?? (spec.scheme !== undefined ? (scheme === 'https' ? 443 : 80) : listenerPort);
  const wellKnown = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443);
  const host = spec.hostname ?? '%[var(txn.host)]';
  let path = '%[pathq]';
  if (spec.path?.type === 'ReplaceFullPath') path = logFormat(spec.path.replaceFullPath ?? '/');
  else if (spec.path?.type === 'ReplacePrefixMatch') path = prefixRedirectPath(spec.path.replacePrefixMatch ?? '/', spec.prefixes);
  return { location: `${scheme}://${host}${wellKnown ? '' : `:${port}`}${path}`, code: spec.code };
}

/**
 * The path of a ReplacePrefixMatch redirect: the matched prefix replaced in the request's path
 * (`regsub`). Only for one prefix of plain characters (letters, digits, `/_~.-`): anything else
 * cannot be written into a converter's arguments safely, and redirects to the new prefix alone.
 */
function prefixRedirectPath(replacement: string, prefixes: readonly string[]): string {
  const plain = /^[A-Za-z0-9/_~.-]*$/;
  const target = replacement.replace(/\/+$/, '');
  const prefix = prefixes.length === 1 ? (prefixes[0] as string) : undefined;
  if (prefix === undefined || prefix === '/' || !plain.test(prefix) || !plain.test(target)) return target === '' ? '/' : logFormat(target);
  const regex = `^${prefix.replace(/\./g, '[.]')}`;
  return target === '' ? `%[path,regsub(${regex}/?,/)]` : `${target}%[path,regsub(${regex},)]`;
}


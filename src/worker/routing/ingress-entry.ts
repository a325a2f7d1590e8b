// What one Ingress contributes to the routing model (its backends with their server slots and
// options, its route candidates, its default backend, its TLS claims and its warnings), computed
// from its spec through recorded store reads. The builder caches one entry per accepted Ingress
// and reuses it while nothing it read has changed, so an entry carries everything needed to
// replay it: its log and its dependencies. An Ingress whose share of the output would be over
// its budget (INGRESS_OUTPUT_SHARE) contributes nothing but a warning and the claim on its hosts
// (they answer 503): the output cap fails the whole render, and no one Ingress may bring it near that. Each entry carries its estimated
// output bytes for the namespaces' shared budget (output-budget.ts).
import { flat } from '../store/compact-object.js';
import { describe } from '../store/object-guard.js';
import { DEFAULT_MAX_OUTPUT_BYTES, INGRESS_OUTPUT_SHARE } from '../store/value-limits.js';
import type { KubeObject } from '../protocol.js';
import { pemFromSecret } from './certificates.js';
import { creationTime, type Claimant } from './claimant.js';
import type { Warn } from './findings.js';
import type { BackendRef } from './endpoints.js';
import { heldBytes, heldOn } from './held-claims.js';
import { backendOptionsOf, ingressOptionsOf } from './ingress-options.js';
import type { ClaimSource, TlsClaim } from './model-assembly.js';
import type { Backend, IngressOptions, ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';
import { RecordedReads, type LogEntry } from './recorded-reads.js';
import type { RouteCandidate } from './route-index.js';
import { assignSlots } from './server-slots.js';
import { serviceServers } from './service-backend.js';

/** Everything one Ingress contributes to the model, and what it was computed from. */
export interface IngressEntry extends ClaimSource {
  readonly key: string;
  readonly ingress: KubeObject;
  readonly backends: readonly Backend[];
  /** Per backend: the baseline slots it was assigned from (its servers hold the result). */
  readonly slotsFrom: readonly (readonly string[] | undefined)[];
  readonly routes: readonly RouteCandidate[];
  /**
   * About how many bytes it adds to the output, its crt-list and TLS host lines included but not
   * its certificate files, which the Ingresses of a namespace may share (OutputBudget adds them).
   */
  readonly outputBytes: number;
  readonly log: readonly LogEntry[];
  /** Dependency keys this entry is registered under (see the builder's `#dependents`). */
  readonly deps: readonly string[];
  /** The build that last used this entry. */
  seen: number;
}

interface IngressSpec {
  defaultBackend?: BackendRef;
  rules?: { host?: string; http?: { paths?: { path?: string; pathType: string; backend: BackendRef }[] } }[];
  tls?: { hosts?: string[]; secretName?: string }[];
}

/** One Ingress's contribution, with the lookups it made recorded as dependencies. */
export function computeEntry(
  source: ModelSource,
  options: ModelOptions,
  key: string,
  ingress: KubeObject,
  previousSlots: (backend: string) => readonly string[] | undefined,
): IngressEntry {
  const ns = ingress.metadata.namespace ?? 'default';
  const name = ingress.metadata.name;
  // Kept as long as the entry, in its claimant and every route: one flat string, not the pieces describe() joined.
  const owner = flat(describe(ingress));
  flat(key);
  const claimant: Claimant = { owner, namespace: ns, name: ingress.metadata.name, created: creationTime(ingress) };
  // Routes are ranked by name alone under `routeOwnership: name`.
  const routeClaimant: Claimant = options.routeOwnership === 'oldest' ? claimant : { ...claimant, created: 0 };
  const spec = ingress.spec as IngressSpec;
  const reads = new RecordedReads(source);
  const warn = warnerOf(reads);
  const ingressOptions = ingressOptionsOf(ingress, options, warn, reads);
  const work: EntryWork = { reads, options, ns, name, owner, ingress, ingressOptions, warn, previousSlots, backends: [], slotsFrom: [] };
  const { backends, slotsFrom } = work;
  const routes: RouteCandidate[] = [];
  const defaultBackend = spec.defaultBackend === undefined ? undefined : backendFor(work, spec.defaultBackend);
  for (const rule of listOf(spec.rules)) {
    for (const p of listOf(rule.http?.paths)) {
      const backend = backendFor(work, p.backend);
      // Every field written out: a spread leaves the last four outside the object, in a property array of their own.
      routes.push({ owner, namespace: ns, name, created: routeClaimant.created, host: rule.host ?? '', path: p.path ?? '/', exact: p.pathType === 'Exact', backend });
    }
  }
  const budget = Math.floor((options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES) / INGRESS_OUTPUT_SHARE);
  const size = outputEstimate(backends, ingressOptions, routes);
  if (size > budget) {
    const slots = backends.reduce((sum, b) => sum + b.servers.length, 0);
    warn(
      `${owner}: would add about ${size} bytes to the output (${backends.length} backends with ${slots} server slots, ${routes.length} routes), ` +
        `over the limit of ${budget} for one Ingress (values.maxOutputBytes / ${INGRESS_OUTPUT_SHARE}); it is not served (its hosts answer 503)`,
    );
    // It keeps its claim on its hosts, as a rejected Ingress does (held-claims.ts).
    const held = heldOn(routes.map((route) => route.host), routeClaimant);
    return { key, ingress, claimant, backends: NONE, slotsFrom: NONE, routes: held, outputBytes: heldBytes(held), defaultBackend: undefined, tls: NONE, log: exactCopy(reads.log), deps: reads.deps, seen: 0 };
  }
  const tls = tlsClaims(spec, reads, options, ns, owner, ingress.metadata.name);
  const outputBytes = size + tlsEstimate(tls);
  // Exact-size copies: an array grown by push keeps room for 17 items (152 bytes) however few it holds, and entries live as long as their Ingress.
  return { key, ingress, claimant, backends: exactCopy(backends), slotsFrom: exactCopy(slotsFrom), routes: exactCopy(routes), outputBytes, defaultBackend, tls: exactCopy(tls), log: exactCopy(reads.log), deps: reads.deps.slice(), seen: 0 };
}

/**
 * The one empty list every entry shares: most Ingresses have no TLS section and log nothing, and
 * an empty array of their own costs 32 bytes each, for as long as the entry lives. Entries are
 * never edited (their lists are read-only), so sharing it changes nothing they say.
 */
const NONE: readonly never[] = Object.freeze([]);

/** `list` at its exact size, or the shared empty list. */
function exactCopy<T>(list: readonly T[]): readonly T[] {
  return list.length === 0 ? NONE : list.slice();
}

/** What computeEntry gathers for one Ingress while it walks its spec: the backends so far, and what a new one is made from. */
interface EntryWork {
  readonly reads: RecordedReads;
  readonly options: ModelOptions;
  readonly ns: string;
  readonly name: string;
  readonly owner: string;
  readonly ingress: KubeObject;
  readonly ingressOptions: IngressOptions;
  readonly warn: (message: string) => void;
  readonly previousSlots: (backend: string) => readonly string[] | undefined;
  readonly backends: Backend[];
  readonly slotsFrom: (readonly string[] | undefined)[];
}

/** The backend of `ref`, added to the work's backends on first use; its name. */
function backendFor(work: EntryWork, ref: BackendRef): string {
  const { ns, name, backends } = work;
  const port = ref.service.port.number !== undefined ? String(ref.service.port.number) : (ref.service.port.name as string);
  const backendName = `ing_${ns}_${name}_${ref.service.name}_${port}`;
  // Paths to the same backend share its name's string (the routes keep it as long as the backend).
  for (const backend of backends) if (backend.name === backendName) return backend.name;
  const { service, addresses, dns } = serviceServers(work.reads, work.options, ns, ref, work.owner, work.ingress.metadata.name);
  const from = work.previousSlots(backendName);
  backends.push({
    name: backendName,
    namespace: ns,
    ingress: name,
    service: ref.service.name,
    port,
    dns,
    options: backendOptionsOf(work.ingress, service, work.warn),
    ingressOptions: work.ingressOptions,
    servers: assignSlots(addresses, from, work.options.serverSlots),
  });
  work.slotsFrom.push(from);
  return backendName;
}

/** The reads' warn for the option readers, which pass a message alone. Made here: a closure written in place costs a name to set under tsx. */
function warnerOf(reads: RecordedReads): (message: string) => void {
  return (message) => reads.warn(message);
}

/** Text the config and its maps and slot file carry for each backend and server slot, besides the values in them. */
const BACKEND_OVERHEAD = 200;
const SERVER_OVERHEAD = 20;

/**
 * About how many bytes an Ingress adds to the output: per backend its name, its options and the
 * Ingress's options (each written into every backend, as JSON is about as long as the lines they
 * become), a line per server slot in the config and its address in the slot file; per route its
 * map lines (a Prefix path has two; a wildcard key escapes up to every character).
 */
function outputEstimate(backends: readonly Backend[], ingressOptions: IngressOptions, routes: readonly RouteCandidate[]): number {
  const shared = jsonLength(ingressOptions);
  let bytes = 0;
  for (const backend of backends) {
    bytes += BACKEND_OVERHEAD + 4 * backend.name.length + shared + jsonLength(backend.options);
    for (const server of backend.servers) bytes += SERVER_OVERHEAD + 2 * (server.name.length + server.address.length);
  }
  for (const route of routes) bytes += 2 * (2 * (route.host.length + route.path.length) + route.backend.length + 2);
  return bytes;
}

/**
 * The JSON length of backend or Ingress options, which the model never changes once made (they
 * are frozen): most backends share the default options, and most Ingresses the default Ingress
 * options, so each is measured once.
 */
const jsonLengths = new WeakMap<object, number>();

function jsonLength(options: object): number {
  let length = jsonLengths.get(options);
  if (length === undefined) {
    length = JSON.stringify(options).length;
    jsonLengths.set(options, length);
  }
  return length;
}

/** Text of a crt-list line (the certificate's path), and per host its name in the crt-list and the TLS host list. */
const CERTIFICATE_OVERHEAD = 300;
const TLS_HOST_OVERHEAD = 4;

/** About how many bytes an Ingress's TLS claims add besides the certificate files: their crt-list and TLS host list lines. */
function tlsEstimate(claims: readonly TlsClaim[]): number {
  let bytes = 0;
  for (const claim of claims) {
    bytes += CERTIFICATE_OVERHEAD;
    for (const host of claim.hosts) bytes += TLS_HOST_OVERHEAD + 2 * host.length;
  }
  return bytes;
}

/**
 * The TLS sections of an Ingress as claims. A section without hosts covers the hosts the Ingress
 * routes; under `tlsHostOwnership: routed-oldest` a host it does not route is dropped with a
 * warning (listing a host is no claim on it). A missing or incomplete Secret is a warning: its
 * hosts have no certificate of their own and get the default one.
 */
function tlsClaims(spec: IngressSpec, reads: RecordedReads, options: ModelOptions, ns: string, owner: string, name: string): TlsClaim[] {
  const routed = new Set<string>();
  for (const rule of listOf(spec.rules)) if (rule.host !== undefined && rule.host !== '') routed.add(rule.host);
  const claims: TlsClaim[] = [];
  for (const section of listOf(spec.tls)) {
    if (typeof section.secretName !== 'string') continue;
    const listed = Array.isArray(section.hosts) && section.hosts.length > 0 ? section.hosts : [...routed];
    const hosts: string[] = [];
    for (const host of new Set(listed)) {
      if (typeof host !== 'string' || host === '') continue;
      if (options.tlsHostOwnership === 'routed-oldest' && !routed.has(host)) reads.warn(`${owner}: TLS host ${host} is not routed by this Ingress; ignored`);
      else hosts.push(host);
    }
    if (hosts.length === 0) continue;
    const secret = reads.getSingle(options.stores.secrets, [ns, section.secretName]);
    const pem = secret === undefined ? undefined : pemFromSecret(secret);
    if (pem === undefined) {
      reads.warn(`${owner}: TLS secret ${ns}/${section.secretName} is missing or has no tls.crt/tls.key; its hosts are served without it`, { code: 'InvalidTLS', scope: 'tls', namespace: ns, name });
      continue;
    }
    claims.push({ certName: `${ns}_${section.secretName}.pem`, pem, hosts: hosts.sort() });
  }
  return claims;
}

/**
 * The objects of a spec list. The object checks hand over only well-formed specs; skipping
 * anything else here means a shape they missed costs that item, never the render.
 */
function listOf<T extends object>(items: readonly T[] | undefined): T[] {
  return Array.isArray(items) ? items.filter((item): item is T => typeof item === 'object' && item !== null) : [];
}

/** Replays the entry's warnings and guard rejections in the order they happened. */
export function replayEntry(entry: IngressEntry, source: ModelSource, warn: Warn): void {
  for (const item of entry.log) {
    if ('warn' in item) warn(item.warn, item.finding);
    else source.reject(item.reject);
  }
}

/** The slots a backend ended with, as the slot file records them ('' for an empty slot). */
export function slotsOf(entry: IngressEntry | undefined, backend: string): readonly string[] | undefined {
  const found = entry?.backends.find((b) => b.name === backend);
  return found === undefined ? undefined : found.servers.map((s) => (s.enabled ? s.address : ''));
}

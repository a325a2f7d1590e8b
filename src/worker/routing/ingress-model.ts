// The routing model behind the default template set: Ingress -> Service -> EndpointSlice ->
// server slots, host and path route tables, and TLS certificates from Secrets. Built once per
// render from guarded store reads, so templates stay declarative. Server slots are kept stable
// across renders by reading the slot file of the auxiliary baseline: endpoint churn then only
// changes the address and state of existing slots, which HAProxy's Runtime API can apply live.
import { objectKey, type IndexedStore } from '../store/indexed-store.js';
import { describe, guardObject } from '../store/object-guard.js';
import type { KubeObject, RenderBaseline } from '../protocol.js';
import { RouteIndex, tablesOf, type RouteCandidate, type RouteTables } from './route-index.js';

/** Guarded store reads: rejected objects never appear. */
export interface StoreReader {
  list(store: string): readonly KubeObject[];
  fetch(store: string, keys: readonly string[]): readonly KubeObject[];
  getSingle(store: string, keys: readonly string[]): KubeObject | undefined;
}

export interface Server {
  readonly name: string;
  /** `ip:port`, `[ipv6]:port`, or the parking address of an empty slot. */
  readonly address: string;
  readonly enabled: boolean;
}

export interface Backend {
  readonly name: string;
  readonly namespace: string;
  readonly ingress: string;
  readonly service: string;
  readonly port: string;
  readonly servers: readonly Server[];
}

export interface RouteEntry {
  readonly key: string;
  readonly backend: string;
}

export interface Certificate {
  /** File name under the certificates directory. */
  readonly name: string;
  readonly pem: string;
  readonly hosts: readonly string[];
}

export interface RoutingModel {
  readonly backends: readonly Backend[];
  /** `host/path` keys. */
  readonly hostExact: readonly RouteEntry[];
  /** `host/prefix/` keys, longest first (map_beg takes the first match). */
  readonly hostPrefix: readonly RouteEntry[];
  /** Regular expressions for wildcard hosts, longest path first. */
  readonly hostRegex: readonly RouteEntry[];
  /** Rules without a host: path keys. */
  readonly pathExact: readonly RouteEntry[];
  readonly pathPrefix: readonly RouteEntry[];
  readonly certificates: readonly Certificate[];
  /** The slot assignment, written as an auxiliary file and read back as the next baseline. */
  readonly serverSlotsFile: string;
}

export interface ModelOptions {
  /** Accept Ingresses of this class. @default 'haproxy' */
  readonly ingressClass: string;
  /** Also accept Ingresses without a class. @default true */
  readonly watchIngressWithoutClass: boolean;
  /** Slots per backend, and the block size by which a backend grows. @default 10 */
  readonly serverSlots: number;
  readonly stores: { readonly ingresses: string; readonly services: string; readonly endpointSlices: string; readonly secrets: string };
}

export const SERVER_SLOTS_FILE = 'server-slots.txt';
/** Where an empty slot points; it is always `disabled`, so nothing is ever sent there. */
export const PARKED_ADDRESS = '127.0.0.1:1';

export function modelOptions(values: Readonly<Record<string, unknown>>): ModelOptions {
  const slots = Number(values.serverSlots ?? 10);
  return {
    ingressClass: String(values.ingressClass ?? 'haproxy'),
    watchIngressWithoutClass: values.watchIngressWithoutClass !== false && values.watchIngressWithoutClass !== 'false',
    serverSlots: Number.isInteger(slots) && slots > 0 ? slots : 10,
    stores: { ingresses: 'ingresses', services: 'services', endpointSlices: 'endpointslices', secrets: 'secrets' },
  };
}

/**
 * The routing model built in one go with nothing cached: what a cold worker computes, and the
 * reference the incremental builder is tested against.
 */
export function buildRoutingModel(
  source: ModelSource,
  options: ModelOptions,
  baseline: RenderBaseline | undefined,
  warn: (message: string) => void,
): RoutingModel {
  return new RoutingModelBuilder(options).build(source, baseline, warn);
}

/** What the builder reads: guarded store reads plus the raw stores, for change tracking. */
export interface ModelSource extends StoreReader {
  /** The raw store (its generation and change journal), or undefined when it does not exist. */
  store(name: string): IndexedStore | undefined;
  /** Reports an object the guard rejected; the source reports each reason once per render. */
  reject(reason: string): void;
}

/** One TLS section of an Ingress, with the Secret lookup done when the Ingress was computed. */
interface TlsUse {
  readonly certName: string;
  readonly hosts: readonly string[];
  /** The Secret's PEM, or undefined when it is missing or incomplete. */
  readonly pem: string | undefined;
  /** Guard rejections met by the Secret lookup, replayed only when a cold build would look. */
  readonly rejections: readonly string[];
  readonly missing: string;
}

/** Warnings and guard rejections of one Ingress's computation, in the order they happened. */
type LogEntry = { readonly warn: string } | { readonly reject: string };

/** Everything one Ingress contributes to the model, and what it was computed from. */
interface IngressEntry {
  readonly key: string;
  readonly ingress: KubeObject;
  readonly backends: readonly Backend[];
  /** Per backend: the baseline slots it was assigned from (its servers hold the result). */
  readonly slotsFrom: readonly (readonly string[] | undefined)[];
  readonly routes: readonly RouteCandidate[];
  readonly tls: readonly TlsUse[];
  readonly log: readonly LogEntry[];
  /** Dependency keys this entry is registered under (see `#dependents`). */
  readonly deps: readonly string[];
  /** The build that last used this entry. */
  seen: number;
}

const TRACKED_STORES = ['ingresses', 'services', 'endpointSlices', 'secrets'] as const;

/**
 * Builds the routing model, reusing what each Ingress contributed last time when nothing it read
 * has changed. Each Ingress's contribution (its backends with their server slots, its route
 * candidates, its TLS uses and its warnings) is cached with the store lookups it made. The
 * stores' change journals say which keys changed since the last build; a changed object
 * invalidates the Ingresses that read it, or that looked it up by index values it now has.
 * The assembly (sorting backends, route tables, certificates, the slot file) reuses the previous
 * result where its inputs are unchanged, and the objects handed to templates keep their identity
 * when their content is unchanged, so the template engine's `memo` blocks can reuse their text.
 *
 * The result is always the one a cold build of the same stores and baseline gives: anything the
 * builder cannot prove unchanged (a replaced store, a journal that no longer reaches back, a
 * baseline whose slots differ from those an entry was built with) is computed again.
 * One builder per worker and template set; its caches hold one entry per accepted Ingress.
 */
export class RoutingModelBuilder {
  readonly #options: ModelOptions;
  readonly #entries = new Map<string, IngressEntry>();
  /** Dependency key -> the key (or keys) of the Ingresses whose entry read it. */
  readonly #dependents = new Map<string, string | Set<string>>();
  /** The stores seen by the last build and their generations then. */
  readonly #stores = new Map<string, { store: IndexedStore | undefined; generation: number }>();
  /** Slot-file line of each backend object. */
  readonly #slotText = new WeakMap<Backend, string>();
  /** The entry of each Ingress object, to skip key building for unchanged objects. */
  #byIngress = new WeakMap<KubeObject, IngressEntry>();
  /** Ingress objects of another class. */
  readonly #otherClass = new WeakSet<KubeObject>();
  readonly #routes = new RouteIndex();
  #build = 0;
  #last: RoutingModel | undefined;
  #lastRouteWarnings: readonly string[] = [];
  #lastPositions = new Map<string, number>();

  constructor(options: ModelOptions) {
    this.#options = options;
  }

  /** Ingresses with a cached entry. */
  get cachedIngresses(): number {
    return this.#entries.size;
  }

  build(source: ModelSource, baseline: RenderBaseline | undefined, warn: (message: string) => void): RoutingModel {
    const build = ++this.#build;
    const dirty = this.#invalidate(source);
    const slotText = baseline?.auxiliaryFiles.files[SERVER_SLOTS_FILE];
    // The baseline is usually this builder's own last output: then every cached backend's slots
    // are exactly what the baseline says, and assignSlots would give them back unchanged.
    const ownBaseline = this.#last !== undefined && slotText === this.#last.serverSlotsFile;
    const previousSlots = ownBaseline ? undefined : parseSlotFile(slotText);

    const entries: IngressEntry[] = [];
    const recomputedEntries: IngressEntry[] = [];
    let recomputed = 0;
    let namesChanged = false;
    let routesChanged = false;
    for (const ingress of source.list(this.#options.stores.ingresses)) {
      if (this.#otherClass.has(ingress)) continue;
      let cached = this.#byIngress.get(ingress);
      if (cached === undefined || this.#entries.get(cached.key) !== cached) {
        if (!acceptsClass(ingress, this.#options)) {
          this.#otherClass.add(ingress);
          continue;
        }
        cached = this.#entries.get(objectKey(ingress));
      }
      let entry = cached;
      if (
        entry === undefined ||
        entry.ingress !== ingress ||
        dirty.has(entry.key) ||
        (previousSlots !== undefined && !slotsStillValid(entry, previousSlots))
      ) {
        const prior = cached;
        entry = this.#compute(source, objectKey(ingress), ingress, (name) =>
          previousSlots !== undefined ? previousSlots.get(name) : slotsOf(prior, name),
        );
        // Unchanged routes and backends keep their objects: the route index knows routes by
        // identity, and memo blocks and the slot file reuse a backend's text while it lives.
        if (prior !== undefined) entry = keepUnchanged(prior, entry);
        if (prior !== undefined) this.#unregister(prior);
        this.#register(entry);
        this.#entries.set(entry.key, entry);
        this.#byIngress.set(ingress, entry);
        recomputed++;
        recomputedEntries.push(entry);
        if (prior === undefined || !sameNames(prior.backends, entry.backends)) namesChanged = true;
        if (prior === undefined || prior.routes !== entry.routes) {
          routesChanged = true;
          if (prior !== undefined) this.#routes.remove(prior.routes);
          this.#routes.add(entry.routes);
        }
      }
      entry.seen = build;
      entries.push(entry);
    }
    if (entries.length !== this.#entries.size) {
      for (const [key, entry] of this.#entries) {
        if (entry.seen === build) continue;
        this.#unregister(entry);
        this.#routes.remove(entry.routes);
        this.#entries.delete(key);
        namesChanged = true;
        if (entry.routes.length > 0) routesChanged = true;
      }
    }
    const previous = this.#last;
    if (previous !== undefined && recomputed === 0 && !namesChanged && !routesChanged) {
      // Nothing changed: replay the warnings and hand back the same model.
      this.#replayLogs(entries, source, warn, new Map());
      for (const message of this.#lastRouteWarnings) warn(message);
      return previous;
    }

    const certificates = new Map<string, Certificate>();
    this.#replayLogs(entries, source, warn, certificates);
    const resort = namesChanged || previous === undefined;
    const backends = this.#sortedBackends(resort ? entries : recomputedEntries, resort);
    let tables: RouteTables;
    if (previous !== undefined && !routesChanged) {
      tables = tablesOf(previous);
      for (const message of this.#lastRouteWarnings) warn(message);
    } else {
      const warnings: string[] = [];
      tables = this.#routes.tables(previous === undefined ? undefined : tablesOf(previous), () => entries.flatMap((e) => e.routes), (message) => {
        warnings.push(message);
      });
      for (const message of warnings) warn(message);
      this.#lastRouteWarnings = warnings;
    }
    const sortedCertificates = [...certificates.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
    const model: RoutingModel = {
      backends,
      ...tables,
      certificates:
        previous !== undefined && sameCertificates(sortedCertificates, previous.certificates) ? previous.certificates : sortedCertificates,
      serverSlotsFile: previous !== undefined && backends === previous.backends ? previous.serverSlotsFile : this.#slotFile(backends),
    };
    this.#last = model;
    return model;
  }

  /** Keys of Ingresses whose entry must be recomputed; clears every entry if it cannot tell. */
  #invalidate(source: ModelSource): Set<string> {
    const dirty = new Set<string>();
    let reset = false;
    for (const field of TRACKED_STORES) {
      const name = this.#options.stores[field];
      const store = source.store(name);
      const known = this.#stores.get(name);
      this.#stores.set(name, { store, generation: store?.generation ?? 0 });
      if (known === undefined || known.store !== store) {
        reset = true;
        continue;
      }
      if (store === undefined || reset) continue;
      const changed = store.changedSince(known.generation);
      if (changed === undefined) {
        reset = true;
        continue;
      }
      for (const key of new Set(changed)) {
        this.#markDependents(`o\0${name}\0${key}`, dirty);
        const object = store.get(key);
        if (object === undefined) continue;
        const values = store.indexValues(object);
        for (let length = 1; length <= values.length; length++) this.#markDependents(lookupKey(name, values.slice(0, length)), dirty);
      }
    }
    if (reset) {
      this.#entries.clear();
      this.#dependents.clear();
      this.#routes.clear();
      this.#byIngress = new WeakMap();
      this.#last = undefined;
    }
    return dirty;
  }

  #markDependents(dep: string, dirty: Set<string>): void {
    const keys = this.#dependents.get(dep);
    if (typeof keys === 'string') dirty.add(keys);
    else if (keys !== undefined) for (const key of keys) dirty.add(key);
  }

  // Most dependency keys have one dependent: it is stored as is, and a Set only when shared.
  #register(entry: IngressEntry): void {
    for (const dep of entry.deps) {
      const keys = this.#dependents.get(dep);
      if (keys === undefined) this.#dependents.set(dep, entry.key);
      else if (typeof keys !== 'string') keys.add(entry.key);
      else if (keys !== entry.key) this.#dependents.set(dep, new Set([keys, entry.key]));
    }
  }

  #unregister(entry: IngressEntry): void {
    for (const dep of entry.deps) {
      const keys = this.#dependents.get(dep);
      if (keys === entry.key) {
        this.#dependents.delete(dep);
      } else if (keys !== undefined && typeof keys !== 'string') {
        keys.delete(entry.key);
        if (keys.size === 1) this.#dependents.set(dep, keys.values().next().value as string);
      }
    }
  }

  /** One Ingress's contribution, with the lookups it made recorded as dependencies. */
  #compute(
    source: ModelSource,
    key: string,
    ingress: KubeObject,
    previousSlots: (backend: string) => readonly string[] | undefined,
  ): IngressEntry {
    const options = this.#options;
    const ns = ingress.metadata.namespace ?? 'default';
    const name = ingress.metadata.name;
    const owner = describe(ingress);
    const spec = ingress.spec as IngressSpec;
    const reads = new RecordedReads(source);
    const backends: Backend[] = [];
    const slotsFrom: (readonly string[] | undefined)[] = [];
    const routes: RouteCandidate[] = [];
    const backendFor = (ref: BackendRef): string => {
      const port = ref.service.port.number !== undefined ? String(ref.service.port.number) : (ref.service.port.name as string);
      const backendName = `ing_${ns}_${name}_${ref.service.name}_${port}`;
      if (!backends.some((b) => b.name === backendName)) {
        const endpoints = resolveEndpoints(reads, options, ns, ref, owner);
        const from = previousSlots(backendName);
        backends.push({ name: backendName, namespace: ns, ingress: name, service: ref.service.name, port, servers: assignSlots(endpoints, from, options.serverSlots) });
        slotsFrom.push(from);
      }
      return backendName;
    };
    if (spec.defaultBackend !== undefined) {
      routes.push({ host: '', path: '/', exact: false, backend: backendFor(spec.defaultBackend), owner });
    }
    for (const rule of spec.rules ?? []) {
      for (const p of rule.http?.paths ?? []) {
        const backend = backendFor(p.backend);
        routes.push({ host: rule.host ?? '', path: p.path ?? '/', exact: p.pathType === 'Exact', backend, owner });
      }
    }
    const tls: TlsUse[] = [];
    for (const section of spec.tls ?? []) {
      if (section.secretName === undefined) continue;
      const rejections: string[] = [];
      const found = reads.read(options.stores.secrets, [ns, section.secretName], rejections);
      const secret = found.length === 1 ? found[0] : undefined;
      tls.push({
        certName: `${ns}_${section.secretName}.pem`,
        hosts: [...(section.hosts ?? [])].sort(),
        pem: secret === undefined ? undefined : pemFromSecret(secret),
        rejections,
        missing: `${owner}: TLS secret ${ns}/${section.secretName} is missing or has no tls.crt/tls.key; its hosts are served without it`,
      });
    }
    return { key, ingress, backends, slotsFrom, routes, tls, log: reads.log, deps: reads.deps, seen: 0 };
  }

  /**
   * Replays each entry's warnings and rejections in Ingress order, and merges TLS uses into
   * `certificates` exactly as a cold build would (the first use of a Secret looks it up; later
   * uses only add hosts).
   */
  #replayLogs(entries: readonly IngressEntry[], source: ModelSource, warn: (message: string) => void, certificates: Map<string, Certificate>): void {
    for (const entry of entries) {
      for (const item of entry.log) {
        if ('warn' in item) warn(item.warn);
        else source.reject(item.reject);
      }
      for (const use of entry.tls) {
        const existing = certificates.get(use.certName);
        if (existing !== undefined) {
          certificates.set(use.certName, { ...existing, hosts: [...new Set([...existing.hosts, ...use.hosts])].sort() });
          continue;
        }
        for (const reason of use.rejections) source.reject(reason);
        if (use.pem === undefined) warn(use.missing);
        else certificates.set(use.certName, { name: use.certName, pem: use.pem, hosts: use.hosts });
      }
    }
  }

  /**
   * Every backend sorted by name. When the set of names is unchanged, `entries` are only the
   * recomputed ones, whose backends take their predecessors' places; otherwise all are sorted.
   */
  #sortedBackends(entries: readonly IngressEntry[], namesChanged: boolean): readonly Backend[] {
    const previous = this.#last?.backends;
    if (!namesChanged && previous !== undefined) {
      const backends = previous.slice();
      for (const entry of entries) {
        for (const backend of entry.backends) {
          const at = this.#lastPositions.get(backend.name) as number;
          if (backends[at] !== backend) backends[at] = backend;
        }
      }
      return sameArray(backends, previous) ? previous : backends;
    }
    const backends = entries.flatMap((e) => e.backends).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#lastPositions = new Map(backends.map((b, i) => [b.name, i]));
    return backends;
  }

  #slotFile(backends: readonly Backend[]): string {
    // Joined in one go: a flat string, where appending piece by piece would leave a rope that
    // every later reader (the checksum, the copy to the main thread) has to walk.
    const parts = new Array<string>(backends.length);
    for (let b = 0; b < backends.length; b++) {
      const backend = backends[b] as Backend;
      let line = this.#slotText.get(backend);
      if (line === undefined) {
        line = slotLine(backend.name, backend.servers.map((server) => (server.enabled ? server.address : '')));
        this.#slotText.set(backend, line);
      }
      parts[b] = line;
    }
    return parts.join('');
  }
}

function lookupKey(store: string, keys: readonly string[]): string {
  return `t\0${store}\0${keys.join('\0')}`;
}

/**
 * Guarded store reads on behalf of one Ingress: records the lookups made (dependency keys) and,
 * in order, the guard rejections met, next to the warnings of the Ingress's computation.
 */
class RecordedReads implements StoreReader {
  readonly deps: string[] = [];
  readonly log: LogEntry[] = [];

  constructor(private readonly source: ModelSource) {}

  list(store: string): readonly KubeObject[] {
    return this.source.list(store);
  }

  fetch(store: string, keys: readonly string[]): readonly KubeObject[] {
    return this.read(store, keys, undefined);
  }

  getSingle(store: string, keys: readonly string[]): KubeObject | undefined {
    const found = this.read(store, keys, undefined);
    return found.length === 1 ? found[0] : undefined;
  }

  warn(message: string): void {
    this.log.push({ warn: message });
  }

  /** Guarded objects at `keys`; rejections go to `rejections`, or to the log when undefined. */
  read(store: string, keys: readonly string[], rejections: string[] | undefined): KubeObject[] {
    this.#depend(lookupKey(store, keys));
    const found: KubeObject[] = [];
    for (const object of this.source.store(store)?.fetch(keys) ?? []) {
      this.#depend(`o\0${store}\0${objectKey(object)}`);
      const verdict = guardObject(object);
      if (verdict.ok) found.push(object);
      else if (rejections !== undefined) rejections.push(verdict.reason);
      else this.log.push({ reject: verdict.reason });
    }
    return found;
  }

  #depend(dep: string): void {
    if (!this.deps.includes(dep)) this.deps.push(dep);
  }
}

/** The slots a backend ended with, as the slot file records them ('' for an empty slot). */
function slotsOf(entry: IngressEntry | undefined, backend: string): readonly string[] | undefined {
  const found = entry?.backends.find((b) => b.name === backend);
  return found === undefined ? undefined : found.servers.map((s) => (s.enabled ? s.address : ''));
}

/** `next` with the route list and the backend objects of `prior` wherever their content is equal. */
function keepUnchanged(prior: IngressEntry, next: IngressEntry): IngressEntry {
  const routes = sameRoutes(prior.routes, next.routes) ? prior.routes : next.routes;
  let backends = next.backends;
  for (let i = 0; i < backends.length; i++) {
    const backend = backends[i] as Backend;
    const old = prior.backends.find((b) => b.name === backend.name);
    if (old === undefined || old === backend || !sameBackend(old, backend)) continue;
    if (backends === next.backends) backends = backends.slice();
    (backends as Backend[])[i] = old;
  }
  return routes === next.routes && backends === next.backends ? next : { ...next, routes, backends };
}

function sameBackend(a: Backend, b: Backend): boolean {
  if (a.name !== b.name || a.namespace !== b.namespace || a.ingress !== b.ingress || a.service !== b.service || a.port !== b.port) return false;
  if (a.servers.length !== b.servers.length) return false;
  for (let i = 0; i < a.servers.length; i++) {
    const x = a.servers[i] as Server;
    const y = b.servers[i] as Server;
    if (x.name !== y.name || x.address !== y.address || x.enabled !== y.enabled) return false;
  }
  return true;
}

/** Whether `slots` (from a slot file) are exactly the slots `servers` hold. */
function holdsSlots(slots: readonly string[] | undefined, servers: readonly Server[]): boolean {
  if (slots === undefined || slots.length !== servers.length) return false;
  for (let i = 0; i < slots.length; i++) {
    const server = servers[i] as Server;
    if (slots[i] !== (server.enabled ? server.address : '')) return false;
  }
  return true;
}

/**
 * An entry built from other baseline slots is still right if, for each of its backends, the
 * baseline now holds either the slots it was built from or the slots it ended with (assigning
 * slots again from its own result gives the same result).
 */
function slotsStillValid(entry: IngressEntry, previous: ReadonlyMap<string, readonly string[]>): boolean {
  for (let i = 0; i < entry.backends.length; i++) {
    const backend = entry.backends[i] as Backend;
    const now = previous.get(backend.name);
    if (!sameSlots(now, entry.slotsFrom[i]) && !holdsSlots(now, backend.servers)) return false;
  }
  return true;
}

function sameSlots(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameArray<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameNames(a: readonly Backend[], b: readonly Backend[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if ((a[i] as Backend).name !== (b[i] as Backend).name) return false;
  return true;
}

function sameRoutes(a: readonly RouteCandidate[], b: readonly RouteCandidate[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as RouteCandidate;
    const y = b[i] as RouteCandidate;
    if (x.host !== y.host || x.path !== y.path || x.exact !== y.exact || x.backend !== y.backend || x.owner !== y.owner) return false;
  }
  return true;
}

function sameCertificates(a: readonly Certificate[], b: readonly Certificate[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Certificate;
    const y = b[i] as Certificate;
    if (x.name !== y.name || x.pem !== y.pem || !sameArray(x.hosts, y.hosts)) return false;
  }
  return true;
}


interface BackendRef {
  service: { name: string; port: { number?: number; name?: string } };
}

interface IngressSpec {
  ingressClassName?: string;
  defaultBackend?: BackendRef;
  rules?: { host?: string; http?: { paths?: { path?: string; pathType: string; backend: BackendRef }[] } }[];
  tls?: { hosts?: string[]; secretName?: string }[];
}

function acceptsClass(ingress: KubeObject, options: ModelOptions): boolean {
  const spec = ingress.spec as IngressSpec;
  const cls = spec.ingressClassName ?? ingress.metadata.annotations?.['kubernetes.io/ingress.class'];
  return cls === undefined ? options.watchIngressWithoutClass : cls === options.ingressClass;
}

/** Ready endpoint addresses for a backend reference, sorted, as `ip:port`. */
function resolveEndpoints(reader: StoreReader & { warn(message: string): void }, options: ModelOptions, ns: string, ref: BackendRef, owner: string): string[] {
  const service = reader.getSingle(options.stores.services, [ns, ref.service.name]);
  if (service === undefined) {
    reader.warn(`${owner}: service ${ns}/${ref.service.name} not found; its backend has no servers`);
    return [];
  }
  const ports = ((service.spec as { ports?: { name?: string; port: number }[] }).ports ?? []);
  const servicePort = ports.find((p) =>
    ref.service.port.number !== undefined ? p.port === ref.service.port.number : p.name === ref.service.port.name,
  );
  if (servicePort === undefined) {
    const wanted = ref.service.port.number ?? ref.service.port.name;
    reader.warn(`${owner}: service ${ns}/${ref.service.name} has no port ${String(wanted)}; its backend has no servers`);
    return [];
  }
  const portName = servicePort.name ?? '';
  const addresses = new Set<string>();
  for (const slice of reader.fetch(options.stores.endpointSlices, [ns, ref.service.name])) {
    const slicePort = ((slice.ports as { name?: string; port: number }[] | undefined) ?? []).find((p) => (p.name ?? '') === portName);
    if (slicePort === undefined) continue;
    for (const endpoint of (slice.endpoints as { addresses: string[]; conditions?: { ready?: boolean } }[] | undefined) ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      for (const address of endpoint.addresses) {
        addresses.add(address.includes(':') ? `[${address}]:${slicePort.port}` : `${address}:${slicePort.port}`);
      }
    }
  }
  return [...addresses].sort();
}

/**
 * Keeps every endpoint that already had a slot in that slot, fills free slots in order with new
 * endpoints, and grows by whole blocks only when the endpoints outnumber the slots. The slot
 * count never shrinks within a baseline's lineage, so churn never removes a server line.
 */
export function assignSlots(endpoints: readonly string[], previous: readonly string[] | undefined, block: number): Server[] {
  const needed = Math.max(1, Math.ceil(endpoints.length / block)) * block;
  const count = Math.max(needed, previous?.length ?? 0);
  const slots: string[] = new Array<string>(count).fill('');
  const placed = new Set<string>();
  const wanted = new Set(endpoints);
  if (previous !== undefined) {
    for (let i = 0; i < previous.length; i++) {
      const address = previous[i] as string;
      if (address !== '' && wanted.has(address) && !placed.has(address)) {
        slots[i] = address;
        placed.add(address);
      }
    }
  }
  let free = 0;
  for (const address of endpoints) {
    if (placed.has(address)) continue;
    while (slots[free] !== '') free++;
    slots[free] = address;
    placed.add(address);
  }
  return slots.map((address, i) => ({
    name: `srv${i + 1}`,
    address: address === '' ? PARKED_ADDRESS : address,
    enabled: address !== '',
  }));
}

let lastSlotText: string | undefined;
let lastSlots = new Map<string, string[]>();

/**
 * Parses the slot file of a baseline: one line per backend, `<backend> <slot 1> <slot 2> ...`,
 * each slot an `address:port` or `-` when empty. The last parse is reused while the text is
 * unchanged, so the map is shared: do not modify it. Malformed lines are skipped.
 */
export function parseSlotFile(text: string | undefined): Map<string, string[]> {
  if (text === undefined || text === '') return new Map();
  if (text === lastSlotText) return lastSlots;
  const slots = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const parts = line.split(' ');
    const backend = parts[0];
    if (backend === undefined || backend === '' || parts.length < 2 || parts.length > MAX_SLOTS + 1) continue;
    slots.set(backend, parts.slice(1).map((address) => (address === '-' ? '' : address)));
  }
  lastSlotText = text;
  lastSlots = slots;
  return slots;
}

/** The slot file line of one backend ('' slots written as `-`). */
export function slotLine(backend: string, slots: readonly string[]): string {
  let line = backend;
  for (const address of slots) line += address === '' ? ' -' : ` ${address}`;
  return `${line}\n`;
}

/** Slots per backend beyond which a slot file line is ignored. */
const MAX_SLOTS = 100_000;

function pemFromSecret(secret: KubeObject): string | undefined {
  const data = secret.data as Record<string, string> | undefined;
  const crt = data?.['tls.crt'];
  const key = data?.['tls.key'];
  if (crt === undefined || key === undefined) return undefined;
  const decode = (b64: string): string => Buffer.from(b64, 'base64').toString('utf8').trim();
  return `${decode(crt)}\n${decode(key)}\n`;
}

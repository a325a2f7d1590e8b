// The routing model behind the default template set: Ingress -> Service -> EndpointSlice ->
// server slots, host and path route tables, and TLS certificates from Secrets. Built once per
// render from guarded store reads, so templates stay declarative. Server slots are kept stable
// across renders by reading the slot file of the auxiliary baseline: endpoint churn then only
// changes the address and state of existing slots, which HAProxy's Runtime API can apply live.
import type { KubeObject, RenderBaseline } from './protocol.js';
import { describe } from './object-guard.js';

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

interface RouteCandidate {
  readonly host: string;
  readonly path: string;
  readonly exact: boolean;
  readonly backend: string;
  readonly owner: string;
}

export function buildRoutingModel(
  reader: StoreReader,
  options: ModelOptions,
  baseline: RenderBaseline | undefined,
  warn: (message: string) => void,
): RoutingModel {
  const previousSlots = parseSlotFile(baseline?.auxiliaryFiles.files[SERVER_SLOTS_FILE]);
  const backends = new Map<string, Backend>();
  const routes: RouteCandidate[] = [];
  const certificates = new Map<string, Certificate>();

  for (const ingress of reader.list(options.stores.ingresses)) {
    if (!acceptsClass(ingress, options)) continue;
    const ns = ingress.metadata.namespace ?? 'default';
    const name = ingress.metadata.name;
    const owner = describe(ingress);
    const spec = ingress.spec as IngressSpec;
    const backendFor = (ref: BackendRef): string => {
      const port = ref.service.port.number !== undefined ? String(ref.service.port.number) : (ref.service.port.name as string);
      const backendName = `ing_${ns}_${name}_${ref.service.name}_${port}`;
      if (!backends.has(backendName)) {
        const endpoints = resolveEndpoints(reader, options, ns, ref, owner, warn);
        backends.set(backendName, {
          name: backendName,
          namespace: ns,
          ingress: name,
          service: ref.service.name,
          port,
          servers: assignSlots(endpoints, previousSlots.get(backendName), options.serverSlots),
        });
      }
      return backendName;
    };
    if (spec.defaultBackend !== undefined) {
      routes.push({ host: '', path: '/', exact: false, backend: backendFor(spec.defaultBackend), owner });
    }
    for (const rule of spec.rules ?? []) {
      for (const p of rule.http?.paths ?? []) {
        const backend = backendFor(p.backend);
        const path = p.path ?? '/';
        routes.push({ host: rule.host ?? '', path, exact: p.pathType === 'Exact', backend, owner });
      }
    }
    for (const tls of spec.tls ?? []) {
      if (tls.secretName === undefined) continue;
      const certName = `${ns}_${tls.secretName}.pem`;
      const existing = certificates.get(certName);
      if (existing !== undefined) {
        certificates.set(certName, { ...existing, hosts: [...new Set([...existing.hosts, ...(tls.hosts ?? [])])].sort() });
        continue;
      }
      const secret = reader.getSingle(options.stores.secrets, [ns, tls.secretName]);
      const pem = secret === undefined ? undefined : pemFromSecret(secret);
      if (pem === undefined) {
        warn(`${owner}: TLS secret ${ns}/${tls.secretName} is missing or has no tls.crt/tls.key; its hosts are served without it`);
        continue;
      }
      certificates.set(certName, { name: certName, pem, hosts: [...(tls.hosts ?? [])].sort() });
    }
  }

  const sortedBackends = [...backends.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    backends: sortedBackends,
    ...routeTables(routes, warn),
    certificates: [...certificates.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
    serverSlotsFile: slotFile(sortedBackends),
  };
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
function resolveEndpoints(
  reader: StoreReader,
  options: ModelOptions,
  ns: string,
  ref: BackendRef,
  owner: string,
  warn: (message: string) => void,
): string[] {
  const service = reader.getSingle(options.stores.services, [ns, ref.service.name]);
  if (service === undefined) {
    warn(`${owner}: service ${ns}/${ref.service.name} not found; its backend has no servers`);
    return [];
  }
  const ports = ((service.spec as { ports?: { name?: string; port: number }[] }).ports ?? []);
  const servicePort = ports.find((p) =>
    ref.service.port.number !== undefined ? p.port === ref.service.port.number : p.name === ref.service.port.name,
  );
  if (servicePort === undefined) {
    const wanted = ref.service.port.number ?? ref.service.port.name;
    warn(`${owner}: service ${ns}/${ref.service.name} has no port ${String(wanted)}; its backend has no servers`);
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

function slotFile(backends: readonly Backend[]): string {
  const lines: string[] = [];
  for (const backend of backends) {
    for (let i = 0; i < backend.servers.length; i++) {
      const server = backend.servers[i] as Server;
      lines.push(`${backend.name} ${i + 1} ${server.enabled ? server.address : '-'}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

let lastSlotText: string | undefined;
let lastSlots = new Map<string, string[]>();

/** Parses the slot file of a baseline; the last parse is reused when the text is unchanged. */
export function parseSlotFile(text: string | undefined): Map<string, string[]> {
  if (text === undefined || text === '') return new Map();
  if (text === lastSlotText) return lastSlots;
  const slots = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const [backend, index, address] = line.split(' ');
    if (backend === undefined || index === undefined || address === undefined) continue;
    const i = Number(index) - 1;
    if (!Number.isInteger(i) || i < 0 || i > 100_000) continue;
    let list = slots.get(backend);
    if (list === undefined) {
      list = [];
      slots.set(backend, list);
    }
    while (list.length <= i) list.push('');
    list[i] = address === '-' ? '' : address;
  }
  lastSlotText = text;
  lastSlots = slots;
  return slots;
}

function routeTables(routes: readonly RouteCandidate[], warn: (message: string) => void): Omit<RoutingModel, 'backends' | 'certificates' | 'serverSlotsFile'> {
  const hostExact = new Map<string, RouteCandidate>();
  const hostPrefix = new Map<string, RouteCandidate>();
  const hostRegex = new Map<string, RouteCandidate>();
  const pathExact = new Map<string, RouteCandidate>();
  const pathPrefix = new Map<string, RouteCandidate>();
  // Exact paths first: for the same key, Kubernetes gives an Exact path precedence over a Prefix.
  const ordered = [...routes].sort((a, b) => Number(b.exact) - Number(a.exact));
  const warned = new Set<string>();
  const claim = (table: Map<string, RouteCandidate>, key: string, route: RouteCandidate, exactKey: boolean): void => {
    const holder = table.get(key);
    if (holder === undefined) {
      table.set(key, route);
    } else if (holder.backend !== route.backend && !(holder.exact && !route.exact && exactKey)) {
      // A Prefix route claims two keys; its conflict is reported once.
      const message = `${route.owner}: route ${route.host}${route.path} is already served by ${holder.owner}; ignored`;
      if (!warned.has(message)) {
        warned.add(message);
        warn(message);
      }
    }
  };
  for (const route of ordered) {
    // Kubernetes ignores a trailing slash on a Prefix path: /foo/ matches /foo and /foo/bar.
    const base = route.exact || route.path === '/' ? route.path : route.path.replace(/\/+$/, '') || '/';
    if (route.host.startsWith('*.')) {
      const hostPattern = `^[^./]+${escapeRegex(route.host.slice(1))}`;
      if (route.exact) claim(hostRegex, `${hostPattern}${escapeRegex(base)}$`, route, true);
      else claim(hostRegex, `${hostPattern}${base === '/' ? '/' : `${escapeRegex(base)}(/|$)`}`, route, false);
      continue;
    }
    const exactTable = route.host === '' ? pathExact : hostExact;
    const prefixTable = route.host === '' ? pathPrefix : hostPrefix;
    if (route.exact) {
      claim(exactTable, route.host + base, route, true);
    } else if (base === '/') {
      claim(prefixTable, `${route.host}/`, route, false);
    } else {
      claim(exactTable, route.host + base, route, true);
      claim(prefixTable, `${route.host}${base}/`, route, false);
    }
  }
  const entries = (table: Map<string, RouteCandidate>): RouteEntry[] =>
    [...table.entries()]
      .map(([key, route]) => ({ key, backend: route.backend }))
      .sort((a, b) => b.key.length - a.key.length || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    hostExact: entries(hostExact),
    hostPrefix: entries(hostPrefix),
    hostRegex: entries(hostRegex),
    pathExact: entries(pathExact),
    pathPrefix: entries(pathPrefix),
  };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function pemFromSecret(secret: KubeObject): string | undefined {
  const data = secret.data as Record<string, string> | undefined;
  const crt = data?.['tls.crt'];
  const key = data?.['tls.key'];
  if (crt === undefined || key === undefined) return undefined;
  const decode = (b64: string): string => Buffer.from(b64, 'base64').toString('utf8').trim();
  return `${decode(crt)}\n${decode(key)}\n`;
}

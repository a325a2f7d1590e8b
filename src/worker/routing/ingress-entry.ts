// What one Ingress contributes to the routing model (its backends with their server slots, its
// route candidates, its TLS uses and its warnings), computed from its spec through recorded store
// reads. The builder caches one entry per accepted Ingress and reuses it while nothing it read
// has changed, so an entry carries everything needed to replay it: its log and its dependencies.
import { describe } from '../store/object-guard.js';
import type { KubeObject } from '../protocol.js';
import { mergeTlsUse, pemFromSecret, type TlsUse } from './certificates.js';
import { resolveEndpoints, type BackendRef } from './endpoints.js';
import type { Backend, Certificate, ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';
import { RecordedReads, type LogEntry } from './recorded-reads.js';
import type { RouteCandidate } from './route-index.js';
import { assignSlots } from './server-slots.js';

/** Everything one Ingress contributes to the model, and what it was computed from. */
export interface IngressEntry {
  readonly key: string;
  readonly ingress: KubeObject;
  readonly backends: readonly Backend[];
  /** Per backend: the baseline slots it was assigned from (its servers hold the result). */
  readonly slotsFrom: readonly (readonly string[] | undefined)[];
  readonly routes: readonly RouteCandidate[];
  readonly tls: readonly TlsUse[];
  readonly log: readonly LogEntry[];
  /** Dependency keys this entry is registered under (see the builder's `#dependents`). */
  readonly deps: readonly string[];
  /** The build that last used this entry. */
  seen: number;
}

interface IngressSpec {
  ingressClassName?: string;
  defaultBackend?: BackendRef;
  rules?: { host?: string; http?: { paths?: { path?: string; pathType: string; backend: BackendRef }[] } }[];
  tls?: { hosts?: string[]; secretName?: string }[];
}

export function acceptsClass(ingress: KubeObject, options: ModelOptions): boolean {
  const spec = ingress.spec as IngressSpec;
  const cls = spec.ingressClassName ?? ingress.metadata.annotations?.['kubernetes.io/ingress.class'];
  return cls === undefined ? options.watchIngressWithoutClass : cls === options.ingressClass;
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
 * Replays the entry's warnings and rejections in the order they happened, then merges its TLS
 * uses into `certificates`. Called for every entry in Ingress order, cached or fresh, so the
 * messages and certificates are exactly those of a cold build.
 */
export function replayEntry(entry: IngressEntry, source: ModelSource, warn: (message: string) => void, certificates: Map<string, Certificate>): void {
  for (const item of entry.log) {
    if ('warn' in item) warn(item.warn);
    else source.reject(item.reject);
  }
  for (const use of entry.tls) mergeTlsUse(certificates, use, source, warn);
}

/** The slots a backend ended with, as the slot file records them ('' for an empty slot). */
export function slotsOf(entry: IngressEntry | undefined, backend: string): readonly string[] | undefined {
  const found = entry?.backends.find((b) => b.name === backend);
  return found === undefined ? undefined : found.servers.map((s) => (s.enabled ? s.address : ''));
}

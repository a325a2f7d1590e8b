// Checks values taken from cluster objects before they can reach a template. Handlebars runs with
// `noEscape` (HTML escaping would corrupt HAProxy ACLs), so a newline in a host or a quote in a
// path would otherwise inject directives. A rejected object is left out of every template's view
// and named in a warning; the rest of the cluster still renders. Verdicts are cached per object
// identity, so a render re-checks only the objects that changed.
import { isIP } from 'node:net';
import type { KubeObject } from '../protocol.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const HOST = /^(?=.{1,253}$)(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** RFC 3986 path characters without the ones HAProxy configuration or map files treat specially. */
const PATH = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@%/]*$/;
const PORT_NAME = /^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
const PATH_TYPES = new Set(['Exact', 'Prefix', 'ImplementationSpecific']);

export type GuardVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

const OK: GuardVerdict = Object.freeze({ ok: true });
const verdicts = new WeakMap<object, GuardVerdict>();

/** The verdict for one object; cached per object identity (stored objects are never mutated). */
export function guardObject(object: KubeObject): GuardVerdict {
  let verdict = verdicts.get(object);
  if (verdict === undefined) {
    const reason = checkObject(object);
    verdict = reason === null ? OK : { ok: false, reason: `${describe(object)}: ${reason}` };
    verdicts.set(object, verdict);
  }
  return verdict;
}

/** `Kind namespace/name`, as used in every message about an object. */
export function describe(object: KubeObject): string {
  const meta = object.metadata as KubeObject['metadata'] | undefined;
  const name = meta?.namespace ? `${meta.namespace}/${meta.name}` : (meta?.name ?? '(unnamed)');
  return `${object.kind ?? 'object'} ${name}`;
}

function checkObject(object: KubeObject): string | null {
  const meta = object.metadata as KubeObject['metadata'] | undefined;
  if (meta === undefined || typeof meta.name !== 'string') return 'metadata.name is missing';
  if (!DNS_SUBDOMAIN.test(meta.name)) return `metadata.name ${JSON.stringify(meta.name)} is not a valid DNS subdomain`;
  if (meta.namespace !== undefined && !DNS_LABEL.test(meta.namespace)) {
    return `metadata.namespace ${JSON.stringify(meta.namespace)} is not a valid DNS label`;
  }
  for (const field of ['labels', 'annotations'] as const) {
    const entries = meta[field];
    if (entries === undefined) continue;
    for (const [key, value] of Object.entries(entries)) {
      if (typeof value !== 'string' || CONTROL.test(value) || CONTROL.test(key)) {
        return `metadata.${field}[${JSON.stringify(key)}] contains a control character (newline or similar)`;
      }
    }
  }
  switch (object.kind) {
    case 'Ingress':
      return checkIngress(object);
    case 'Service':
      return checkService(object);
    case 'EndpointSlice':
      return checkEndpointSlice(object);
    case 'Secret':
      return checkSecret(object);
    default:
      return null;
  }
}

function checkIngress(object: KubeObject): string | null {
  const spec = object.spec as Record<string, unknown> | undefined;
  if (spec === undefined || typeof spec !== 'object') return 'spec is missing';
  if (spec.ingressClassName !== undefined && (typeof spec.ingressClassName !== 'string' || !DNS_SUBDOMAIN.test(spec.ingressClassName))) {
    return `spec.ingressClassName ${JSON.stringify(spec.ingressClassName)} is not a valid name`;
  }
  if (spec.defaultBackend !== undefined) {
    const problem = checkBackend(spec.defaultBackend, 'spec.defaultBackend');
    if (problem !== null) return problem;
  }
  const rules = spec.rules ?? [];
  if (!Array.isArray(rules)) return 'spec.rules must be a list';
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r] as Record<string, unknown>;
    const where = `spec.rules[${r}]`;
    if (rule.host !== undefined && (typeof rule.host !== 'string' || !HOST.test(rule.host))) {
      return `${where}.host ${JSON.stringify(rule.host)} is not a valid host name`;
    }
    const http = rule.http as { paths?: unknown } | undefined;
    if (http === undefined) continue;
    if (!Array.isArray(http.paths)) return `${where}.http.paths must be a list`;
    for (let p = 0; p < http.paths.length; p++) {
      const path = http.paths[p] as Record<string, unknown>;
      const at = `${where}.http.paths[${p}]`;
      const value = path.path ?? '/';
      if (typeof value !== 'string' || !PATH.test(value)) {
        return `${at}.path ${JSON.stringify(value)} is not a safe URL path (it must start with '/' and hold no spaces, quotes, '#' or control characters)`;
      }
      if (typeof path.pathType !== 'string' || !PATH_TYPES.has(path.pathType)) {
        return `${at}.pathType ${JSON.stringify(path.pathType)} must be Exact, Prefix or ImplementationSpecific`;
      }
      const problem = checkBackend(path.backend, `${at}.backend`);
      if (problem !== null) return problem;
    }
  }
  const tls = spec.tls ?? [];
  if (!Array.isArray(tls)) return 'spec.tls must be a list';
  for (let t = 0; t < tls.length; t++) {
    const entry = tls[t] as Record<string, unknown>;
    if (entry.secretName !== undefined && (typeof entry.secretName !== 'string' || !DNS_SUBDOMAIN.test(entry.secretName))) {
      return `spec.tls[${t}].secretName ${JSON.stringify(entry.secretName)} is not a valid name`;
    }
    const hosts = entry.hosts ?? [];
    if (!Array.isArray(hosts)) return `spec.tls[${t}].hosts must be a list`;
    for (const host of hosts) {
      if (typeof host !== 'string' || !HOST.test(host)) return `spec.tls[${t}].hosts entry ${JSON.stringify(host)} is not a valid host name`;
    }
  }
  return null;
}

function checkBackend(raw: unknown, where: string): string | null {
  const backend = raw as { service?: { name?: unknown; port?: { number?: unknown; name?: unknown } } } | undefined;
  const service = backend?.service;
  if (service === undefined) return `${where}.service is missing (resource backends are not supported)`;
  if (typeof service.name !== 'string' || !DNS_LABEL.test(service.name)) {
    return `${where}.service.name ${JSON.stringify(service.name)} is not a valid service name`;
  }
  const port = service.port;
  if (port?.number !== undefined) {
    if (!isPort(port.number)) return `${where}.service.port.number ${JSON.stringify(port.number)} is not a port number`;
  } else if (port?.name !== undefined) {
    if (typeof port.name !== 'string' || !PORT_NAME.test(port.name)) return `${where}.service.port.name ${JSON.stringify(port.name)} is not a valid port name`;
  } else {
    return `${where}.service.port needs a number or a name`;
  }
  return null;
}

function checkService(object: KubeObject): string | null {
  const spec = object.spec as { ports?: unknown } | undefined;
  if (spec === undefined || typeof spec !== 'object') return 'spec is missing';
  const ports = spec.ports ?? [];
  if (!Array.isArray(ports)) return 'spec.ports must be a list';
  for (let i = 0; i < ports.length; i++) {
    const port = ports[i] as Record<string, unknown>;
    if (!isPort(port.port)) return `spec.ports[${i}].port ${JSON.stringify(port.port)} is not a port number`;
    if (port.name !== undefined && (typeof port.name !== 'string' || !PORT_NAME.test(port.name))) {
      return `spec.ports[${i}].name ${JSON.stringify(port.name)} is not a valid port name`;
    }
  }
  return null;
}

function checkEndpointSlice(object: KubeObject): string | null {
  const ports = object.ports ?? [];
  if (!Array.isArray(ports)) return 'ports must be a list';
  for (let i = 0; i < ports.length; i++) {
    const port = ports[i] as Record<string, unknown>;
    if (!isPort(port.port)) return `ports[${i}].port ${JSON.stringify(port.port)} is not a port number`;
    if (port.name !== undefined && port.name !== '' && (typeof port.name !== 'string' || !PORT_NAME.test(port.name))) {
      return `ports[${i}].name ${JSON.stringify(port.name)} is not a valid port name`;
    }
  }
  const endpoints = object.endpoints ?? [];
  if (!Array.isArray(endpoints)) return 'endpoints must be a list';
  for (let e = 0; e < endpoints.length; e++) {
    const addresses = (endpoints[e] as { addresses?: unknown }).addresses;
    if (!Array.isArray(addresses)) return `endpoints[${e}].addresses must be a list`;
    for (const address of addresses) {
      if (typeof address !== 'string' || isIP(address) === 0) return `endpoints[${e}].addresses entry ${JSON.stringify(address)} is not an IP address`;
    }
  }
  return null;
}

function checkSecret(object: KubeObject): string | null {
  const data = object.data;
  if (data === undefined) return null;
  if (typeof data !== 'object' || data === null) return 'data must be a mapping';
  for (const [key, value] of Object.entries(data)) {
    if (typeof value !== 'string' || !/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(value)) return `data[${JSON.stringify(key)}] is not base64`;
  }
  return null;
}

function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

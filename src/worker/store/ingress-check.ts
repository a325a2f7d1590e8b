// The Ingress check, at the granularity of issue 11: the smallest unit goes. A bad host drops its
// rule, a bad path or backend drops that path, a bad TLS host drops TLS for that host and a bad
// TLS entry (secret name, shape) drops that entry; the rest of the Ingress still routes. Only
// what makes the whole object meaningless (no spec, a bad class, an absurd number of paths)
// rejects it. Every kept value follows field-rules.ts; the view is a frozen copy.
import type { KubeObject } from '../protocol.js';
import { isDnsLabel, isDnsSubdomain, isHost, isPort, isPortName, isRecord, isSafePath, rejected, type KindOutcome, type Problem } from './field-rules.js';
import { quote } from './log-text.js';
import { MAX_FILE_NAME, MAX_INGRESS_PATHS, MAX_PATH, MAX_TLS_HOSTS } from './value-limits.js';

const PATH_TYPES = new Set(['Exact', 'Prefix', 'ImplementationSpecific']);

export function checkIngress(object: KubeObject): KindOutcome {
  const spec = object.spec;
  if (!isRecord(spec)) return rejected('object', `spec is ${quote(spec)}, not a mapping`);
  if (spec.ingressClassName !== undefined && !isDnsSubdomain(spec.ingressClassName)) {
    return rejected('object', `spec.ingressClassName ${quote(spec.ingressClassName)} is not a valid name`);
  }
  const count = countPaths(spec.rules);
  if (count > MAX_INGRESS_PATHS) return rejected('object', `has ${count} paths, over the limit of ${MAX_INGRESS_PATHS}`);
  const dropped: Problem[] = [];
  const next: Record<string, unknown> = {};
  if (spec.defaultBackend !== undefined) {
    const problem = backendProblem(spec.defaultBackend, 'spec.defaultBackend');
    if (problem !== null) {
      dropped.push({ scope: 'path', reason: `${problem}; the default backend is dropped` });
      next.defaultBackend = undefined;
    }
  }
  if (spec.rules !== undefined) {
    const rules = checkRules(spec.rules, dropped);
    if (rules !== spec.rules) next.rules = rules;
  }
  if (spec.tls !== undefined) {
    const tls = checkTls(spec.tls, object.metadata.namespace ?? '', dropped);
    if (tls !== spec.tls) next.tls = tls;
  }
  if (Object.keys(next).length === 0) return { dropped };
  const view: Record<string, unknown> = { ...spec };
  for (const [field, value] of Object.entries(next)) {
    if (value === undefined) delete view[field];
    else view[field] = value;
  }
  return { patch: { spec: Object.freeze(view) }, dropped };
}

function countPaths(rules: unknown): number {
  if (!Array.isArray(rules)) return 0;
  let count = 0;
  for (const rule of rules) {
    const paths = isRecord(rule) && isRecord(rule.http) ? rule.http.paths : undefined;
    if (Array.isArray(paths)) count += paths.length;
  }
  return count;
}

/** The rules with bad rules and paths left out: `rules` itself when nothing was. */
function checkRules(rules: unknown, dropped: Problem[]): unknown {
  if (rules === null) {
    dropped.push({ scope: 'path', reason: 'spec.rules is empty (null), not a list; ignored' });
    return [];
  }
  if (!Array.isArray(rules)) {
    dropped.push({ scope: 'path', reason: `spec.rules is ${quote(rules)}, not a list; every rule is dropped` });
    return [];
  }
  const kept: unknown[] = [];
  let changed = false;
  for (let r = 0; r < rules.length; r++) {
    const rule = checkRule(rules[r], `spec.rules[${r}]`, dropped);
    if (rule === undefined || rule !== rules[r]) changed = true;
    if (rule !== undefined) kept.push(rule);
  }
  return changed ? Object.freeze(kept) : rules;
}

/** Drops a rule with its paths: the reason goes to `dropped`. */
function dropRule(dropped: Problem[], reason: string): undefined {
  dropped.push({ scope: 'path', reason: `${reason}; the rule and its paths are dropped` });
  return undefined;
}

function checkRule(rule: unknown, where: string, dropped: Problem[]): unknown {
  if (!isRecord(rule)) return dropRule(dropped, `${where} is ${quote(rule)}, not a mapping`);
  if (rule.host !== undefined && rule.host !== '' && !isHost(rule.host)) return dropRule(dropped, `${where}.host ${quote(rule.host)} is not a valid host name`);
  const http = rule.http;
  if (http === undefined) return rule;
  if (http === null) {
    dropped.push({ scope: 'path', reason: `${where}.http is empty (null); ignored` });
    const rest = { ...rule };
    delete rest.http;
    return Object.freeze(rest);
  }
  if (!isRecord(http)) return dropRule(dropped, `${where}.http is ${quote(http)}, not a mapping`);
  if (!Array.isArray(http.paths)) return dropRule(dropped, `${where}.http.paths is ${quote(http.paths)}, not a list`);
  const paths: unknown[] = [];
  for (let p = 0; p < http.paths.length; p++) {
    const path: unknown = http.paths[p];
    const problem = pathProblem(path, `${where}.http.paths[${p}]`);
    if (problem === null) paths.push(path);
    else dropped.push({ scope: 'path', reason: `${problem}; the path is dropped` });
  }
  if (paths.length === http.paths.length) return rule;
  return Object.freeze({ ...rule, http: Object.freeze({ ...http, paths: Object.freeze(paths) }) });
}

function pathProblem(path: unknown, at: string): string | null {
  if (!isRecord(path)) return `${at} is ${quote(path)}, not a mapping`;
  const value = path.path ?? '/';
  if (typeof value === 'string' && value.length > MAX_PATH) return `${at}.path is ${value.length} characters long, over the limit of ${MAX_PATH}`;
  if (!isSafePath(value)) {
    return `${at}.path ${quote(value)} is not a safe URL path (it must start with '/' and hold no spaces, quotes, '#', brackets or control characters)`;
  }
  if (typeof path.pathType !== 'string' || !PATH_TYPES.has(path.pathType)) {
    return `${at}.pathType ${quote(path.pathType)} must be Exact, Prefix or ImplementationSpecific`;
  }
  return backendProblem(path.backend, `${at}.backend`);
}

function backendProblem(backend: unknown, where: string): string | null {
  if (!isRecord(backend)) return `${where} is ${quote(backend)}, not a mapping`;
  const service = backend.service;
  if (!isRecord(service)) return `${where}.service is missing (resource backends are not supported)`;
  if (!isDnsLabel(service.name)) return `${where}.service.name ${quote(service.name)} is not a valid service name`;
  const port = service.port;
  if (!isRecord(port) || (port.number === undefined && port.name === undefined)) return `${where}.service.port needs a number or a name`;
  if (port.number !== undefined && !isPort(port.number)) return `${where}.service.port.number ${quote(port.number)} is not a port number`;
  if (port.name !== undefined && !isPortName(port.name)) return `${where}.service.port.name ${quote(port.name)} is not a valid port name`;
  return null;
}

/** The TLS entries with bad entries and hosts left out: `tls` itself when nothing was. */
function checkTls(tls: unknown, namespace: string, dropped: Problem[]): unknown {
  if (tls === null) {
    dropped.push({ scope: 'tls', reason: 'spec.tls is empty (null), not a list; ignored' });
    return [];
  }
  if (!Array.isArray(tls)) {
    dropped.push({ scope: 'tls', reason: `spec.tls is ${quote(tls)}, not a list; TLS is dropped for every host` });
    return [];
  }
  let hosts = 0;
  for (const entry of tls) if (isRecord(entry) && Array.isArray(entry.hosts)) hosts += entry.hosts.length;
  if (hosts > MAX_TLS_HOSTS) {
    dropped.push({ scope: 'tls', reason: `spec.tls names ${hosts} hosts, over the limit of ${MAX_TLS_HOSTS}; TLS is dropped for every host` });
    return [];
  }
  const kept: unknown[] = [];
  let changed = false;
  for (let t = 0; t < tls.length; t++) {
    const entry = checkTlsEntry(tls[t], `spec.tls[${t}]`, namespace, dropped);
    if (entry === undefined || entry !== tls[t]) changed = true;
    if (entry !== undefined) kept.push(entry);
  }
  return changed ? Object.freeze(kept) : tls;
}

/** Drops a TLS entry: the reason goes to `dropped`. */
function dropTlsEntry(dropped: Problem[], reason: string): undefined {
  dropped.push({ scope: 'tls', reason: `${reason}; TLS is dropped for the hosts of this entry` });
  return undefined;
}

function checkTlsEntry(entry: unknown, where: string, namespace: string, dropped: Problem[]): unknown {
  if (!isRecord(entry)) return dropTlsEntry(dropped, `${where} is ${quote(entry)}, not a mapping`);
  if (entry.secretName !== undefined && !isDnsSubdomain(entry.secretName)) return dropTlsEntry(dropped, `${where}.secretName ${quote(entry.secretName)} is not a valid name`);
  // The certificate is written as <namespace>_<secret>.pem: a longer name no file system takes.
  if (typeof entry.secretName === 'string' && namespace.length + entry.secretName.length + 5 > MAX_FILE_NAME) {
    return dropTlsEntry(dropped, `${where}.secretName is ${entry.secretName.length} characters long; with the namespace, its certificate file name would be over ${MAX_FILE_NAME} characters`);
  }
  if (entry.hosts === undefined) return entry;
  if (!Array.isArray(entry.hosts)) return dropTlsEntry(dropped, `${where}.hosts is ${quote(entry.hosts)}, not a list`);
  const hosts = entry.hosts.filter((host: unknown, h: number) => {
    if (isHost(host)) return true;
    dropped.push({ scope: 'tls', reason: `${where}.hosts[${h}] ${quote(host)} is not a valid host name; TLS is dropped for it` });
    return false;
  });
  return hosts.length === entry.hosts.length ? entry : Object.freeze({ ...entry, hosts: Object.freeze(hosts) });
}

// Content comparisons that let the builder hand out the objects of the previous build: model
// objects that keep their identity while their content is unchanged are what the route index
// (routes known by identity), the slot file cache and the templates' `memo` blocks key on.
// Also decides whether a cached Ingress entry still fits the baseline's server slots.
import type { Backend, Certificate, Server } from './model.js';
import type { IngressEntry } from './ingress-entry.js';
import { sameOptions } from './ingress-options.js';
import type { RouteCandidate } from './route-index.js';

/** `next` with the route list and the backend objects of `prior` wherever their content is equal. */
export function keepUnchanged(prior: IngressEntry, next: IngressEntry): IngressEntry {
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

/**
 * An entry built from other baseline slots is still right if, for each of its backends, the
 * baseline now holds either the slots it was built from or the slots it ended with (assigning
 * slots again from its own result gives the same result).
 */
export function slotsStillValid(entry: IngressEntry, previous: ReadonlyMap<string, readonly string[]>): boolean {
  for (let i = 0; i < entry.backends.length; i++) {
    const backend = entry.backends[i] as Backend;
    const now = previous.get(backend.name);
    if (!sameSlots(now, entry.slotsFrom[i]) && !holdsSlots(now, backend.servers)) return false;
  }
  return true;
}

export function sameArray<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function sameNames(a: readonly Backend[], b: readonly Backend[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if ((a[i] as Backend).name !== (b[i] as Backend).name) return false;
  return true;
}

export function sameCertificates(a: readonly Certificate[], b: readonly Certificate[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Certificate;
    const y = b[i] as Certificate;
    if (x.name !== y.name || x.pem !== y.pem || !sameArray(x.hosts, y.hosts)) return false;
  }
  return true;
}

/**
 * `next` with the objects of `prior` wherever their content is equal (matched by name): `prior`
 * itself when every backend is equal, so that the lists and memo blocks keyed on it stay as they are.
 */
export function keepUnchangedBackends(prior: readonly Backend[] | undefined, next: Backend[]): Backend[] {
  if (prior === undefined || prior.length === 0) return next;
  let out = next;
  for (let i = 0; i < next.length; i++) {
    const backend = next[i] as Backend;
    const old = prior[i]?.name === backend.name ? prior[i] : prior.find((b) => b.name === backend.name);
    if (old === undefined || old === backend || !sameRouteBackend(old, backend)) continue;
    if (out === next) out = next.slice();
    out[i] = old;
  }
  return out.length === prior.length && out.every((b, i) => b === prior[i]) ? (prior as Backend[]) : out;
}

/** sameBackend, and the fields only route backends set (their filters as plain data: a different spelling only misses a reuse). */
function sameRouteBackend(a: Backend, b: Backend): boolean {
  if (a.serviceNamespace !== b.serviceNamespace || a.rateLimitTableSize !== b.rateLimitTableSize || a.checkInterval !== b.checkInterval) return false;
  if (a.gateway !== b.gateway && JSON.stringify(a.gateway) !== JSON.stringify(b.gateway)) return false;
  return sameBackend(a, b);
}

function sameBackend(a: Backend, b: Backend): boolean {
  if (a.name !== b.name || a.namespace !== b.namespace || a.ingress !== b.ingress || a.service !== b.service || a.port !== b.port || a.dns !== b.dns) return false;
  if (!sameOptions(a.options, b.options) || !sameOptions(a.ingressOptions, b.ingressOptions)) return false;
  if (a.servers.length !== b.servers.length) return false;
  for (let i = 0; i < a.servers.length; i++) {
    const x = a.servers[i] as Server;
    const y = b.servers[i] as Server;
    if (x.name !== y.name || x.address !== y.address || x.enabled !== y.enabled) return false;
  }
  return true;
}

function sameRoutes(a: readonly RouteCandidate[], b: readonly RouteCandidate[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as RouteCandidate;
    const y = b[i] as RouteCandidate;
    if (x.host !== y.host || x.path !== y.path || x.exact !== y.exact || x.backend !== y.backend || x.owner !== y.owner) return false;
    if (x.namespace !== y.namespace || x.created !== y.created) return false;
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

function sameSlots(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

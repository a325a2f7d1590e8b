// The routes of every served Ingress by host and by domain, kept up to date from the Ingress
// store's change journal, so an admission review asks "who owns these hosts?" at the cost of the
// hosts it names, not of the store. The decision itself is HostOwners' (host-owners.ts), run on
// the few routes that can affect the reviewed ones: those on the same hosts, and (when a
// wildcard is involved) those one label under the same domain. That set is closed under
// HostOwners' rules: a route's acceptance depends only on routes of its own host and domain.
import type { IndexedStore } from '../store/indexed-store.js';
import { describe, guardObject } from '../store/object-guard.js';
import type { KubeObject } from '../protocol.js';
import { compareClaimants, creationTime } from '../routing/claimant.js';
import { domainOf, hostLabel, HostOwners, isWildcard, type RouteCandidate } from '../routing/host-owners.js';
import { routeTables } from '../routing/route-index.js';
import { acceptsClass, type ClassPolicy } from '../routing/ingress-class.js';
import type { ModelOptions } from '../routing/model.js';

interface DomainGroup {
  readonly routes: Set<RouteCandidate>;
  wildcards: number;
}

const NO_ROUTES: readonly RouteCandidate[] = Object.freeze([]);

export class OwnershipIndex {
  readonly #options: ModelOptions;
  #store: IndexedStore | undefined;
  #generation = 0;
  #classKey: string | undefined;
  readonly #byKey = new Map<string, readonly RouteCandidate[]>();
  readonly #byHost = new Map<string, Set<RouteCandidate>>();
  readonly #byDomain = new Map<string, DomainGroup>();

  constructor(options: ModelOptions) {
    this.#options = options;
  }

  /** Ingresses with routes in the index. */
  get size(): number {
    return this.#byKey.size;
  }

  /**
   * Brings the index to the store's current content under `classes`: the keys changed since the
   * last refresh, or everything after a new store, a journal that no longer reaches back, or a
   * changed class policy.
   */
  refresh(store: IndexedStore | undefined, classes: ClassPolicy): void {
    const changed = store !== undefined && store === this.#store && classes.key === this.#classKey ? store.changedSince(this.#generation) : undefined;
    if (changed === undefined) {
      this.#clear();
      this.#store = store;
      this.#classKey = classes.key;
      if (store !== undefined) for (const key of store.keys()) this.#set(key, store.get(key), classes);
    } else {
      for (const key of new Set(changed)) this.#set(key, store?.get(key), classes);
    }
    this.#generation = store?.generation ?? 0;
  }

  /**
   * How `candidate` (the routes of the Ingress under `key`, replacing what the index holds for
   * that key) fares among the routes it meets, worded as the render words it: `refusals`, one
   * per route another namespace's host ownership refuses; `conflicts`, the render's other
   * warnings about its routes (a path an older Ingress of its own namespace already serves).
   */
  judge(key: string, candidate: readonly RouteCandidate[]): { readonly refusals: string[]; readonly conflicts: string[] } {
    const own = new Set(this.#byKey.get(key) ?? NO_ROUTES);
    const relevant = new Set<RouteCandidate>();
    const add = (routes: Iterable<RouteCandidate> | undefined): void => {
      for (const route of routes ?? []) if (!own.has(route)) relevant.add(route);
    };
    for (const route of candidate) {
      add(this.#byHost.get(route.host));
      const domain = domainOf(route.host);
      const group = domain === undefined ? undefined : this.#byDomain.get(domain);
      // Without a wildcard on either side the domain decides nothing.
      if (group !== undefined && (group.wildcards > 0 || isWildcard(route.host))) add(group.routes);
    }
    const mine = new Set(candidate);
    const met = [...relevant, ...candidate];
    const owners = new HostOwners();
    const refusals: string[] = [];
    for (const route of [...met].sort(compareClaimants)) {
      const holder = owners.claim(route);
      if (holder === undefined || !mine.has(route)) continue;
      const message =
        holder.host === route.host && basePath(holder) === basePath(route)
          ? `${route.owner}: route ${route.host}${route.path} is already served by ${holder.owner}; ignored`
          : `${route.owner}: route ${route.host}${route.path} is refused: ${hostLabel(holder.host)} belongs to namespace ${holder.namespace} (${holder.owner} claimed it first); ignored`;
      if (!refusals.includes(message)) refusals.push(message);
    }
    // The route tables of the routes met, built as the render builds them, for the rest.
    const conflicts: string[] = [];
    const prefix = candidate.length === 0 ? undefined : `${(candidate[0] as RouteCandidate).owner}: `;
    routeTables(met, (message) => {
      if (prefix !== undefined && message.startsWith(prefix) && !refusals.includes(message) && !conflicts.includes(message)) conflicts.push(message);
    });
    return { refusals, conflicts };
  }

  #set(key: string, ingress: KubeObject | undefined, classes: ClassPolicy): void {
    const before = this.#byKey.get(key);
    if (before !== undefined) {
      for (const route of before) this.#unindex(route);
      this.#byKey.delete(key);
    }
    if (ingress === undefined) return;
    const verdict = guardObject(ingress);
    if (!verdict.ok || !acceptsClass(verdict.object, classes)) return;
    const routes = routesOf(verdict.object, this.#options);
    if (routes.length === 0) return;
    this.#byKey.set(key, routes);
    for (const route of routes) this.#index(route);
  }

  #index(route: RouteCandidate): void {
    let hosts = this.#byHost.get(route.host);
    if (hosts === undefined) {
      hosts = new Set();
      this.#byHost.set(route.host, hosts);
    }
    hosts.add(route);
    const domain = domainOf(route.host);
    if (domain === undefined) return;
    let group = this.#byDomain.get(domain);
    if (group === undefined) {
      group = { routes: new Set(), wildcards: 0 };
      this.#byDomain.set(domain, group);
    }
    group.routes.add(route);
    if (isWildcard(route.host)) group.wildcards++;
  }

  #unindex(route: RouteCandidate): void {
    const hosts = this.#byHost.get(route.host);
    hosts?.delete(route);
    if (hosts?.size === 0) this.#byHost.delete(route.host);
    const domain = domainOf(route.host);
    const group = domain === undefined ? undefined : this.#byDomain.get(domain);
    if (group === undefined || domain === undefined) return;
    group.routes.delete(route);
    if (isWildcard(route.host)) group.wildcards--;
    if (group.routes.size === 0) this.#byDomain.delete(domain);
  }

  #clear(): void {
    this.#byKey.clear();
    this.#byHost.clear();
    this.#byDomain.clear();
  }
}

interface RuleSpec {
  rules?: { host?: string; http?: { paths?: { path?: string; pathType?: string; backend?: { service?: { name?: string; port?: { number?: number; name?: string } } } }[] } }[];
}

/**
 * The route candidates of an accepted Ingress view, as the routing model's Ingress entry makes
 * them (ingress-entry.ts): one per rule path, ranked by creation time (by name alone under
 * `routeOwnership: name`).
 */
export function routesOf(ingress: KubeObject, options: ModelOptions): RouteCandidate[] {
  const ns = ingress.metadata.namespace ?? 'default';
  const name = ingress.metadata.name;
  const owner = describe(ingress);
  const created = options.routeOwnership === 'oldest' ? creationTime(ingress) : 0;
  const routes: RouteCandidate[] = [];
  const rules = (ingress.spec as RuleSpec | undefined)?.rules;
  for (const rule of Array.isArray(rules) ? rules : []) {
    const paths = rule?.http?.paths;
    for (const p of Array.isArray(paths) ? paths : []) {
      if (typeof p !== 'object' || p === null) continue;
      const service = p.backend?.service;
      const port = service?.port?.number !== undefined ? String(service.port.number) : String(service?.port?.name);
      routes.push({ owner, namespace: ns, created, host: rule.host ?? '', path: p.path ?? '/', exact: p.pathType === 'Exact', backend: `ing_${ns}_${name}_${String(service?.name)}_${port}` });
    }
  }
  return routes;
}

/** The path a route matches on (as route-index.ts has it): a Prefix path's trailing slashes do not count. */
function basePath(route: RouteCandidate): string {
  return route.exact || route.path === '/' ? route.path : route.path.replace(/\/+$/, '') || '/';
}

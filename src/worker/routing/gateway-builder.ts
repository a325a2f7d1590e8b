// Builds the Gateway API part of the routing model from the guarded stores: our Gateways and
// their binds (gateway-attachment.ts), each HTTPRoute attached to the listeners that admit it,
// its backends (gateway-backends.ts) and its match lines (gateway-lines.ts), grouped into one
// frontend per bind; plus the acceptance results. Rebuilt only when a store it reads, or the
// baseline's slots of its backends, changed; otherwise the last result and its warnings are
// replayed. A route whose match lines would be over MAX_ROUTE_LINES is not served, with a warning.
// Served routes are measured for the budgets they share with Ingresses (route-budget.ts); a build
// with the budgets' limits leaves out the routes given up and serves starved ones without servers.
import type { KubeObject } from '../protocol.js';
import type { IndexedStore } from '../store/indexed-store.js';
import { describe } from '../store/object-guard.js';
import { creationTime, type Claimant } from './claimant.js';
import { attachRoute, bindGateways, listenerStatuses, ourClasses, type BoundListener, type GatewayEntry, type ParentResult } from './gateway-attachment.js';
import { routeBackends, type MatchSpec, type RuleSpec } from './gateway-backends.js';
import { compareHostnames, hostCondition } from './gateway-hostnames.js';
import type { LineCandidate } from './gateway-lines.js';
import { claimantOf, HostOwnership } from './gateway-ownership.js';
import { frontendRoutes } from './gateway-routes.js';
import { RouteBackendCache } from './gateway-route-cache.js';
import { EMPTY_GATEWAY_MODEL, type GatewayCertificate, type GatewayFrontend, type GatewayModel, type GatewayTls, type GatewayOptions, type GatewayRedirect, type RouteStatus } from './gateway-model.js';
import type { Backend, ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';
import { RecordedReads, type LogEntry } from './recorded-reads.js';
import { checkedSlots, limitsKey, NO_ROUTE_LIMITS, routeOutputBytes, type RouteBudgetItem, type RouteLimits } from './route-budget.js';
import { granted } from './reference-grants.js';
import { parseSlotFile, slotLine } from './server-slots.js';

/** Match lines one route may add (hostnames x rules x matches x parents). */
export const MAX_ROUTE_LINES = 1024;

export interface GatewayBuild {
  readonly model: GatewayModel;
  /** The route backends, sorted by name. */
  readonly backends: readonly Backend[];
  /** Their slot-file lines. */
  readonly slotText: string;
}

const EMPTY_BUILD: GatewayBuild = { model: EMPTY_GATEWAY_MODEL, backends: [], slotText: '' };

interface Run {
  readonly key: string;
  /** The stores it read: generations count within one store, so other store objects (a new provider) start over. */
  readonly stores: readonly (IndexedStore | undefined)[];
  readonly build: GatewayBuild;
  readonly log: readonly LogEntry[];
  /** The served routes, as the budgets see them (route-budget.ts). */
  readonly items: readonly RouteBudgetItem[];
}

export class GatewayModelBuilder {
  readonly #model: ModelOptions;
  readonly #options: GatewayOptions;
  /** The last build without route limits (the one `measure` reads), and the last with some. */
  #unlimited: Run | undefined;
  #limited: Run | undefined;
  readonly #routes = new RouteBackendCache();
  /** The server-less copy of each starved route backend, kept while the backend lives. */
  readonly #emptied = new WeakMap<Backend, Backend>();

  constructor(model: ModelOptions, options: GatewayOptions) {
    this.#model = model;
    this.#options = options;
  }

  /** The routes a build without limits serves, for the budgets; the same array while they are unchanged. */
  measure(source: ModelSource, slotText: string): readonly RouteBudgetItem[] {
    return this.#run(source, slotText, NO_ROUTE_LIMITS).items;
  }

  /** `slotText`: the baseline's slot-file lines of route backends; `limits`: what the budgets decided (route-budget.ts). */
  build(source: ModelSource, slotText: string, warn: (message: string) => void, limits: RouteLimits = NO_ROUTE_LIMITS): GatewayBuild {
    const run = this.#run(source, slotText, limits);
    for (const item of run.log) {
      if ('warn' in item) warn(item.warn);
      else source.reject(item.reject);
    }
    return run.build;
  }

  /** The build for `limits`, computed again only when a store it reads, the baseline's slots or the limits changed. */
  #run(source: ModelSource, slotText: string, limits: RouteLimits): Run {
    const { services, endpointSlices, ingresses, ingressClasses } = this.#model.stores;
    const names = [...Object.values(this.#options.stores), services, endpointSlices, ingresses, ingressClasses];
    const base = `${names.map((n) => `${n}:${source.store(n)?.generation ?? -1}`).join(',')}|${slotText}`;
    const unlimited = limits.shed.size === 0 && limits.starved.size === 0;
    const key = unlimited ? base : `${base}|${limitsKey(limits)}`;
    const cached = unlimited ? this.#unlimited : this.#limited;
    const stores = names.map((n) => source.store(n));
    if (cached?.key === key && stores.every((store, i) => store === cached.stores[i])) return cached;
    const reads = new RecordedReads(source);
    // A limited build follows the unlimited one of the same render, whose route backends it reuses.
    if (unlimited) this.#routes.begin(source.store(this.#options.stores.referenceGrants)?.generation ?? -1, slotText);
    const items: RouteBudgetItem[] = [];
    const build = this.#compute(reads, parseSlotFile(slotText), limits, items);
    this.#routes.end(build.slotText);
    const previous = this.#unlimited?.items;
    const run: Run = { key, stores, build, log: reads.log, items: previous !== undefined && sameItems(previous, items) ? previous : items };
    if (unlimited) this.#unlimited = run;
    else this.#limited = run;
    return run;
  }

  /** A starved route's backend: no servers (its requests answer 503 until the slots fit again). */
  #starve(backend: Backend): Backend {
    let emptied = this.#emptied.get(backend);
    if (emptied === undefined) {
      emptied = Object.freeze({ ...backend, servers: Object.freeze([]) });
      this.#emptied.set(backend, emptied);
    }
    return emptied;
  }

  #compute(reads: RecordedReads, slots: ReadonlyMap<string, readonly string[]>, limits: RouteLimits, items: RouteBudgetItem[]): GatewayBuild {
    const options = this.#options;
    const classes = ourClasses(reads, options);
    const classStatus = [...classes].sort().map((name) => ({
      name,
      generation: generationOf(reads.getSingle(options.stores.gatewayClasses, [name])),
      conditions: [{ type: 'Accepted', status: 'True' as const, reason: 'Accepted' }],
    }));
    if (classes.size === 0) return classStatus.length === 0 ? EMPTY_BUILD : { ...EMPTY_BUILD, model: { ...EMPTY_GATEWAY_MODEL, status: { ...EMPTY_GATEWAY_MODEL.status, gatewayClasses: classStatus } } };
    const entries = bindGateways(reads, options, classes);
    const gateways = new Map<string, GatewayEntry>(entries.map((e) => [`${e.gateway.metadata.namespace ?? ''}/${e.gateway.metadata.name}`, e]));
    // Frontends: the bound listeners of each bind, most specific hostname first.
    const byBind = new Map<string, BoundListener[]>();
    for (const entry of entries) {
      for (const listener of entry.bound.values()) {
        const list = byBind.get(listener.bind);
        if (list === undefined) byBind.set(listener.bind, [listener]);
        else list.push(listener);
      }
    }
    const listenerTerm = new Map<BoundListener, string>();
    const listenerKey = new Map<BoundListener, string>();
    for (const listeners of byBind.values()) {
      listeners.sort((a, b) => compareHostnames(a.spec.hostname ?? '', b.spec.hostname ?? ''));
      listeners.forEach((l, i) => listenerTerm.set(l, listeners.length > 1 ? `{ var(txn.gwl) -m int eq ${i} }` : ''));
      listeners.forEach((l, i) => listenerKey.set(l, listeners.length > 1 ? `${i}@` : ''));
    }
    const candidates = new Map<string, LineCandidate[]>();
    const backends = new Map<string, Backend>();
    const routeStatus: RouteStatus[] = [];
    const grants = (from: string, to: string, service: string): boolean => granted(reads, options.stores.referenceGrants, 'HTTPRoute', from, 'Service', to, service);
    const routes = [...reads.list(options.stores.httpRoutes)].sort((a, b) => creationTime(a) - creationTime(b) || keyOf(a).localeCompare(keyOf(b)));
    // Attach every route first: host ownership is decided over all claims at once.
    const ownership = new HostOwnership(reads, this.#model);
    const attachedRoutes = routes.map((route) => ({ route, parents: attachRoute(route, gateways, reads, options) }));
    for (const { route, parents } of attachedRoutes) {
      const claimant = claimantOf(route, 'HTTPRoute');
      for (const parent of parents) for (const a of parent.attachments) for (const host of a.hostnames) if (host !== '') ownership.claim(host, claimant);
    }
    for (const { route, parents: attachedParents } of attachedRoutes) {
      const parents = attachedParents.map((parent) => keepOwnedHosts(parent, route, ownership, reads));
      if (parents.length === 0) continue;
      const attached = parents.flatMap((p) => p.attachments);
      for (const a of attached) a.listener.attached++;
      for (const u of parents.flatMap((p) => p.unserved)) u.attached++;
      const built = this.#routes.get(route, reads, this.#model, () => routeBackends(route, reads, this.#model, grants, (name) => slots.get(name)));
      const claimant: Claimant = { owner: keyOf(route), namespace: route.metadata.namespace ?? '', created: creationTime(route) };
      const rules = (route.spec as { rules?: (RuleSpec | null)[] }).rules ?? [];
      const own: [string, LineCandidate][] = [];
      for (const { listener, hostnames } of attached) {
        for (const hostname of hostnames) {
          rules.forEach((rule, r) => {
            const targets = built.rules[r];
            if (rule === null || targets === undefined) return;
            const matches: MatchSpec[] = rule.matches === undefined || rule.matches.length === 0 ? [{}] : rule.matches;
            matches.forEach((match, m) => {
              const listenerScheme = listener.spec.protocol === 'HTTPS' ? ('https' as const) : ('http' as const);
              own.push([listener.bind, { hostname, listenerTerm: listenerTerm.get(listener) ?? '', listenerKey: listenerKey.get(listener) ?? '', listenerPort: listener.spec.port, listenerScheme, match, route: claimant, rule: r, matchIndex: m, targets }]);
            });
          });
        }
      }
      let refused: string | undefined;
      if (own.length > MAX_ROUTE_LINES) {
        reads.warn(`${describe(route)}: would add ${own.length} match lines (hostnames x rules x matches x listeners), over the limit of ${MAX_ROUTE_LINES}; it is not served`);
        refused = `over ${MAX_ROUTE_LINES} match lines`;
      } else if (attached.length > 0) {
        const key = keyOf(route);
        const lineSizes = own.map(([, c]) => c.hostname.length + JSON.stringify(c.match).length);
        items.push({ kind: 'HTTPRoute', key, claimant: claimantOf(route, 'HTTPRoute'), outputBytes: routeOutputBytes(built.backends, lineSizes), slots: checkedSlots(built.backends) });
        if (limits.shed.has(key)) refused = "over its namespace's share of the output budget";
      }
      if (refused !== undefined) {
        for (const a of attached) a.listener.attached--;
        for (const u of parents.flatMap((p) => p.unserved)) u.attached--;
      } else {
        for (const [bind, candidate] of own) {
          const list = candidates.get(bind);
          if (list === undefined) candidates.set(bind, [candidate]);
          else list.push(candidate);
        }
        const starved = limits.starved.has(keyOf(route));
        if (attached.length > 0) for (const backend of built.backends) backends.set(backend.name, starved ? this.#starve(backend) : backend);
      }
      routeStatus.push({
        namespace: route.metadata.namespace ?? '',
        name: route.metadata.name,
        generation: generationOf(route),
        parents: parents.map((p) => ({
          gateway: p.gateway,
          sectionName: p.sectionName,
          port: p.port,
          conditions: [refused === undefined ? p.accepted : { type: 'Accepted', status: 'False', reason: 'UnsupportedValue', message: refused }, built.resolvedRefs],
        })),
      });
    }
    const redirects = new Map<string, GatewayRedirect>();
    const redirectName = (r: Omit<GatewayRedirect, 'name'>): string => {
      const id = `${r.code} ${r.location}`;
      let found = redirects.get(id);
      if (found === undefined) {
        found = { name: `gwr_${redirects.size}`, ...r };
        redirects.set(id, found);
      }
      return found.name;
    };
    const certificates = new Map<string, GatewayCertificate>();
    const frontends: GatewayFrontend[] = [...byBind.keys()].sort().map((bind, i) => {
      const listeners = byBind.get(bind) ?? [];
      const https = listeners[0]?.spec.protocol === 'HTTPS';
      for (const l of listeners) if (l.certificate !== undefined) certificates.set(l.certificate.name, l.certificate);
      return {
        ...frontendRoutes(`gateway-${i}-`, candidates.get(bind) ?? [], redirectName),
        name: `gw_${i}`,
        bind,
        scheme: https ? ('https' as const) : ('http' as const),
        tls: https ? tlsOf(`gateway-${i}-crt-list.txt`, listeners) : undefined,
        listeners: listeners.length < 2 ? [] : listeners.map((l, index) => ({ index, hostCondition: hostCondition(l.spec.hostname ?? '') })),
      };
    });
    const sorted = [...backends.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const slotText = sorted.map((b) => slotLine(b.name, b.servers.map((s) => (s.enabled ? s.address : '')))).join('');
    const status = {
      gatewayClasses: classStatus,
      gateways: entries.map((e) => ({
        namespace: e.gateway.metadata.namespace ?? '',
        name: e.gateway.metadata.name,
        generation: generationOf(e.gateway),
        conditions: e.conditions,
        listeners: listenerStatuses(e),
      })),
      httpRoutes: routeStatus,
    };
    const sortedCertificates = [...certificates.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { model: { frontends, certificates: sortedCertificates, redirects: [...redirects.values()], status }, backends: sorted, slotText };
  }
}

/**
 * The crt-list of an HTTPS bind: the certificate of a listener without hostname first (the
 * default, for any SNI), then each listener's certificate for its hostname, most specific first.
 * With no hostname-less listener the bind is strict-sni.
 */
function tlsOf(crtList: string, listeners: readonly BoundListener[]): GatewayTls {
  const entries: { certificate: string; filter: string }[] = [];
  const catchAll = listeners.find((l) => (l.spec.hostname ?? '') === '');
  if (catchAll?.certificate !== undefined) entries.push({ certificate: catchAll.certificate.name, filter: '' });
  for (const l of listeners) if (l !== catchAll && l.certificate !== undefined) entries.push({ certificate: l.certificate.name, filter: l.spec.hostname ?? '' });
  return { crtList, entries, strictSni: catchAll === undefined };
}

/** The parent without the hostnames another namespace owns; not Accepted when none is left. */
export function keepOwnedHosts(parent: ParentResult, route: KubeObject, ownership: HostOwnership, reads: RecordedReads): ParentResult {
  if (parent.attachments.length === 0) return parent;
  const ns = route.metadata.namespace ?? '';
  const attachments = parent.attachments.filter((a) => {
    a.hostnames = a.hostnames.filter((host) => {
      const owner = host === '' ? undefined : ownership.otherOwner(host, ns);
      if (owner !== undefined) reads.warn(`${describe(route)}: hostname ${host} belongs to ${owner.owner}, which claimed it first; the route does not answer it`);
      return owner === undefined;
    });
    return a.hostnames.length > 0;
  });
  if (attachments.length > 0) return { ...parent, attachments };
  return { ...parent, attachments, accepted: { type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners', message: 'every hostname of the route belongs to another namespace' } };
}

function sameItems(a: readonly RouteBudgetItem[], b: readonly RouteBudgetItem[]): boolean {
  return a.length === b.length && a.every((x, i) => {
    const y = b[i] as RouteBudgetItem;
    return x.key === y.key && x.outputBytes === y.outputBytes && x.slots === y.slots && x.claimant.created === y.claimant.created;
  });
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

function generationOf(object: KubeObject | undefined): number | undefined {
  const generation = (object?.metadata as { generation?: unknown } | undefined)?.generation;
  return typeof generation === 'number' ? generation : undefined;
}

// Builds the Gateway API part of the routing model from the guarded stores: our Gateways and
// their binds (gateway-attachment.ts), each HTTPRoute attached to the listeners that admit it,
// its backends (gateway-backends.ts) and its match lines (gateway-lines.ts), grouped into one
// frontend per bind; plus the acceptance results. When no store it reads, nor the baseline's
// slots, changed, the last result and its warnings are replayed. Otherwise it builds route by
// route, as the Ingress builder does: the context (gateway-context.ts) is kept while the few
// stores it reads are unchanged, each route's parts (gateway-route-entries.ts) while what they
// read is (EndpointSlice and Service changes reach the routes that read them through recorded
// reads and entry dependents), and the orders and tables of the result are patched where they
// changed: each bind gets the line candidates it gained and lost (gateway-served-lines.ts) and
// patches its order and route tables (gateway-route-cache.ts), and the backend list its places
// (gateway-backend-list.ts). Every shortcut gives what a cold
// build gives, or is not taken. A route whose match lines would be over MAX_ROUTE_LINES is not
// served, with a warning. Served routes are measured for the budgets they share with Ingresses
// (route-budget.ts); a build with the budgets' limits leaves out the routes given up and serves
// starved ones without servers.
import type { KubeObject } from '../protocol.js';
import type { IndexedStore } from '../store/indexed-store.js';
import { describe } from '../store/object-guard.js';
import { listenerStatuses, type Attachment, type BoundListener, type ParentResult } from './gateway-attachment.js';
import { GatewayBackendList } from './gateway-backend-list.js';
import { gatewayContext, generationOf, ingressClaims, type GatewayContext, type IngressClaims } from './gateway-context.js';
import { hostCondition } from './gateway-hostnames.js';
import type { HostOwnership } from './gateway-ownership.js';
import { attachEntry, backendsOf, claimHosts, linesOf, MAX_ROUTE_LINES, type RouteEntry } from './gateway-route-entries.js';
import { FrontendRouteCache, RouteOrder } from './gateway-route-cache.js';
import { RouteAttacher } from './gateway-route-attacher.js';
import { ServedLines } from './gateway-served-lines.js';
import { changedRoutes, fullPass, patchedPass, type RouteOutcome, type RoutePass, type RouteVisit } from './gateway-route-pass.js';
import { EMPTY_GATEWAY_MODEL, type GatewayCertificate, type GatewayFrontend, type GatewayModel, type GatewayTls, type GatewayOptions, type GatewayRedirect, type RouteStatus } from './gateway-model.js';
import type { Backend, ModelOptions } from './model.js';
import type { ModelSource } from './model-source.js';
import { EntryDependents } from './entry-dependents.js';
import { RecordedReads, type LogEntry } from './recorded-reads.js';
import { limitsKey, NO_ROUTE_LIMITS, type RouteBudgetItem, type RouteLimits } from './route-budget.js';
import { backendSlots, parseSlotFile } from './server-slots.js';

/** Backends built in one build that look up their baseline slots line by line. */
const MAX_SLOT_LOOKUPS = 16;

export { MAX_ROUTE_LINES } from './gateway-route-entries.js';

export interface GatewayBuild {
  readonly model: GatewayModel;
  /** The route backends, sorted by name. */
  readonly backends: readonly Backend[];
  /** Their slot-file lines. */
  readonly slotText: string;
}

/** The served routes of a build, as the budgets see them; `changed`, when the list is the last unlimited build's but at these places. */
interface BuildItems {
  list: readonly RouteBudgetItem[];
  changed: readonly number[] | undefined;
}

const EMPTY_BUILD: GatewayBuild = { model: EMPTY_GATEWAY_MODEL, backends: [], slotText: '' };

interface Run {
  readonly key: string;
  /** The baseline's slot text it was built on. */
  readonly slotText: string;
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
  /** What the routes contributed to the last build (gateway-route-entries.ts), attached route by route (gateway-route-attacher.ts). */
  readonly #attacher = new RouteAttacher();
  #context: GatewayContext | undefined;
  /** The ownership of the last build, over the Ingress claims and every route's. */
  #ownership: { readonly context: GatewayContext; readonly base: HostOwnership; readonly ownership: HostOwnership } | undefined;
  #ingressClaims: IngressClaims | undefined;
  /** The route backends' reads of Services, EndpointSlices and ReferenceGrants. */
  #dependents = new EntryDependents();
  /** The slot text of the last build: while the baseline's is this, kept backends hold its slots. */
  #ownSlots: string | undefined;
  readonly #order = new RouteOrder();
  readonly #frontends = new FrontendRouteCache();
  readonly #backendList = new GatewayBackendList();
  /** The server-less copies of a starved route's backends, kept while its backends live. */
  readonly #emptied = new WeakMap<object, readonly Backend[]>();
  /** The lines each route served in the last build (what the route cache holds of it). */
  readonly #served = new ServedLines();
  /** The last per-route pass without limits, patched by the next while the routes and their parts mostly are the same. */
  #pass: RoutePass | undefined;

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
    const base = names.map((n) => `${n}:${source.store(n)?.generation ?? -1}`).join(',');
    const unlimited = limits.shed.size === 0 && limits.starved.size === 0;
    const key = unlimited ? base : `${base}|${limitsKey(limits)}`;
    const cached = unlimited ? this.#unlimited : this.#limited;
    const stores = names.map((n) => source.store(n));
    if (cached?.key === key && cached.slotText === slotText && stores.every((store, i) => store === cached.stores[i])) return cached;
    const reads = new RecordedReads(source);
    const items: BuildItems = { list: [], changed: undefined };
    // A limited build follows the unlimited one of the same render, whose route backends it reuses.
    const build = this.#compute(reads, source, slotText, unlimited, limits, items);
    this.#ownSlots = build.slotText;
    const previous = this.#unlimited?.items;
    const same = previous !== undefined && (items.changed === undefined ? sameItems(previous, items.list) : previous.length === items.list.length && items.changed.every((i) => sameItem(previous[i] as RouteBudgetItem, items.list[i] as RouteBudgetItem)));
    const run: Run = { key, slotText, stores, build, log: reads.log, items: same ? previous : items.list };
    if (unlimited) this.#unlimited = run;
    else this.#limited = run;
    return run;
  }

  /**
   * The routes whose backends' lines differ between the baseline's slot text and this builder's
   * own last one (an endpoint change the endpoint lane applied, say); undefined when that cannot
   * be told line by line, and every route backend is built again.
   */
  #slotChanges(slotText: string): Set<string> | undefined {
    const own = this.#ownSlots;
    if (own === undefined) return undefined;
    if (slotText === own) return new Set();
    const before = own.split('\n');
    const after = slotText.split('\n');
    if (before.length !== after.length) return undefined;
    let owners: Map<string, string> | undefined;
    const keys = new Set<string>();
    for (let i = 0; i < before.length; i++) {
      const a = before[i] as string;
      const b = after[i] as string;
      if (a === b) continue;
      const name = a.slice(0, a.indexOf(' '));
      if (name === '' || !b.startsWith(`${name} `)) return undefined;
      owners ??= this.#backendOwners();
      const key = owners.get(name);
      if (key === undefined) return undefined;
      keys.add(key);
    }
    return keys;
  }

  /** The route of each backend of the kept entries, by backend name. */
  #backendOwners(): Map<string, string> {
    const owners = new Map<string, string>();
    for (const entry of this.#attacher.entries.values()) for (const backend of entry.backends?.built.backends ?? []) owners.set(backend.name, entry.key);
    return owners;
  }

  /** A starved route's backends: no servers (its requests answer 503 until the slots fit again), the same array while its backends are. */
  #starved(backends: NonNullable<RouteEntry['backends']>): readonly Backend[] {
    let emptied = this.#emptied.get(backends);
    if (emptied === undefined) {
      emptied = backends.built.backends.map((backend) => Object.freeze({ ...backend, servers: Object.freeze([]) }));
      this.#emptied.set(backends, emptied);
    }
    return emptied;
  }

  #compute(reads: RecordedReads, source: ModelSource, slotText: string, unlimited: boolean, limits: RouteLimits, items: BuildItems): GatewayBuild {
    const options = this.#options;
    const context = (this.#context = gatewayContext(this.#context, source, options));
    reads.log.push(...context.log);
    const { classStatus } = context;
    const claims = context.classes.size === 0 ? undefined : (this.#ingressClaims = ingressClaims(this.#ingressClaims, source, this.#model));
    if (claims !== undefined) reads.log.push(...claims.log);
    if (claims === undefined) {
      this.#attacher.clear();
      this.#served.clear();
      this.#frontends.clear();
      this.#dependents = new EntryDependents();
      this.#pass = undefined;
      return classStatus.length === 0 ? EMPTY_BUILD : { ...EMPTY_BUILD, model: { ...EMPTY_GATEWAY_MODEL, status: { ...EMPTY_GATEWAY_MODEL.status, gatewayClasses: classStatus } } };
    }
    // Route backends are kept while the Services, EndpointSlices and ReferenceGrants they read
    // are unchanged, and their lines of the baseline's slot file are this builder's own last ones.
    const dirty = this.#dependents.invalidate(source, [this.#model.stores.services, this.#model.stores.endpointSlices, options.stores.referenceGrants]);
    const moved = unlimited ? this.#slotChanges(slotText) : new Set<string>();
    const keepBackends = dirty !== undefined && moved !== undefined;
    for (const key of moved ?? []) dirty?.add(key);
    // A few backends look their lines up; more parse the whole file once.
    let parsed: ReadonlyMap<string, readonly string[]> | undefined;
    let lookups = 0;
    // The builder's own last slot text (only the backend list makes one that is not empty): each backend's line is known without a search.
    const own = slotText !== '' && slotText === this.#ownSlots;
    const slots = (name: string): readonly string[] | undefined => {
      const known = own ? this.#backendList.slotsOf(name) : null;
      if (known !== null) return known;
      if (parsed === undefined && ++lookups <= MAX_SLOT_LOOKUPS) return backendSlots(slotText, name);
      return (parsed ??= parseSlotFile(slotText)).get(name);
    };
    // Attach every route first (only those that changed, when the rest are as before): host ownership is decided over all claims at once.
    const order = this.#order.sorted(reads.list(options.stores.httpRoutes));
    const step = this.#attacher.step({ order, indexOf: (key) => this.#order.indexOf(key), context, keepBackends, dirty, dependents: this.#dependents, attach: (route) => attachEntry(route, context, source, options) });
    const { attached, prior } = step;
    for (const item of step.log) reads.log.push(item);
    const claimsChanged = step.claimsChanged || this.#ownership === undefined || this.#ownership.context !== context || this.#ownership.base !== claims.ownership;
    if (claimsChanged) {
      const ownership = claims.ownership.fork();
      for (const entry of attached) claimHosts(entry, ownership);
      this.#ownership = { context, base: claims.ownership, ownership };
    }
    const ownership = (this.#ownership as { ownership: HostOwnership }).ownership;
    // What each bind gained and lost since the last build, from the routes whose served lines changed.
    const visit = (entry: RouteEntry): RouteOutcome => {
      const { route, key } = entry;
      if (entry.owned?.ownership !== ownership) {
        const ownReads = new RecordedReads(source);
        const parents = entry.attached.map((parent) => keepOwnedHosts(parent, route, ownership, ownReads));
        entry.owned = { ownership, parents, attachments: parents.flatMap((p) => p.attachments), unserved: parents.flatMap((p) => p.unserved), log: ownReads.log };
      }
      if (entry.backends === undefined) {
        entry.backends = backendsOf(route, source, this.#model, options, slots, prior.get(key));
        this.#dependents.register({ key, deps: entry.backends.deps });
      }
      if (entry.lines?.from.owned !== entry.owned || entry.lines.from.backends !== entry.backends) entry.lines = linesOf(entry);
      const { owned, lines, backends } = entry;
      let refused: string | undefined;
      if (lines.tooMany) refused = `over ${MAX_ROUTE_LINES} match lines`;
      else if (lines.item !== undefined && limits.shed.has(key)) refused = "over its namespace's share of the output budget";
      const servedBackends = refused === undefined && owned.attachments.length > 0 && backends.built.backends.length > 0 ? (limits.starved.has(key) ? this.#starved(backends) : backends.built.backends) : undefined;
      const status = entry.status;
      if (status === undefined || status.refused !== refused || status.from !== lines) entry.status = { refused, from: lines, status: statusOf(entry, refused) };
      return { item: lines.tooMany ? undefined : lines.item, served: servedBackends, counted: refused === undefined };
    };
    // Without limits, the last such pass patched at the routes whose parts changed (gateway-route-pass.ts).
    const changed = unlimited ? changedRoutes(this.#pass, attached, context, ownership, step.patch) : undefined;
    const patched = changed === undefined ? undefined : patchedPass(this.#pass as RoutePass, attached, changed, visit, this.#served);
    const pass = patched ?? fullPass(attached, context, ownership, visit, this.#served);
    this.#pass = unlimited ? pass : undefined;
    for (const item of pass.log) reads.log.push(item);
    items.list = pass.items;
    // A patched pass is the last one (whose items the last unlimited run holds, or equal ones) but at the changed routes' items.
    if (patched !== undefined) items.changed = changed?.map((i) => (patched.visits[i] as RouteVisit).item).filter((i) => i >= 0);
    const { served, routeStatus } = pass;
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
    const frontends: GatewayFrontend[] = [...context.byBind.keys()].sort().map((bind, i) => {
      const listeners = context.byBind.get(bind) ?? [];
      const https = listeners[0]?.spec.protocol === 'HTTPS';
      for (const l of listeners) if (l.certificate !== undefined) certificates.set(l.certificate.name, l.certificate);
      return {
        ...this.#frontends.routes(bind, `gateway-${i}-`, this.#served.change(bind), () => this.#served.all(bind, attached.map((e) => e.key)), redirectName),
        name: `gw_${i}`,
        bind,
        scheme: https ? ('https' as const) : ('http' as const),
        tls: https ? tlsOf(`gateway-${i}-crt-list.txt`, listeners) : undefined,
        listeners: listeners.length < 2 ? [] : listeners.map((l, index) => ({ index, hostCondition: hostCondition(l.spec.hostname ?? '') })),
      };
    });
    this.#frontends.keep(context.byBind.keys());
    // A patched pass's served lists are the last call's (the last pass's) but at the changed routes' places.
    const servedAt = patched === undefined ? undefined : changed?.map((i) => (patched.visits[i] as RouteVisit).served).filter((i) => i >= 0);
    const { sorted, slotText: ownSlots } = this.#backendList.of(served, servedAt);
    const status = {
      gatewayClasses: classStatus,
      gateways: context.entries.map((e) => ({
        namespace: e.gateway.metadata.namespace ?? '',
        name: e.gateway.metadata.name,
        generation: generationOf(e.gateway.metadata),
        conditions: e.conditions,
        listeners: listenerStatuses(e),
      })),
      httpRoutes: routeStatus,
    };
    const sortedCertificates = [...certificates.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { model: { frontends, certificates: sortedCertificates, redirects: [...redirects.values()], status }, backends: sorted, slotText: ownSlots };
  }
}

/** A route's status: its parents' acceptance (or why it is refused) and ResolvedRefs. */
function statusOf(entry: RouteEntry, refused: string | undefined): RouteStatus {
  const { route } = entry;
  const owned = entry.owned as NonNullable<RouteEntry['owned']>;
  const built = (entry.backends as NonNullable<RouteEntry['backends']>).built;
  return {
    namespace: route.metadata.namespace ?? '',
    name: route.metadata.name,
    generation: generationOf(route.metadata),
    parents: owned.parents.map((p) => ({
      gateway: p.gateway,
      sectionName: p.sectionName,
      port: p.port,
      conditions: [refused === undefined ? p.accepted : { type: 'Accepted', status: 'False', reason: 'UnsupportedValue', message: refused }, built.resolvedRefs],
    })),
  };
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

/** The parent without the hostnames another namespace owns (its attachments are left as they are); not Accepted when none is left. */
export function keepOwnedHosts(parent: ParentResult, route: KubeObject, ownership: HostOwnership, reads: RecordedReads): ParentResult {
  if (parent.attachments.length === 0) return parent;
  const ns = route.metadata.namespace ?? '';
  const attachments: Attachment[] = [];
  for (const a of parent.attachments) {
    const hostnames = a.hostnames.filter((host) => {
      const owner = host === '' ? undefined : ownership.otherOwner(host, ns);
      if (owner !== undefined) reads.warn(`${describe(route)}: hostname ${host} belongs to ${owner.owner}, which claimed it first; the route does not answer it`);
      return owner === undefined;
    });
    if (hostnames.length === 0) continue;
    attachments.push(hostnames.length === a.hostnames.length ? a : { listener: a.listener, hostnames });
  }
  if (attachments.length > 0) return { ...parent, attachments };
  return { ...parent, attachments, accepted: { type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners', message: 'every hostname of the route belongs to another namespace' } };
}

function sameItems(a: readonly RouteBudgetItem[], b: readonly RouteBudgetItem[]): boolean {
  return a.length === b.length && a.every((x, i) => sameItem(x, b[i] as RouteBudgetItem));
}

function sameItem(x: RouteBudgetItem, y: RouteBudgetItem): boolean {
  return x.key === y.key && x.outputBytes === y.outputBytes && x.slots === y.slots && x.claimant.created === y.claimant.created;
}



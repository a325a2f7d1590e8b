// The routing model builder: one per worker and template set. It caches what each accepted
// Ingress contributed and computes again only what the stores' change journals invalidate, so a
// small store change costs little; the class doc states the contract with a cold build.
import { compareKeys, objectKey } from '../store/indexed-store.js';
import type { KubeObject, RenderBaseline } from '../protocol.js';
import { keepUnchanged, sameArray, sameCertificates, sameNames, slotsStillValid } from './entry-compare.js';
import { BackendOrder } from './backend-order.js';
import { quickWalk, type LastWalk } from './quick-walk.js';
import { EMPTY_GATEWAY_MODEL } from './gateway-model.js';
import { acceptsClass, classPolicy } from './ingress-class.js';
import { HeldClaims } from './held-claims.js';
import { hostFallbacks, namespaceDefaults, sameFallbacks, type HostFallbacks } from './host-fallback.js';
import { replayNotices, type Notice, type Warn } from './findings.js';
import { computeEntry, replayEntry, slotsOf, type IngressEntry } from './ingress-entry.js';
import { resolveDefaultCertificate } from './model-assembly.js';
import { AssemblyReuse } from './assembly-reuse.js';
import type { Certificate, ModelOptions, RouteTables, RoutingModel } from './model.js';
import type { ModelSource } from './model-source.js';
import { EntryDependents } from './entry-dependents.js';
import { RouteIndex, tablesOf } from './route-index.js';
import { SERVER_SLOTS_FILE } from './server-slots.js';
import { RateLimitTables } from './rate-limit-tables.js';
import { CheckBudget } from './check-budget.js';
import { OutputBudget } from './output-budget.js';
import { SlotFile } from './slot-file.js';
import { SlotBudget } from './slot-budget.js';
import { ListReuse } from './list-reuse.js';
import { LoggedEntries } from './logged-entries.js';
import { replacedOnlyIdle } from '../store/list-replacements.js';
import { NO_ROUTE_LIMITS, type RouteBudgetItem, type RouteLimits } from './route-budget.js';

/** What the walk over the Ingresses remembers for one of another class. */
const OTHER_CLASS = Symbol('other class');

/** Stores whose changes invalidate entries; IngressClasses are read whole each build instead. */
const TRACKED_STORES = ['ingresses', 'services', 'endpointSlices', 'secrets'] as const;

/**
 * Builds the routing model, reusing what each Ingress contributed last time when nothing it read
 * has changed. Each Ingress's contribution (its backends with their server slots and options,
 * its route candidates, default backend, TLS claims and warnings) is cached with the store
 * lookups it made. The stores' change journals say which keys changed since the last build; a
 * changed object invalidates the Ingresses that read it, or that looked it up by index values it
 * now has. IngressClasses are few: they are read whole every build, and a changed class policy
 * filters every Ingress again. The assembly (sorting backends, route tables, the cross-Ingress
 * decisions of model-assembly.ts, the slot file) reuses the previous result where its inputs are
 * unchanged, and the objects handed to templates keep their identity when their content is
 * unchanged, so the template engine's `memo` blocks can reuse their text. Warnings come out in
 * one order: default certificate, Ingress entries, routes, then Ingresses left out for the
 * namespaces' output budget (OutputBudget: they contribute nothing, their routes leave the route
 * index), held claims and HTTPRoutes left out for it, Ingresses and HTTPRoutes starved of server
 * slots (SlotBudget), TLS hosts and default backend. The claims of rejected Ingresses
 * (HeldClaims) are in the route index with the rest. HTTPRoutes share both budgets: the Gateway
 * builder measures them (route-budget.ts), and keeps to what this builder decided (routeLimits).
 *
 * The result is always the one a cold build of the same stores and baseline gives: anything the
 * builder cannot prove unchanged (a replaced store, a journal that no longer reaches back, a
 * baseline whose slots differ from those an entry was built with) is computed again.
 * One builder per worker and template set; its caches hold one entry per accepted Ingress.
 */
export class RoutingModelBuilder {
  readonly #options: ModelOptions;
  readonly #entries = new Map<string, IngressEntry>();
  /** Which entries a store change invalidates. */
  readonly #dependents = new EntryDependents();
  readonly #rateLimitTables = new RateLimitTables();
  readonly #checkBudget = new CheckBudget();
  /** The TLS hosts and default backend, kept while their claims are unchanged. */
  readonly #assembly = new AssemblyReuse();
  /** server-slots.txt: the baseline's parsed once, the new one updated per changed backend. */
  readonly #slotFile = new SlotFile();
  /** Entries whose backends get no servers (see SlotBudget), with the warning of each. */
  #starved = new Map<IngressEntry, string>();
  readonly #backendOrder = new BackendOrder();
  /** Which entries have a log to replay. */
  readonly #logged = new LoggedEntries<IngressEntry>();
  /** The entries of the last walk and where each Ingress's entry is among them (quick-walk.ts). */
  #lastWalk: LastWalk<IngressEntry> | undefined;
  /** The entry of each Ingress object, to skip key building for unchanged objects. */
  #byIngress = new WeakMap<KubeObject, IngressEntry>();
  /** Each Ingress of the last walk with its entry, or OTHER_CLASS (list-reuse.ts). */
  readonly #listed = new ListReuse<KubeObject, IngressEntry | typeof OTHER_CLASS>((a, b) => compareKeys(objectKey(a), objectKey(b)));
  /** Ingress objects of another class, under the class policy `#classKey`. */
  #otherClass = new WeakSet<KubeObject>();
  #classKey: string | undefined;
  readonly #routes = new RouteIndex();
  /** The claims rejected Ingresses keep (held-claims.ts), in the route index with the rest. */
  readonly #held = new HeldClaims();
  /** The host fallback maps of the last model and the default backends they were made with. */
  #fallbacks: HostFallbacks | undefined;
  /** The namespaces' default backends (namespaceDefaults) and the entries they were read from. */
  #defaults: { readonly entries: readonly IngressEntry[]; readonly defaults: Map<string, string> } | undefined;
  #fallbackDefaults = '';
  readonly #slotBudget: SlotBudget;
  readonly #outputBudget: OutputBudget;
  /** Entries whose routes are not in the route index: those left out for the output budget. */
  readonly #outOfIndex = new Set<IngressEntry>();
  #build = 0;
  #last: RoutingModel | undefined;
  #lastRouteWarnings: readonly Notice[] = [];
  /** Warnings of the cross-Ingress decisions (TLS hosts, default backend) of the last model. */
  #lastAssemblyWarnings: readonly Notice[] = [];
  /** The HTTPRoutes of the last build, and what the budgets decided for them. */
  #routeItems: readonly RouteBudgetItem[] = [];
  #routeLimits: RouteLimits = NO_ROUTE_LIMITS;

  constructor(options: ModelOptions) {
    this.#options = options;
    this.#slotBudget = new SlotBudget(options.maxServerSlotsTotal);
    this.#outputBudget = new OutputBudget(options.maxOutputBytes);
  }

  /** Ingresses with a cached entry. */
  get cachedIngresses(): number {
    return this.#entries.size;
  }

  /** What the budgets decided for the HTTPRoutes of the last build. */
  get routeLimits(): RouteLimits {
    return this.#routeLimits;
  }

  /** `httpRoutes`: the HTTPRoutes that share the budgets with the Ingresses (route-budget.ts); the same array while unchanged. */
  build(source: ModelSource, baseline: RenderBaseline | undefined, warn: Warn, httpRoutes: readonly RouteBudgetItem[] = []): RoutingModel {
    const build = ++this.#build;
    const defaultCertificate = this.#defaultCertificate(source, warn);
    // The IngressClass objects decide which Ingresses are ours: when they change, every
    // Ingress is filtered again (entries of Ingresses no longer ours are dropped below).
    const classes = classPolicy(source, this.#options);
    const classesChanged = classes.key !== this.#classKey;
    if (classesChanged) {
      this.#classKey = classes.key;
      this.#otherClass = new WeakSet();
    }
    const dirty = this.#invalidate(source);
    const slotText = baseline?.auxiliaryFiles.files[SERVER_SLOTS_FILE];
    // The baseline is usually this builder's own last output: then every cached backend's slots
    // are exactly what the baseline says, and assignSlots would give them back unchanged.
    const ownBaseline = this.#last !== undefined && slotText === this.#last.serverSlotsFile;
    const previousSlots = ownBaseline ? undefined : this.#slotFile.parse(slotText);

    let entries: IngressEntry[] = [];
    const recomputedEntries: IngressEntry[] = [];
    let recomputed = 0;
    let namesChanged = false;
    let routesChanged = false;
    const list = source.list(this.#options.stores.ingresses);
    const reuse = !classesChanged && previousSlots === undefined;
    const dirtyEntries = new Set<IngressEntry>();
    for (const key of dirty) {
      const entry = this.#entries.get(key);
      if (entry !== undefined) dirtyEntries.add(entry);
    }
    // One Ingress not reused: its entry (computed again if it must be), or OTHER_CLASS.
    const visit = (ingress: KubeObject): IngressEntry | typeof OTHER_CLASS => {
      if (this.#otherClass.has(ingress)) return OTHER_CLASS;
      let cached = this.#byIngress.get(ingress);
      if (cached === undefined || this.#entries.get(cached.key) !== cached || classesChanged) {
        if (!acceptsClass(ingress, classes)) {
          this.#otherClass.add(ingress);
          return OTHER_CLASS;
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
        entry = computeEntry(source, this.#options, objectKey(ingress), ingress, (name) =>
          previousSlots !== undefined ? previousSlots.get(name) : slotsOf(prior, name),
        );
        // Unchanged routes and backends keep their objects: the route index knows routes by
        // identity, and memo blocks and the slot file reuse a backend's text while it lives.
        if (prior !== undefined) entry = keepUnchanged(prior, entry);
        if (prior !== undefined) this.#dependents.unregister(prior);
        this.#dependents.register(entry);
        this.#entries.set(entry.key, entry);
        this.#byIngress.set(ingress, entry);
        recomputed++;
        recomputedEntries.push(entry);
        if (prior === undefined || !sameNames(prior.backends, entry.backends)) namesChanged = true;
        // A left-out entry's routes are out of the index; unchanged ones stay out with its successor.
        const out = prior !== undefined && this.#outOfIndex.delete(prior);
        if (prior === undefined || prior.routes !== entry.routes) {
          routesChanged = true;
          if (prior !== undefined) this.#routes.remove(prior.routes);
          this.#routes.add(entry.routes);
        } else if (out) {
          this.#outOfIndex.add(entry);
        }
      }
      entry.seen = build;
      return entry;
    };
    const quick = reuse ? quickWalk(this.#listed, this.#lastWalk, list, dirtyEntries, (ingress) => !this.#otherClass.has(ingress) && acceptsClass(ingress, classes), visit as (ingress: KubeObject) => IngressEntry) : undefined;
    if (quick !== undefined) {
      entries = quick;
      this.#lastWalk = { entries, entryAt: (this.#lastWalk as LastWalk<IngressEntry>).entryAt };
    } else {
      this.#lastWalk = undefined;
      // The same Ingress object as in the last walk, unchanged and unaffected: its entry (or its
      // other class) as it was, without a lookup. Anything else goes through the lookups below.
      const known = this.#listed.take(list);
      const walked = new Array<IngressEntry | typeof OTHER_CLASS>(list.length);
      const entryAt = new Int32Array(list.length);
      for (let i = 0; i < list.length; i++) {
        const was = reuse ? known[i] : undefined;
        const value = was !== undefined && (was === OTHER_CLASS || !dirtyEntries.has(was)) ? was : visit(list[i] as KubeObject);
        walked[i] = value;
        entryAt[i] = value === OTHER_CLASS ? -1 : entries.length;
        if (value === OTHER_CLASS) continue;
        value.seen = build;
        entries.push(value);
      }
      // `walked` goes nowhere else: the quick walks edit it in place.
      this.#listed.remember(list, walked, true);
      this.#lastWalk = { entries, entryAt };
    }
    if (entries.length !== this.#entries.size) {
      for (const [key, entry] of this.#entries) {
        if (entry.seen === build) continue;
        this.#dependents.unregister(entry);
        this.#routes.remove(entry.routes);
        this.#outOfIndex.delete(entry);
        this.#entries.delete(key);
        namesChanged = true;
        if (entry.routes.length > 0) routesChanged = true;
      }
    }
    const held = this.#held.update(source.rejected?.(this.#options.stores.ingresses) ?? [], classes, this.#options, classesChanged);
    if (held.removed.length > 0 || held.added.length > 0) {
      this.#routes.remove(held.removed);
      this.#routes.add(held.added);
      routesChanged = true;
    }
    const previous = this.#last;
    const routeItemsChanged = httpRoutes !== this.#routeItems;
    this.#routeItems = httpRoutes;
    if (previous !== undefined && recomputed === 0 && !namesChanged && !routesChanged && !routeItemsChanged && defaultCertificate === previous.defaultCertificate) {
      // Nothing changed: replay the warnings and hand back the same model.
      this.#replayEntries(entries, source, warn);
      replayNotices(this.#lastRouteWarnings, warn);
      replayNotices(this.#lastAssemblyWarnings, warn);
      return previous;
    }

    this.#replayEntries(entries, source, warn);
    const budget = this.#outputBudget.shed(entries, this.#held.items, httpRoutes);
    const shed = budget.entries;
    const heldMoved = this.#held.place(new Set(budget.held.keys()));
    this.#routes.remove(heldMoved.removed);
    this.#routes.add(heldMoved.added);
    if (this.#placeRoutes(entries, shed)) {
      namesChanged = true;
      routesChanged = true;
    }
    if (heldMoved.removed.length > 0 || heldMoved.added.length > 0) routesChanged = true;
    const served = shed.size === 0 ? entries : entries.filter((entry) => !shed.has(entry));
    const servedRoutes = budget.routes.size === 0 ? httpRoutes : httpRoutes.filter((route) => !budget.routes.has(route));
    const starvedItems = this.#slotBudget.starve(served, servedRoutes);
    const starved = new Map<IngressEntry, string>();
    const starvedRoutes = new Map<string, string>();
    for (const [item, message] of starvedItems) {
      if ('kind' in item) starvedRoutes.set(item.key, message);
      else starved.set(item, message);
    }
    this.#routeLimits = budget.routes.size === 0 && starvedRoutes.size === 0 ? NO_ROUTE_LIMITS : { shed: new Map([...budget.routes].map(([item, message]) => [item.key, message])), starved: starvedRoutes };
    // Nothing starved before or now: no entry changed sides (no lookup per entry).
    const starvedChanged = starved.size === 0 && this.#starved.size === 0 ? [] : served.filter((entry) => starved.has(entry) !== this.#starved.has(entry));
    this.#starved = starved;
    const resort = namesChanged || previous === undefined;
    const backends = this.#checkBudget.apply(this.#rateLimitTables.apply(this.#backendOrder.sorted(this.#last?.backends, resort ? served : [...recomputedEntries.filter((entry) => !shed.has(entry)), ...starvedChanged], resort, starved)));
    let tables: RouteTables;
    if (previous !== undefined && !routesChanged) {
      tables = tablesOf(previous);
      replayNotices(this.#lastRouteWarnings, warn);
    } else {
      const warnings: Notice[] = [];
      tables = this.#routes.tables(previous === undefined ? undefined : tablesOf(previous), () => [...served.flatMap((e) => e.routes), ...this.#held.routes], (message, finding) => {
        warnings.push(finding === undefined ? { message } : { message, finding });
      });
      replayNotices(warnings, warn);
      this.#lastRouteWarnings = warnings;
    }
    const assemblyWarnings: Notice[] = [...shed.values(), ...budget.held.values(), ...budget.routes.values(), ...starvedItems.values()].map((message) => ({ message }));
    const collect: Warn = (message, finding) => {
      assemblyWarnings.push(finding === undefined ? { message } : { message, finding });
    };
    const routes = this.#routes;
    const hostHolder = this.#options.tlsHostOwnership === 'routed-oldest' ? (host: string, ns: string): string | undefined => routes.hostHolder(host, ns) : undefined;
    const tls = this.#assembly.assignTlsHosts(served, collect, hostHolder);
    const defaultBackend = this.#assembly.chooseDefaultBackend(served, collect);
    replayNotices(assemblyWarnings, warn);
    this.#lastAssemblyWarnings = assemblyWarnings;
    const fallbacks = this.#hostFallbacks(served, defaultBackend, routesChanged);
    const sameBackends = previous !== undefined && backends === previous.backends;
    const model: RoutingModel = {
      backends,
      ...tables,
      certificates: previous !== undefined && sameCertificates(tls.certificates, previous.certificates) ? previous.certificates : tls.certificates,
      defaultCertificate,
      tlsHosts: previous !== undefined && sameArray(tls.hosts, previous.tlsHosts) ? previous.tlsHosts : tls.hosts,
      defaultBackend,
      hostFallback: fallbacks.early,
      hostFallbackLate: fallbacks.late,
      resolvers: sameBackends ? previous.resolvers : backends.some((b) => b.dns),
      loopGuardToken: this.#options.loopGuardToken,
      serverSlotsFile: sameBackends ? previous.serverSlotsFile : this.#slotFile.text(backends),
      gateway: EMPTY_GATEWAY_MODEL,
    };
    this.#last = model;
    return model;
  }

  /** Replays the log of every entry, in order: those with one alone are visited (logged-entries.ts). */
  #replayEntries(entries: readonly IngressEntry[], source: ModelSource, warn: Warn): void {
    for (const at of this.#logged.positions(entries)) replayEntry(entries[at] as IngressEntry, source, warn);
  }

  /**
   * Takes the routes of entries newly left out for the output budget out of the route index,
   * and puts those of entries no longer left out back; true when any moved.
   */
  #placeRoutes(entries: readonly IngressEntry[], shed: ReadonlyMap<IngressEntry, string>): boolean {
    if (shed.size === 0 && this.#outOfIndex.size === 0) return false;
    let moved = false;
    for (const entry of entries) {
      const out = this.#outOfIndex.has(entry);
      if (out === shed.has(entry)) continue;
      moved = true;
      if (out) {
        this.#outOfIndex.delete(entry);
        this.#routes.add(entry.routes);
      } else {
        this.#outOfIndex.add(entry);
        this.#routes.remove(entry.routes);
      }
    }
    return moved;
  }

  /**
   * The host fallback maps (host-fallback.ts), computed again only when the routes or the
   * default backends changed, and kept as the previous arrays while their content is the same.
   */
  #hostFallbacks(entries: readonly IngressEntry[], clusterDefault: string | undefined, routesChanged: boolean): HostFallbacks {
    // The entries with a default backend the very ones of the last build: the same defaults (list-replacements.ts).
    const known = this.#defaults;
    const same = known !== undefined && replacedOnlyIdle(entries, known.entries, (entry) => entry.defaultBackend === undefined);
    const defaults = same ? known.defaults : namespaceDefaults(entries);
    this.#defaults = { entries, defaults };
    const key = `${clusterDefault ?? ''}\0${[...defaults].map(([ns, backend]) => `${ns}=${backend}`).join('\0')}`;
    const previous = this.#fallbacks;
    // Asked every time the routes changed, so that it compares with the owners of the last fallbacks.
    const ownersChanged = routesChanged && this.#routes.ownersChanged();
    if (previous !== undefined && !ownersChanged && key === this.#fallbackDefaults) return previous;
    const next = hostFallbacks(this.#routes.hostOwners(), defaults, clusterDefault);
    this.#fallbackDefaults = key;
    this.#fallbacks = previous !== undefined && sameFallbacks(next, previous) ? previous : next;
    return this.#fallbacks;
  }

  /** The default certificate, as the previous model's object while its content is unchanged. */
  #defaultCertificate(source: ModelSource, warn: (message: string) => void): Certificate | undefined {
    const certificate = resolveDefaultCertificate(source, this.#options, warn);
    const previous = this.#last?.defaultCertificate;
    return certificate !== undefined && previous !== undefined && previous.pem === certificate.pem ? previous : certificate;
  }

  /** Keys of Ingresses whose entry must be recomputed; clears every entry if it cannot tell. */
  #invalidate(source: ModelSource): Set<string> {
    const dirty = this.#dependents.invalidate(source, TRACKED_STORES.map((field) => this.#options.stores[field]));
    if (dirty !== undefined) return dirty;
    this.#entries.clear();
    this.#listed.forget();
    this.#lastWalk = undefined;
    this.#routes.clear();
    this.#held.clear();
    this.#fallbacks = undefined;
    this.#byIngress = new WeakMap();
    this.#last = undefined;
    return new Set();
  }
}

// The routing model builder: one per worker and template set. It caches what each accepted
// Ingress contributed and computes again only what the stores' change journals invalidate, so a
// small store change costs little; the class doc states the contract with a cold build.
import { objectKey, type IndexedStore } from '../store/indexed-store.js';
import type { KubeObject, RenderBaseline } from '../protocol.js';
import { keepUnchanged, sameArray, sameCertificates, sameNames, slotsStillValid } from './entry-compare.js';
import { acceptsClass, classPolicy } from './ingress-class.js';
import { computeEntry, replayEntry, slotsOf, type IngressEntry } from './ingress-entry.js';
import { assignTlsHosts, chooseDefaultBackend, resolveDefaultCertificate } from './model-assembly.js';
import type { Backend, Certificate, ModelOptions, RouteTables, RoutingModel } from './model.js';
import type { ModelSource } from './model-source.js';
import { lookupKey, objectDepKey } from './recorded-reads.js';
import { RouteIndex, tablesOf } from './route-index.js';
import { parseSlotFile, SERVER_SLOTS_FILE } from './server-slots.js';
import { SlotFile } from './slot-file.js';
import { SlotBudget } from './slot-budget.js';

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
 * one order: default certificate, Ingress entries, routes, then Ingresses starved of server slots
 * (SlotBudget), TLS hosts and default backend.
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
  /** server-slots.txt, updated per changed backend. */
  readonly #slotFile = new SlotFile();
  /** Entries whose backends get no servers (see SlotBudget), with the warning of each. */
  #starved = new Map<IngressEntry, string>();
  /** The server-less copies of a starved entry's backends, kept while the entry lives. */
  readonly #emptied = new WeakMap<IngressEntry, readonly Backend[]>();
  /** The entry of each Ingress object, to skip key building for unchanged objects. */
  #byIngress = new WeakMap<KubeObject, IngressEntry>();
  /** Ingress objects of another class, under the class policy `#classKey`. */
  #otherClass = new WeakSet<KubeObject>();
  #classKey: string | undefined;
  readonly #routes = new RouteIndex();
  readonly #slotBudget: SlotBudget;
  #build = 0;
  #last: RoutingModel | undefined;
  #lastRouteWarnings: readonly string[] = [];
  /** Warnings of the cross-Ingress decisions (TLS hosts, default backend) of the last model. */
  #lastAssemblyWarnings: readonly string[] = [];
  #lastPositions = new Map<string, number>();
  /** The last slot file parsed and its text: a baseline's slot file is parsed once, not per build. */
  #parsedSlotText: string | undefined;
  #parsedSlots: ReadonlyMap<string, readonly string[]> = new Map();

  constructor(options: ModelOptions) {
    this.#options = options;
    this.#slotBudget = new SlotBudget(options.maxServerSlotsTotal);
  }

  /** Ingresses with a cached entry. */
  get cachedIngresses(): number {
    return this.#entries.size;
  }

  build(source: ModelSource, baseline: RenderBaseline | undefined, warn: (message: string) => void): RoutingModel {
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
    const previousSlots = ownBaseline ? undefined : this.#parseSlots(slotText);

    const entries: IngressEntry[] = [];
    const recomputedEntries: IngressEntry[] = [];
    let recomputed = 0;
    let namesChanged = false;
    let routesChanged = false;
    for (const ingress of source.list(this.#options.stores.ingresses)) {
      if (this.#otherClass.has(ingress)) continue;
      let cached = this.#byIngress.get(ingress);
      if (cached === undefined || this.#entries.get(cached.key) !== cached || classesChanged) {
        if (!acceptsClass(ingress, classes)) {
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
        entry = computeEntry(source, this.#options, objectKey(ingress), ingress, (name) =>
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
    if (previous !== undefined && recomputed === 0 && !namesChanged && !routesChanged && defaultCertificate === previous.defaultCertificate) {
      // Nothing changed: replay the warnings and hand back the same model.
      for (const entry of entries) replayEntry(entry, source, warn);
      for (const message of this.#lastRouteWarnings) warn(message);
      for (const message of this.#lastAssemblyWarnings) warn(message);
      return previous;
    }

    for (const entry of entries) replayEntry(entry, source, warn);
    const starved = this.#slotBudget.starve(entries);
    const starvedChanged = entries.filter((entry) => starved.has(entry) !== this.#starved.has(entry));
    this.#starved = starved;
    const resort = namesChanged || previous === undefined;
    const backends = this.#sortedBackends(resort ? entries : [...recomputedEntries, ...starvedChanged], resort);
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
    const assemblyWarnings: string[] = [...starved.values()];
    const collect = (message: string): void => {
      assemblyWarnings.push(message);
    };
    const routes = this.#routes;
    const hostHolder = this.#options.tlsHostOwnership === 'routed-oldest' ? (host: string, ns: string): string | undefined => routes.hostHolder(host, ns) : undefined;
    const tls = assignTlsHosts(entries, collect, hostHolder);
    const defaultBackend = chooseDefaultBackend(entries, collect);
    for (const message of assemblyWarnings) warn(message);
    this.#lastAssemblyWarnings = assemblyWarnings;
    const sameBackends = previous !== undefined && backends === previous.backends;
    const model: RoutingModel = {
      backends,
      ...tables,
      certificates: previous !== undefined && sameCertificates(tls.certificates, previous.certificates) ? previous.certificates : tls.certificates,
      defaultCertificate,
      tlsHosts: previous !== undefined && sameArray(tls.hosts, previous.tlsHosts) ? previous.tlsHosts : tls.hosts,
      defaultBackend,
      resolvers: sameBackends ? previous.resolvers : backends.some((b) => b.dns),
      loopGuardToken: this.#options.loopGuardToken,
      serverSlotsFile: sameBackends ? previous.serverSlotsFile : this.#slotFile.text(backends),
    };
    this.#last = model;
    return model;
  }

  /** The default certificate, as the previous model's object while its content is unchanged. */
  #defaultCertificate(source: ModelSource, warn: (message: string) => void): Certificate | undefined {
    const certificate = resolveDefaultCertificate(source, this.#options, warn);
    const previous = this.#last?.defaultCertificate;
    return certificate !== undefined && previous !== undefined && previous.pem === certificate.pem ? previous : certificate;
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
        this.#markDependents(objectDepKey(name, key), dirty);
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

  /**
   * Every backend sorted by name. When the set of names is unchanged, `entries` are only the
   * recomputed ones, whose backends take their predecessors' places; otherwise all are sorted.
   */
  #sortedBackends(entries: readonly IngressEntry[], namesChanged: boolean): readonly Backend[] {
    const previous = this.#last?.backends;
    if (!namesChanged && previous !== undefined) {
      const backends = previous.slice();
      for (const entry of entries) {
        for (const backend of this.#backendsOf(entry)) {
          const at = this.#lastPositions.get(backend.name) as number;
          if (backends[at] !== backend) backends[at] = backend;
        }
      }
      return sameArray(backends, previous) ? previous : backends;
    }
    const backends = entries.flatMap((e) => this.#backendsOf(e)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#lastPositions = new Map(backends.map((b, i) => [b.name, i]));
    return backends;
  }

  /** An entry's backends as the model serves them: without servers while it is starved. */
  #backendsOf(entry: IngressEntry): readonly Backend[] {
    if (!this.#starved.has(entry)) return entry.backends;
    let emptied = this.#emptied.get(entry);
    if (emptied === undefined) {
      emptied = entry.backends.map((backend) => Object.freeze({ ...backend, servers: Object.freeze([]) }));
      this.#emptied.set(entry, emptied);
    }
    return emptied;
  }

  /** The slots of a baseline's slot file; the map is shared between builds, so never modified. */
  #parseSlots(text: string | undefined): ReadonlyMap<string, readonly string[]> {
    if (text === undefined || text === '') return new Map();
    if (text !== this.#parsedSlotText) {
      this.#parsedSlots = parseSlotFile(text);
      this.#parsedSlotText = text;
    }
    return this.#parsedSlots;
  }
}

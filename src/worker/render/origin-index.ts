// Which object each part of a render came from, built after the templates ran: the config's
// sections as line ranges (one entry per section, never per line), each backend (and the userlist
// named after it) tied to the Ingress the routing model built it for, and the backend names that
// map and file entries refer to. The render gate maps HAProxy's `[file:line]` back to an object
// with it; the same ranges are the config's sections keyed by origin.
//
// Cost: the sections are needed only when HAProxy refuses a render, so they are computed on first
// read (one scan for the lines that open a section) and never cross threads: `sections` is a
// non-enumerable getter, which a structured clone leaves out, and `withSections` puts it back on
// the receiving side. The objects and names are kept by an OriginIndexer between renders: an
// Ingress object, a backend object (the model keeps both while their content is unchanged) and a
// whole list of names are reused, so a render after a small change looks at the backends the
// model's list records as replaced (identity checks over all of them when it records none), and
// no text is built for the objects that did not change.
import type { KubeObject, OriginIndex, OriginObject, OriginSection } from '../protocol.js';
import type { Backend, RoutingModel } from '../routing/model.js';
import type { StoreReader } from '../routing/model-source.js';
import { objectVersion } from '../store/render-exclusions.js';
import { recordReplacements, replacedSince } from '../store/list-replacements.js';

/** HAProxy's section keywords: a line starting (unindented) with one opens a section. */
const SECTION_KEYWORDS = new Set([
  'global', 'defaults', 'frontend', 'backend', 'listen', 'userlist', 'resolvers', 'peers', 'cache',
  'ring', 'http-errors', 'program', 'mailers', 'fcgi-app', 'crt-store', 'log-forward',
]);

/** A userlist named `<backend>_users` belongs to that backend (the default template set's rule). */
const USERLIST_SUFFIX = '_users';

export interface OriginInputs {
  readonly config: string;
  /** The model, when the templates read it (undefined: no object produced anything). */
  readonly routing: RoutingModel | undefined;
  readonly reader: StoreReader;
  /** The store the model reads Ingresses from. */
  readonly ingressStore: string;
  /** The store the model reads HTTPRoutes from (undefined: none). */
  readonly routeStore?: string | undefined;
}

/** A cold origin index (no state kept): what OriginIndexer.build gives as well. */
export function buildOriginIndex(inputs: OriginInputs): OriginIndex {
  return new OriginIndexer().build(inputs);
}

/** The objects and names of the previous build, reused while they are the same. */
interface PreviousBuild {
  readonly backends: readonly Backend[];
  /** The object index of each backend of `backends`. */
  readonly indices: Int32Array;
  /** The object index of each Ingress or HTTPRoute, by `kind/namespace/name`. */
  readonly byObject: ReadonlyMap<string, number>;
  readonly objects: readonly OriginObject[];
  readonly names: Readonly<Record<string, number>>;
}

/** The kind of object a backend was built for. */
const kindOf = (backend: Pick<Backend, 'kind'>): string => backend.kind ?? 'Ingress';

/**
 * Builds origin indexes render after render (one per engine), reusing what the previous render
 * built where the model's objects are the same. The result is always what a cold build gives.
 */
export class OriginIndexer {
  /** The OriginObject of each Ingress or HTTPRoute object seen (version included). */
  readonly #objectOrigins = new WeakMap<KubeObject, OriginObject>();
  /** The objects of each kind of the latest build, by `kind/namespace/name`. */
  readonly #lists = { Ingress: new KindObjects('Ingress'), HTTPRoute: new KindObjects('HTTPRoute') };
  /** `kind/namespace/name` of each backend object's origin. */
  readonly #backendKeys = new WeakMap<Backend, string>();
  #previous: PreviousBuild | undefined;

  build(inputs: OriginInputs): OriginIndex {
    const backends = inputs.routing?.backends ?? [];
    if (backends.length === 0) {
      this.#previous = undefined;
      return withSections({ objects: [], names: Object.create(null) as Record<string, number> }, inputs.config);
    }
    const ingresses = this.#lists.Ingress.update(inputs.reader.list(inputs.ingressStore));
    const routes = this.#lists.HTTPRoute.update(inputs.routeStore === undefined ? [] : inputs.reader.list(inputs.routeStore));
    const changed = ingresses === undefined || routes === undefined ? undefined : [...ingresses, ...routes];
    const kept = this.#previous === undefined || changed === undefined ? undefined : this.#patch(this.#previous, backends, changed);
    const build = kept ?? this.#fullBuild(backends);
    this.#previous = build;
    return withSections({ objects: build.objects, names: build.names }, inputs.config);
  }

  /**
   * The previous build brought up to date, when the backends are the same objects in the same
   * places but for some that belong to the same object as before: only the replaced backends
   * (those the model's list records, or all of them when it records none), the changed objects'
   * versions and the names of changed backends are looked at. The objects list records where it
   * differs from the previous one, for whoever sends only the changes. Undefined: build afresh.
   */
  #patch(previous: PreviousBuild, backends: readonly Backend[], changed: readonly string[]): PreviousBuild | undefined {
    if (previous.backends.length !== backends.length) return undefined;
    let namesChanged = false;
    let objects: OriginObject[] | undefined;
    const replaced: number[] = [];
    const replace = (index: number, origin: OriginObject): void => {
      if (previous.objects[index] === origin) return;
      objects ??= [...previous.objects];
      objects[index] = origin;
      replaced.push(index);
    };
    /** False when backend `b` belongs to another object than before. */
    const visit = (b: number): boolean => {
      const backend = backends[b] as Backend;
      const before = previous.backends[b] as Backend;
      if (backend === before) return true;
      const key = this.#keyOf(backend);
      if (key !== this.#keyOf(before)) return false;
      if (backend.name !== before.name) namesChanged = true;
      replace(previous.indices[b] as number, this.#originOf(kindOf(backend), key, backend));
      return true;
    };
    // The model's backend list knows where it differs from the one before (check-budget.ts).
    const known = backends === previous.backends ? [] : replacedSince(backends, previous.backends);
    if (known !== undefined) {
      for (const b of known) if (!visit(b)) return undefined;
    } else {
      for (let b = 0; b < backends.length; b++) if (!visit(b)) return undefined;
    }
    for (const key of changed) {
      const index = previous.byObject.get(key);
      if (index === undefined) continue;
      const origin = previous.objects[index] as OriginObject;
      replace(index, this.#originOf(origin.kind, key, { namespace: origin.namespace, ingress: origin.name }));
    }
    if (objects !== undefined) recordReplacements(objects, previous.objects, replaced);
    const names = namesChanged ? namesOf(backends, previous.indices) : previous.names;
    return { ...previous, backends, objects: objects ?? previous.objects, names };
  }

  #fullBuild(backends: readonly Backend[]): PreviousBuild {
    const objects: OriginObject[] = [];
    const indices = new Int32Array(backends.length);
    const byObject = new Map<string, number>();
    for (let b = 0; b < backends.length; b++) {
      const backend = backends[b] as Backend;
      const key = this.#keyOf(backend);
      let index = byObject.get(key);
      if (index === undefined) {
        index = objects.length;
        objects.push(this.#originOf(kindOf(backend), key, backend));
        byObject.set(key, index);
      }
      indices[b] = index;
    }
    return { backends, indices, byObject, objects, names: namesOf(backends, indices) };
  }

  #keyOf(backend: Backend): string {
    let key = this.#backendKeys.get(backend);
    if (key === undefined) {
      key = `${kindOf(backend)}/${backend.namespace}/${backend.ingress}`;
      this.#backendKeys.set(backend, key);
    }
    return key;
  }

  #originOf(kind: string, key: string, backend: Pick<Backend, 'namespace' | 'ingress'>): OriginObject {
    const object = kind === 'HTTPRoute' ? this.#lists.HTTPRoute.get(key) : this.#lists.Ingress.get(key);
    if (object === undefined) return { kind, namespace: backend.namespace, name: backend.ingress, version: '' };
    let origin = this.#objectOrigins.get(object);
    if (origin === undefined || origin.kind !== kind || origin.namespace !== backend.namespace || origin.name !== backend.ingress) {
      origin = { kind, namespace: backend.namespace, name: backend.ingress, version: objectVersion(object) };
      this.#objectOrigins.set(object, origin);
    }
    return origin;
  }
}

/** The objects of one kind by `kind/namespace/name`, kept up to date from the store's list. */
class KindObjects {
  #objects = new Map<string, KubeObject>();
  #list: readonly KubeObject[] = [];

  constructor(readonly kind: string) {}

  get(key: string): KubeObject | undefined {
    return this.#objects.get(key);
  }

  /**
   * Follows `list`, updated in place where it changed (only there, when the list knows where it
   * changed); returns the keys whose object changed
   * (undefined: the list changed length, everything may have moved).
   */
  update(list: readonly KubeObject[]): readonly string[] | undefined {
    const before = this.#list;
    this.#list = list;
    const keyOf = (object: KubeObject): string => `${this.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    if (list.length !== before.length) {
      this.#objects = new Map();
      for (const object of list) this.#objects.set(keyOf(object), object);
      return undefined;
    }
    const changed: string[] = [];
    if (list === before) return changed;
    const added: KubeObject[] = [];
    const visit = (i: number): void => {
      const old = before[i] as KubeObject;
      const now = list[i] as KubeObject;
      if (old === now) return;
      const key = keyOf(old);
      if (this.#objects.get(key) === old) this.#objects.delete(key);
      changed.push(key);
      added.push(now);
    };
    // A store list's snapshot knows where it differs from the one before (sorted-journal-list.ts).
    const replaced = replacedSince(list, before);
    if (replaced !== undefined) for (const i of replaced) visit(i);
    else for (let i = 0; i < list.length; i++) visit(i);
    for (const object of added) {
      const key = keyOf(object);
      this.#objects.set(key, object);
      changed.push(key);
    }
    return changed;
  }
}

/** Each backend's name and its userlist's, to the backend's object index. */
function namesOf(backends: readonly Backend[], indices: Int32Array): Record<string, number> {
  const names = Object.create(null) as Record<string, number>;
  for (let b = 0; b < backends.length; b++) {
    const name = (backends[b] as Backend).name;
    names[name] = indices[b] as number;
    names[`${name}${USERLIST_SUFFIX}`] = indices[b] as number;
  }
  return names;
}

/**
 * The index with `sections` computed from `config` on first read: a non-enumerable getter, so
 * copying the index to another thread (a structured clone) carries only its objects and names.
 * An index whose sections are present already is returned as it is.
 */
export function withSections(origins: Omit<OriginIndex, 'sections'> & { readonly sections?: readonly OriginSection[] }, config: string): OriginIndex {
  if (Object.getOwnPropertyDescriptor(origins, 'sections') !== undefined) return origins as OriginIndex;
  let sections: OriginSection[] | undefined;
  const index = { names: origins.names };
  // Objects materialised on first read (the pool's origin-overlay.ts) stay so.
  const objects = Object.getOwnPropertyDescriptor(origins, 'objects');
  Object.defineProperty(index, 'objects', objects?.get === undefined ? { enumerable: true, value: origins.objects } : { enumerable: true, get: () => origins.objects });
  Object.defineProperty(index, 'sections', {
    enumerable: false,
    get: () => (sections ??= configSections(config, origins.names)),
  });
  return index as OriginIndex;
}

/** The config's sections, in order, each from its keyword line to the line before the next one. */
export function configSections(config: string, names: Readonly<Record<string, number>>): OriginSection[] {
  const sections: OriginSection[] = [];
  let line = 1;
  let at = 0;
  let open: { keyword: string; name: string; firstLine: number } | undefined;
  while (at <= config.length) {
    const end = config.indexOf('\n', at);
    const stop = end === -1 ? config.length : end;
    const first = config.charCodeAt(at);
    // Only unindented lines can open a section: a cheap test before any slicing.
    if (stop > at && first !== 32 && first !== 9 && first !== 35) {
      const words = config.slice(at, stop).trim().split(/\s+/);
      const keyword = words[0] ?? '';
      if (SECTION_KEYWORDS.has(keyword)) {
        if (open !== undefined) sections.push(close(open, line - 1, names));
        open = { keyword, name: words[1] ?? '', firstLine: line };
      }
    }
    if (end === -1) break;
    at = end + 1;
    line++;
  }
  if (open !== undefined) sections.push(close(open, line, names));
  return sections;
}

function close(open: { keyword: string; name: string; firstLine: number }, lastLine: number, names: Readonly<Record<string, number>>): OriginSection {
  const owned = open.keyword === 'backend' || open.keyword === 'userlist' || open.keyword === 'listen';
  const object = owned && Object.hasOwn(names, open.name) ? (names[open.name] as number) : -1;
  return { keyword: open.keyword, name: open.name, firstLine: open.firstLine, lastLine, object };
}

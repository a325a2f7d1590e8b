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
// whole list of names are reused, so a render after a small change costs identity checks over
// the model's backends, and no text is built for the objects that did not change.
import type { KubeObject, OriginIndex, OriginObject, OriginSection } from '../protocol.js';
import type { Backend, RoutingModel } from '../routing/model.js';
import type { StoreReader } from '../routing/model-source.js';
import { objectVersion } from '../store/render-exclusions.js';

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
  /** The object index of each Ingress, by `namespace/name`. */
  readonly byIngress: ReadonlyMap<string, number>;
  readonly objects: readonly OriginObject[];
  readonly names: Readonly<Record<string, number>>;
}

/**
 * Builds origin indexes render after render (one per engine), reusing what the previous render
 * built where the model's objects are the same. The result is always what a cold build gives.
 */
export class OriginIndexer {
  /** `namespace/name` of each Ingress object seen, and its OriginObject (version included). */
  readonly #ingressOrigins = new WeakMap<KubeObject, OriginObject>();
  /** The Ingresses of the latest build, by `namespace/name`, and the list it came from. */
  #ingresses = new Map<string, KubeObject>();
  #ingressList: readonly KubeObject[] = [];
  /** `namespace/ingress` of each backend object. */
  readonly #backendKeys = new WeakMap<Backend, string>();
  #previous: PreviousBuild | undefined;

  build(inputs: OriginInputs): OriginIndex {
    const backends = inputs.routing?.backends ?? [];
    if (backends.length === 0) {
      this.#previous = undefined;
      return withSections({ objects: [], names: Object.create(null) as Record<string, number> }, inputs.config);
    }
    const { ingresses, changed } = this.#ingressesOf(inputs.reader.list(inputs.ingressStore));
    const kept = this.#previous === undefined || changed === undefined ? undefined : this.#patch(this.#previous, backends, ingresses, changed);
    const build = kept ?? this.#fullBuild(backends, ingresses);
    this.#previous = build;
    return withSections({ objects: build.objects, names: build.names }, inputs.config);
  }

  /**
   * The previous build brought up to date, when the backends are the same objects in the same
   * places but for some that belong to the same Ingress as before: only the changed Ingresses'
   * versions and the names of changed backends are looked at. Undefined: build afresh.
   */
  #patch(previous: PreviousBuild, backends: readonly Backend[], ingresses: ReadonlyMap<string, KubeObject>, changed: readonly string[]): PreviousBuild | undefined {
    if (previous.backends.length !== backends.length) return undefined;
    let namesChanged = false;
    let objects: OriginObject[] | undefined;
    const replace = (index: number, origin: OriginObject): void => {
      if (previous.objects[index] === origin) return;
      objects ??= [...previous.objects];
      objects[index] = origin;
    };
    for (let b = 0; b < backends.length; b++) {
      const backend = backends[b] as Backend;
      const before = previous.backends[b] as Backend;
      if (backend === before) continue;
      const key = this.#keyOf(backend);
      if (key !== this.#keyOf(before)) return undefined;
      if (backend.name !== before.name) namesChanged = true;
      replace(previous.indices[b] as number, this.#originOf(ingresses.get(key), backend));
    }
    for (const key of changed) {
      const index = previous.byIngress.get(key);
      if (index === undefined) continue;
      const origin = previous.objects[index] as OriginObject;
      replace(index, this.#originOf(ingresses.get(key), { namespace: origin.namespace, ingress: origin.name }));
    }
    const names = namesChanged ? namesOf(backends, previous.indices) : previous.names;
    return { ...previous, backends, objects: objects ?? previous.objects, names };
  }

  #fullBuild(backends: readonly Backend[], ingresses: ReadonlyMap<string, KubeObject>): PreviousBuild {
    const objects: OriginObject[] = [];
    const indices = new Int32Array(backends.length);
    const byIngress = new Map<string, number>();
    for (let b = 0; b < backends.length; b++) {
      const backend = backends[b] as Backend;
      const key = this.#keyOf(backend);
      let index = byIngress.get(key);
      if (index === undefined) {
        index = objects.length;
        objects.push(this.#originOf(ingresses.get(key), backend));
        byIngress.set(key, index);
      }
      indices[b] = index;
    }
    return { backends, indices, byIngress, objects, names: namesOf(backends, indices) };
  }

  #keyOf(backend: Backend): string {
    let key = this.#backendKeys.get(backend);
    if (key === undefined) {
      key = `${backend.namespace}/${backend.ingress}`;
      this.#backendKeys.set(backend, key);
    }
    return key;
  }

  /**
   * The Ingresses of `list` by `namespace/name`, updated in place where the list changed, and the
   * keys whose object changed (undefined: the list changed length, everything may have moved).
   */
  #ingressesOf(list: readonly KubeObject[]): { ingresses: ReadonlyMap<string, KubeObject>; changed: readonly string[] | undefined } {
    const before = this.#ingressList;
    this.#ingressList = list;
    const keyOf = (object: KubeObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    if (list.length !== before.length) {
      this.#ingresses = new Map();
      for (const ingress of list) this.#ingresses.set(keyOf(ingress), ingress);
      return { ingresses: this.#ingresses, changed: undefined };
    }
    const changed: string[] = [];
    if (list !== before) {
      const added: KubeObject[] = [];
      for (let i = 0; i < list.length; i++) {
        const old = before[i] as KubeObject;
        const now = list[i] as KubeObject;
        if (old === now) continue;
        const key = keyOf(old);
        if (this.#ingresses.get(key) === old) this.#ingresses.delete(key);
        changed.push(key);
        added.push(now);
      }
      for (const ingress of added) {
        const key = keyOf(ingress);
        this.#ingresses.set(key, ingress);
        changed.push(key);
      }
    }
    return { ingresses: this.#ingresses, changed };
  }

  #originOf(ingress: KubeObject | undefined, backend: Pick<Backend, 'namespace' | 'ingress'>): OriginObject {
    if (ingress === undefined) return { kind: 'Ingress', namespace: backend.namespace, name: backend.ingress, version: '' };
    let origin = this.#ingressOrigins.get(ingress);
    if (origin === undefined || origin.namespace !== backend.namespace || origin.name !== backend.ingress) {
      origin = { kind: 'Ingress', namespace: backend.namespace, name: backend.ingress, version: objectVersion(ingress) };
      this.#ingressOrigins.set(ingress, origin);
    }
    return origin;
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
  const index = { objects: origins.objects, names: origins.names };
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

// What a whole render leaves for the endpoint lane (endpoint-lane.ts): its output, what it was
// rendered from, and the indexes the lane looks the touched backends up in (by name and by
// Service), kept from one base to the next where the model's backends are the same objects in the
// same places, so that a render after a small change patches them instead of building them from
// every backend. The indexes of rejections and warnings are built on first use, once per base.
import type { RenderExclusions, RenderSuccess, TemplateSetSource } from '../protocol.js';
import type { Backend, RoutingModel } from '../routing/model.js';
import type { IndexedStore } from '../store/indexed-store.js';
import { ExclusionFilter } from '../store/render-exclusions.js';

/** What a render leaves for the lane: its output and what it was rendered from. */
export interface LaneBase {
  readonly setHash: string;
  readonly exclusions: string;
  /** Each store of the set at the render, and its generation then (a store replaced by another instance counts as changed). */
  readonly generations: ReadonlyMap<string, { readonly store: IndexedStore | undefined; readonly generation: number }>;
  readonly outcome: RenderSuccess;
  /** The current object of each backend (the model's, or the lane's since), by name. */
  readonly backends: Map<string, Backend>;
  /** The model's backends `backends` was made from. */
  readonly source: readonly Backend[];
  /** The backends the lane changed since, by name: the model's object each had before. */
  laneEdited?: Map<string, Backend>;
  /** Backend names by `namespace/service`, built on first use (see ServiceBackends). */
  byService?: ServiceBackends;
  /** `kind\0namespace/name` of each rejection of the outcome, built on first use. */
  rejected?: Set<string>;
  /** Every word of the outcome's warnings that follows a space, sorted, built on first use (see `warnedAbout`). */
  warnedWords?: string[];
  /** Stores the templates read themselves. */
  readonly templateReads: ReadonlySet<string>;
  /** UTF-8 bytes of the output (config and auxiliary files), counted on first use, then kept up to date by each lane render. */
  bytes?: number;
}

/**
 * Backend names by `namespace/service`. Nearly every Service has one backend: its name is held as
 * the entry itself, and a list only when it has several (a one-name array costs 56 bytes, 10,000
 * of them at 10,000 Ingresses). `backendsOf` reads it.
 */
export type ServiceBackends = Map<string, string | string[]>;

/** The backend names of `service` in `byService`, in the order they entered. */
export function backendsOf(byService: ServiceBackends, service: string): readonly string[] {
  const names = byService.get(service);
  return names === undefined ? [] : typeof names === 'string' ? [names] : names;
}

/** A base whose model changed more backends than this share is indexed afresh. */
const PATCH_SHARE = 0.125;

/**
 * The base a whole render leaves. The backends by name (and by Service) of `previous` are kept
 * when the model's backends are the same array and the lane has not changed them since, and
 * patched where a few of them are other objects in the same places; otherwise built afresh.
 * Either way they are what building them from the model's backends gives.
 */
export function laneBase(
  set: TemplateSetSource,
  request: { readonly lookup: (store: string) => IndexedStore | undefined; readonly exclusions?: RenderExclusions | undefined },
  outcome: RenderSuccess,
  routing: RoutingModel | undefined,
  templateReads: ReadonlySet<string>,
  previous?: LaneBase,
): LaneBase | undefined {
  if (routing === undefined) return undefined;
  const generations = new Map<string, { store: IndexedStore | undefined; generation: number }>();
  for (const def of set.stores) generations.set(def.name, storeAt(request.lookup(def.name)));
  const base = { setHash: set.hash, exclusions: exclusionsKey(request.exclusions), generations, outcome, templateReads, source: routing.backends };
  if (previous !== undefined && previous.source === routing.backends && previous.laneEdited === undefined) {
    return { ...base, backends: previous.backends, ...(previous.byService === undefined ? {} : { byService: previous.byService }) };
  }
  const patched = previous === undefined ? undefined : patchedIndexes(previous, routing.backends);
  if (patched !== undefined) return { ...base, ...patched };
  const backends = new Map<string, Backend>();
  for (const backend of routing.backends) backends.set(backend.name, backend);
  return { ...base, backends };
}

/**
 * `previous`'s indexes (changed in place) for `now`, when it has the length of the previous
 * model's backends and differs from it in a few places: those backends leave and enter the
 * indexes, and each backend the lane changed gets the model's object back. Undefined when that
 * does not hold, or backend names repeat (building them afresh keeps the last of a name).
 */
function patchedIndexes(previous: LaneBase, now: readonly Backend[]): Pick<LaneBase, 'backends' | 'byService'> | undefined {
  const was = previous.source;
  if (was.length !== now.length || was.length !== previous.backends.size) return undefined;
  const changed: number[] = [];
  for (let i = 0; i < now.length; i++) {
    if (was[i] === now[i]) continue;
    changed.push(i);
    if (changed.length > PATCH_SHARE * now.length + 1) return undefined;
  }
  const { backends, byService } = previous;
  for (const i of changed) {
    const old = was[i] as Backend;
    backends.delete(old.name);
    if (byService !== undefined) leave(byService, serviceKey(old), old.name);
  }
  const entered = new Set<string>();
  for (const i of changed) {
    const backend = now[i] as Backend;
    if (backends.has(backend.name)) return undefined;
    backends.set(backend.name, backend);
    entered.add(backend.name);
    if (byService !== undefined) enter(byService, serviceKey(backend), backend.name);
  }
  // A backend the lane changed whose place the model kept holds the model's object there again.
  for (const [name, model] of previous.laneEdited ?? []) if (!entered.has(name) && backends.has(name)) backends.set(name, model);
  if (backends.size !== now.length) return undefined;
  return byService === undefined ? { backends } : { backends, byService };
}

function leave(byService: ServiceBackends, key: string, name: string): void {
  const names = byService.get(key);
  if (names === name) {
    byService.delete(key);
    return;
  }
  const at = names === undefined || typeof names === 'string' ? -1 : names.indexOf(name);
  if (at < 0 || names === undefined || typeof names === 'string') return;
  names.splice(at, 1);
  if (names.length === 1) byService.set(key, names[0] as string);
}

/** `name` joins the names of `key` (names are never repeated: backends has each name once). */
function enter(byService: ServiceBackends, key: string, name: string): void {
  const names = byService.get(key);
  if (names === undefined) byService.set(key, name);
  else if (typeof names === 'string') byService.set(key, [names, name]);
  else names.push(name);
}

/** A store and its generation now, for LaneBase.generations. */
export function storeAt(store: IndexedStore | undefined): { store: IndexedStore | undefined; generation: number } {
  return { store, generation: store?.generation ?? -1 };
}

/** The render gate's exclusions as one key: the guarded reader's (ExclusionFilter.key), so both caches agree on "the same exclusions". */
export function exclusionsKey(exclusions: RenderExclusions | undefined): string {
  return new ExclusionFilter(exclusions).key;
}

/** Backend names by the `namespace/service` of their Service. */
export function indexByService(backends: ReadonlyMap<string, Backend>): ServiceBackends {
  const out: ServiceBackends = new Map();
  for (const backend of backends.values()) enter(out, serviceKey(backend), backend.name);
  return out;
}

/** The namespace of a backend's Service: its own, or the one an HTTPRoute's backendRef names. */
export function serviceNamespace(backend: Backend): string {
  return backend.serviceNamespace ?? backend.namespace;
}

/** One flat string: a template literal this long would be a tree of pieces, twice its size, as a Map key for good. */
function serviceKey(backend: Backend): string {
  return [serviceNamespace(backend), backend.service].join('/');
}

/**
 * Whether a warning of the base's outcome names `service` after a space (` ns/name`, or a longer
 * word starting with it, as `includes` would find): a word after a space that starts with it
 * sorts right at or after it. A service with a space in it is looked for the long way.
 */
export function warnedAbout(base: LaneBase, service: string): boolean {
  const { warnings } = base.outcome;
  if (service.includes(' ')) return warnings.some((warning) => warning.includes(` ${service}`));
  if (base.warnedWords === undefined) {
    const words: string[] = [];
    for (const warning of warnings) for (const word of warning.split(' ').slice(1)) words.push(word);
    base.warnedWords = words.sort();
  }
  const words = base.warnedWords;
  let lo = 0;
  let hi = words.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((words[mid] as string) < service) lo = mid + 1;
    else hi = mid;
  }
  return lo < words.length && (words[lo] as string).startsWith(service);
}

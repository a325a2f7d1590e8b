// What a Gateway build keeps of the previous one's ordering work, so a build after a few routes
// changed orders only those, and each result is the one a cold build's sort gives:
// - RouteOrder: the HTTPRoutes oldest first (then by namespace/name); a list of the same routes
//   (by key and creation time) keeps the previous order with the new objects in place.
// - FrontendRouteCache: each bind's line candidates in precedence order (compareCandidates).
//   Candidates of unchanged routes are the same objects as before and keep their relative order;
//   the new ones are sorted and merged in. Candidates of different routes never compare equal
//   (their claimants differ), so the merge is the stable sort of the whole list; a merge that
//   meets a tie sorts the whole list instead. A candidate's match line is kept with it, except a
//   redirect's, whose name depends on the redirects met before it (computed in order each time).
import type { KubeObject } from '../protocol.js';
import { creationTime } from './claimant.js';
import { compareCandidates, type LineCandidate } from './gateway-lines.js';
import type { GatewayRedirect } from './gateway-model.js';
import { plannedOf, plannedRoutes, type FrontendRoutes, type Planned } from './gateway-routes.js';

/** Over this many new candidates in a bind, it is sorted whole. */
const MAX_MERGED = 256;

export class RouteOrder {
  #list: readonly KubeObject[] | undefined;
  #sorted: { routes: readonly KubeObject[]; keys: readonly string[] } = { routes: [], keys: [] };
  /** Index in the order and creation time, by `namespace/name`. */
  #at = new Map<string, { index: number; created: number }>();

  /** `list` oldest first, then by namespace/name, and the `namespace/name` of each. */
  sorted(list: readonly KubeObject[]): { routes: readonly KubeObject[]; keys: readonly string[] } {
    if (list === this.#list) return this.#sorted;
    const kept = list.length === this.#sorted.routes.length ? this.#reordered(list) : undefined;
    this.#list = list;
    if (kept !== undefined) return (this.#sorted = { routes: kept, keys: this.#sorted.keys });
    const keyed = list.map((route) => ({ route, created: creationTime(route), key: keyOf(route) }));
    keyed.sort((a, b) => a.created - b.created || a.key.localeCompare(b.key));
    this.#sorted = { routes: keyed.map((k) => k.route), keys: keyed.map((k) => k.key) };
    this.#at = new Map(keyed.map((k, index) => [k.key, { index, created: k.created }]));
    return this.#sorted;
  }

  /** The previous order with `list`'s objects, when it holds the same keys with the same creation times. */
  #reordered(list: readonly KubeObject[]): KubeObject[] | undefined {
    const previous = this.#sorted.routes;
    const out = new Array<KubeObject | undefined>(list.length);
    for (const route of list) {
      const key = keyOf(route);
      const at = this.#at.get(key);
      if (at === undefined || out[at.index] !== undefined) return undefined;
      if (previous[at.index] !== route && creationTime(route) !== at.created) return undefined;
      out[at.index] = route;
    }
    return out as KubeObject[];
  }
}

interface BindState {
  readonly sorted: readonly LineCandidate[];
  readonly members: ReadonlySet<LineCandidate>;
}

export class FrontendRouteCache {
  #binds = new Map<string, BindState>();
  readonly #planned = new WeakMap<LineCandidate, Planned>();

  /** The routes of `bind` from its `candidates` (in route order), as frontendRoutes gives them. */
  routes(bind: string, mapPrefix: string, candidates: readonly LineCandidate[], redirect: (r: Omit<GatewayRedirect, 'name'>) => string): FrontendRoutes {
    const sorted = this.#order(this.#binds.get(bind), candidates);
    this.#binds.set(bind, { sorted, members: new Set(sorted) });
    const planned = sorted.map((candidate) => {
      if (candidate.targets.redirect !== undefined) return plannedOf(candidate, redirect);
      let known = this.#planned.get(candidate);
      if (known === undefined) {
        known = plannedOf(candidate, redirect);
        this.#planned.set(candidate, known);
      }
      return known;
    });
    return plannedRoutes(mapPrefix, planned);
  }

  /** Forgets the binds not in `binds`. */
  keep(binds: Iterable<string>): void {
    const live = new Set(binds);
    for (const bind of this.#binds.keys()) if (!live.has(bind)) this.#binds.delete(bind);
  }

  #order(previous: BindState | undefined, candidates: readonly LineCandidate[]): readonly LineCandidate[] {
    if (previous === undefined) return [...candidates].sort(compareCandidates);
    const added = candidates.filter((c) => !previous.members.has(c));
    if (added.length === 0 && candidates.length === previous.sorted.length) return previous.sorted;
    if (added.length > MAX_MERGED) return [...candidates].sort(compareCandidates);
    const present = new Set(candidates);
    const kept = previous.sorted.filter((c) => present.has(c));
    added.sort(compareCandidates);
    const merged: LineCandidate[] = [];
    let from = 0;
    for (const candidate of added) {
      // The first kept candidate that comes after it (binary search over the rest).
      let lo = from;
      let hi = kept.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const order = compareCandidates(kept[mid] as LineCandidate, candidate);
        if (order === 0) return [...candidates].sort(compareCandidates);
        if (order < 0) lo = mid + 1;
        else hi = mid;
      }
      for (let i = from; i < lo; i++) merged.push(kept[i] as LineCandidate);
      merged.push(candidate);
      from = lo;
    }
    for (let i = from; i < kept.length; i++) merged.push(kept[i] as LineCandidate);
    return merged;
  }
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

// The claims a rejected Ingress keeps. The object checks reject a whole Ingress for, say, a typo
// in a security annotation; it then serves nothing, but it must not lose its hosts to a newer
// claim from another namespace (nor their TLS) until it is deleted or fixed. So each rejected
// Ingress of ours keeps one held claim per host of its rules, as old as the Ingress: it takes part
// in host ownership like a route, claims no route key, and the host's unmatched paths answer 503
// (host-fallback.ts). Only hosts that pass the host rules count; a rejected object's other fields
// are never read. An Ingress the routing model leaves out for its size holds its hosts the same
// way (ingress-entry.ts). HeldClaims keeps them across builds and reports what changed; their map lines
// count in the namespace's share of the output (output-budget.ts) like its Ingresses do.
import { describe } from '../store/object-guard.js';
import { isDnsLabel, isHost, isRecord } from '../store/field-rules.js';
import type { KubeObject } from '../protocol.js';
import { creationTime, type Claimant } from './claimant.js';
import { acceptsClass, type ClassPolicy } from './ingress-class.js';
import { HELD_BACKEND, type ModelOptions } from './model.js';
import type { RouteCandidate } from './host-owners.js';

/** The held claims of one rejected Ingress (raw, as its store holds it): one per host of its rules. */
export function heldRoutes(ingress: KubeObject, options: ModelOptions): RouteCandidate[] {
  const namespace = ingress.metadata.namespace;
  const spec = ingress.spec;
  if (!isDnsLabel(namespace) || !isRecord(spec) || !Array.isArray(spec.rules)) return [];
  const owner = describe(ingress);
  const created = options.routeOwnership === 'oldest' ? creationTime(ingress) : 0;
  const hosts = new Set<string>();
  for (const rule of spec.rules as unknown[]) {
    if (!isRecord(rule)) continue;
    if (rule.host === undefined || rule.host === '') hosts.add('');
    else if (isHost(rule.host)) hosts.add(rule.host);
  }
  return heldOn([...hosts], { owner, namespace, created });
}

/** Held claims of `claimant` on `hosts`, one per host, sorted. */
export function heldOn(hosts: readonly string[], claimant: Claimant): RouteCandidate[] {
  return [...new Set(hosts)].sort().map((host) => ({ ...claimant, host, path: '/', exact: false, backend: HELD_BACKEND, held: true }));
}

/** About how many bytes held claims take in the host fallback map. */
export function heldBytes(routes: readonly RouteCandidate[]): number {
  return routes.reduce((sum, route) => sum + HELD_LINE_OVERHEAD + 2 * route.host.length, 0);
}

/** The held claims of one rejected Ingress, as the output budget sees them. */
export interface HeldItem {
  readonly heldFor: KubeObject;
  readonly claimant: Claimant;
  readonly routes: readonly RouteCandidate[];
  /** About how many bytes its host fallback map lines take. */
  readonly outputBytes: number;
}

/** A host fallback map line, besides the host: the backend name, a space, a newline, and the same again should its wildcard be looked up. */
const HELD_LINE_OVERHEAD = 16;

/**
 * Held claims by rejected Ingress, kept across builds, and which of them are in the route index:
 * all but those the namespaces' output budget leaves out (`place`).
 */
export class HeldClaims {
  /** Raw rejected object -> its held claims, while it stays rejected. */
  #byObject = new Map<KubeObject, HeldItem>();
  /** Items left out by the output budget: their routes are not in the route index. */
  readonly #out = new Set<HeldItem>();

  /** Every held claim now. */
  get items(): HeldItem[] {
    return [...this.#byObject.values()];
  }

  /** The held routes in the route index. */
  get routes(): RouteCandidate[] {
    return [...this.#byObject.values()].filter((item) => !this.#out.has(item)).flatMap((item) => item.routes);
  }

  /**
   * Brings the held claims up to `rejected` (the raw Ingresses the guard rejected whole) under
   * the class policy (`reclassify`: it changed, so every object is looked at again); returns the
   * routes to take out of the route index and those to put in.
   */
  update(rejected: readonly KubeObject[], classes: ClassPolicy, options: ModelOptions, reclassify: boolean): { removed: RouteCandidate[]; added: RouteCandidate[] } {
    const removed: RouteCandidate[] = [];
    if (reclassify) {
      removed.push(...this.routes);
      this.#byObject.clear();
      this.#out.clear();
    }
    const next = new Map<KubeObject, HeldItem>();
    const added: RouteCandidate[] = [];
    for (const object of rejected) {
      let item = this.#byObject.get(object);
      if (item === undefined) {
        const routes = acceptsClassSafely(object, classes) ? heldRoutes(object, options) : [];
        const first = routes[0];
        item = {
          heldFor: object,
          claimant: first ?? { owner: '', namespace: '', created: 0 },
          routes,
          outputBytes: heldBytes(routes),
        };
        added.push(...routes);
      }
      next.set(object, item);
    }
    for (const [object, item] of this.#byObject) {
      if (next.has(object)) continue;
      if (!this.#out.delete(item)) removed.push(...item.routes);
    }
    this.#byObject = next;
    return { removed, added };
  }

  /** Leaves the `shed` items out of the route index (and puts back the others); returns the routes to move. */
  place(shed: ReadonlySet<HeldItem>): { removed: RouteCandidate[]; added: RouteCandidate[] } {
    const removed: RouteCandidate[] = [];
    const added: RouteCandidate[] = [];
    for (const item of this.#byObject.values()) {
      const out = this.#out.has(item);
      if (out === shed.has(item)) continue;
      if (out) {
        this.#out.delete(item);
        added.push(...item.routes);
      } else {
        this.#out.add(item);
        removed.push(...item.routes);
      }
    }
    return { removed, added };
  }

  clear(): void {
    this.#byObject.clear();
    this.#out.clear();
  }
}

/** Whether a rejected object names one of our classes; its fields may be of any shape. */
function acceptsClassSafely(object: KubeObject, classes: ClassPolicy): boolean {
  const annotations = (object.metadata as { annotations?: unknown }).annotations;
  if (annotations !== undefined && !isRecord(annotations)) return false;
  if (object.spec !== undefined && !isRecord(object.spec)) return false;
  return acceptsClass(object, classes);
}

// The claims a rejected Ingress keeps. The object checks reject a whole Ingress for, say, a typo
// in a security annotation; it then serves nothing, but it must not lose its hosts to a newer
// claim from another namespace (nor their TLS) until it is deleted or fixed. So each rejected
// Ingress of ours keeps one held claim per host of its rules, as old as the Ingress: it takes part
// in host ownership like a route, claims no route key, and the host's unmatched paths answer 503
// (host-fallback.ts). Only hosts that pass the host rules count; a rejected object's other fields
// are never read. HeldClaims keeps them across builds and reports what changed.
import { describe } from '../store/object-guard.js';
import { isDnsLabel, isHost, isRecord } from '../store/field-rules.js';
import type { KubeObject } from '../protocol.js';
import { creationTime } from './claimant.js';
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
  return [...hosts].sort().map((host) => ({ owner, namespace, created, host, path: '/', exact: false, backend: HELD_BACKEND, held: true }));
}

/** Held routes by rejected Ingress, kept across builds. */
export class HeldClaims {
  /** Raw rejected object -> its held routes, while it stays rejected. */
  #byObject = new Map<KubeObject, readonly RouteCandidate[]>();

  /** Every held route now. */
  get routes(): RouteCandidate[] {
    return [...this.#byObject.values()].flat();
  }

  /**
   * Brings the held claims up to `rejected` (the raw Ingresses the guard rejected whole) under
   * the class policy (`reclassify`: it changed, so every object is looked at again); returns the
   * routes that went away and the ones that came.
   */
  update(rejected: readonly KubeObject[], classes: ClassPolicy, options: ModelOptions, reclassify: boolean): { removed: RouteCandidate[]; added: RouteCandidate[] } {
    const removed: RouteCandidate[] = [];
    if (reclassify) {
      removed.push(...this.routes);
      this.#byObject.clear();
    }
    const next = new Map<KubeObject, readonly RouteCandidate[]>();
    const added: RouteCandidate[] = [];
    for (const object of rejected) {
      let routes = this.#byObject.get(object);
      if (routes === undefined) {
        routes = acceptsClassSafely(object, classes) ? heldRoutes(object, options) : [];
        added.push(...routes);
      }
      next.set(object, routes);
    }
    for (const [object, routes] of this.#byObject) if (!next.has(object)) removed.push(...routes);
    this.#byObject = next;
    return { removed, added };
  }

  clear(): void {
    this.#byObject.clear();
  }
}

/** Whether a rejected object names one of our classes; its fields may be of any shape. */
function acceptsClassSafely(object: KubeObject, classes: ClassPolicy): boolean {
  const annotations = (object.metadata as { annotations?: unknown }).annotations;
  if (annotations !== undefined && !isRecord(annotations)) return false;
  if (object.spec !== undefined && !isRecord(object.spec)) return false;
  return acceptsClass(object, classes);
}

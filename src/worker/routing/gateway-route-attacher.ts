// The first step of a Gateway build: each HTTPRoute's entry (gateway-route-entries.ts) attached
// in the build's context, its backends dropped when what they read changed, and the attached
// routes in route order. A step after a few routes changed costs those routes: when the order is
// the last step's with other objects at some places (RouteOrder), under the same context, with
// backends kept, the step visits only the places whose object changed and the routes whose
// backends were dropped, and patches the last step's attached list at their places. It visits
// every route, as a cold build does, when a visited route logged or logs a warning, or is
// attached where it was not (or the reverse): those move the places of the routes after it.
// Either way the result is the one a walk over every route gives.
import type { KubeObject } from '../protocol.js';
import type { EntryDependents } from './entry-dependents.js';
import type { GatewayContext } from './gateway-context.js';
import type { SortedRoutes } from './gateway-route-cache.js';
import type { RouteEntry } from './gateway-route-entries.js';
import type { Backend } from './model.js';
import type { LogEntry } from './recorded-reads.js';

/** Over this many routes to visit, every route is visited. */
const MAX_VISITED = 64;

export interface AttachInput {
  readonly order: SortedRoutes;
  /** The place of a route in the order, by key. */
  readonly indexOf: (key: string) => number | undefined;
  readonly context: GatewayContext;
  /** Whether route backends are kept (else every route's are built again). */
  readonly keepBackends: boolean;
  /** The routes whose backends are built again, when kept. */
  readonly dirty: ReadonlySet<string> | undefined;
  readonly dependents: EntryDependents;
  readonly attach: (route: KubeObject) => RouteEntry;
}

export interface AttachStep {
  /** The entries attached to some parent, in route order. */
  readonly attached: readonly RouteEntry[];
  /** Their attachment warnings and rejections, in route order. */
  readonly log: readonly LogEntry[];
  /** A route's claims changed (or a route with claims is gone). */
  readonly claimsChanged: boolean;
  /** The last backends of the routes whose backends are built again. */
  readonly prior: ReadonlyMap<string, readonly Backend[]>;
  /** When `attached` is the last step's (`from`) but at the places `touched` (ascending): only those entries may have other parts. */
  readonly patch: { readonly from: readonly RouteEntry[]; readonly touched: readonly number[] } | undefined;
}

interface LastStep {
  readonly routes: readonly KubeObject[];
  readonly context: GatewayContext;
  readonly attached: readonly RouteEntry[];
  /** The place in `attached` of each route of `routes`, -1 when it is attached nowhere. */
  readonly attachedAt: Int32Array;
  /** The places in `routes` of the routes that logged while attaching. */
  readonly logged: ReadonlySet<number>;
  readonly log: readonly LogEntry[];
}

/** What one step carries from route to route. */
interface Walk {
  claimsChanged: boolean;
  readonly prior: Map<string, readonly Backend[]>;
}

export class RouteAttacher {
  /** What the routes contributed to the last build, by `namespace/name`. */
  readonly entries = new Map<string, RouteEntry>();
  #last: LastStep | undefined;
  /** Marks the entries of the routes of the current step. */
  #stamp = 0;

  /** Forgets every entry (no class of ours). */
  clear(): void {
    this.entries.clear();
    this.#last = undefined;
  }

  step(input: AttachInput): AttachStep {
    const walk: Walk = { claimsChanged: false, prior: new Map() };
    return this.#patched(input, walk) ?? this.#full(input, walk);
  }

  /** The route at `i` brought up to date: attached again when its object or the context changed, its backends dropped when they are not kept. */
  #visit(input: AttachInput, walk: Walk, i: number): RouteEntry {
    const { routes, keys } = input.order;
    const route = routes[i] as KubeObject;
    const key = keys[i] as string;
    const before = this.entries.get(key);
    let entry = before;
    if (entry === undefined || entry.route !== route || entry.context !== input.context) {
      entry = input.attach(route);
      if (before?.route === route) entry.backends = before.backends;
      else if (before?.backends !== undefined) {
        input.dependents.unregister({ key, deps: before.backends.deps });
        walk.prior.set(key, before.backends.built.backends);
      }
      if (entry.claims !== (before?.claims ?? '')) walk.claimsChanged = true;
      this.entries.set(key, entry);
    }
    if (entry.backends !== undefined && (!input.keepBackends || input.dirty?.has(key) === true)) {
      input.dependents.unregister({ key, deps: entry.backends.deps });
      walk.prior.set(key, entry.backends.built.backends);
      entry.backends = undefined;
    }
    return entry;
  }

  /** The last step patched at the few routes that changed; undefined when every route must be visited (the routes visited so far stay valid). */
  #patched(input: AttachInput, walk: Walk): AttachStep | undefined {
    const last = this.#last;
    const { changes, routes } = input.order;
    if (last === undefined || changes === undefined || changes.base !== last.routes || last.context !== input.context || !input.keepBackends || routes.length !== last.routes.length) return undefined;
    const places = new Set(changes.at);
    for (const key of input.dirty ?? []) {
      const i = input.indexOf(key);
      if (i === undefined || this.entries.get(key) === undefined) return undefined;
      places.add(i);
    }
    if (places.size > MAX_VISITED) return undefined;
    for (const i of places) if (last.logged.has(i)) return undefined;
    const visited: [number, RouteEntry][] = [];
    for (const i of places) {
      const entry = this.#visit(input, walk, i);
      if (entry.attachLog.length > 0 || (entry.attached.length > 0) !== (last.attachedAt[i] as number) >= 0) return undefined;
      visited.push([i, entry]);
    }
    const attached = last.attached.slice();
    const touched: number[] = [];
    for (const [i, entry] of visited) {
      const at = last.attachedAt[i] as number;
      if (at < 0) continue;
      attached[at] = entry;
      touched.push(at);
    }
    touched.sort((a, b) => a - b);
    this.#last = { ...last, routes, attached };
    return { attached, log: last.log, claimsChanged: walk.claimsChanged, prior: walk.prior, patch: { from: last.attached, touched } };
  }

  /** Every route visited in order, and the entries of routes gone dropped. */
  #full(input: AttachInput, walk: Walk): AttachStep {
    const { routes } = input.order;
    const stamp = ++this.#stamp;
    const attached: RouteEntry[] = [];
    const attachedAt = new Int32Array(routes.length).fill(-1);
    const logged = new Set<number>();
    const log: LogEntry[] = [];
    for (let i = 0; i < routes.length; i++) {
      const entry = this.#visit(input, walk, i);
      entry.seen = stamp;
      if (entry.attachLog.length > 0) {
        logged.add(i);
        log.push(...entry.attachLog);
      }
      if (entry.attached.length > 0) {
        attachedAt[i] = attached.length;
        attached.push(entry);
      }
    }
    if (this.entries.size > routes.length) {
      for (const [key, entry] of this.entries) {
        if (entry.seen === stamp) continue;
        if (entry.claims !== '') walk.claimsChanged = true;
        if (entry.backends !== undefined) input.dependents.unregister({ key, deps: entry.backends.deps });
        this.entries.delete(key);
      }
    }
    this.#last = { routes, context: input.context, attached, attachedAt, logged, log };
    return { attached, log, claimsChanged: walk.claimsChanged, prior: walk.prior, patch: undefined };
  }
}

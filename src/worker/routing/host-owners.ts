// Who owns which host across namespaces: a host, with every path on it, belongs to the namespace
// of its first claimant (claimant.ts order), and a wildcard `*.d` goes together with the hosts one
// label under `d`. HostOwners decides it route by route for a one-go build; OwnershipGroup keeps
// the routes of one host or domain counted by namespace, so RouteIndex knows in O(1) whether any
// claim can be refused at all.
import { compareClaimants, type Claimant } from './claimant.js';
import type { TableRoute } from './route-table.js';

/** An Ingress path as a route of the route table (route-table.ts), with its claimant. */
export interface RouteCandidate extends Claimant, TableRoute {
  /**
   * A claim held for a rejected Ingress (held-claims.ts): it takes part in ownership, so no
   * other namespace gets the host while the Ingress exists, but it claims no route key.
   */
  readonly held?: boolean;
}

/** Who owns a host, and whether a held claim of that namespace is on it (its unmatched paths answer 503). */
export interface HostOwner {
  readonly namespace: string;
  readonly held: boolean;
}

/**
 * The ownership groups of a route: its host, and the domain it lies one label under (`d` for
 * `*.d` and for `x.d`), where a wildcard and the hosts it would match meet. Host-less rules are
 * the host ''.
 */
export function groupsOf(route: RouteCandidate): string[] {
  const domain = domainOf(route.host);
  return domain === undefined ? [`host\0${route.host}`] : [`host\0${route.host}`, `domain\0${domain}`];
}

/**
 * The routes of one ownership group, counted by namespace, so whether it is contested costs O(1).
 * Held compactly, as a cluster has one or two groups per host: almost every group has one route
 * from one namespace, so its routes array is sized to fit and the count per namespace is a Map
 * only once a second namespace joins.
 */
/** Groups with fewer routes grow their list by exact-size copies (see add). */
const SMALL_GROUP = 8;

export class OwnershipGroup {
  #routes: RouteCandidate[] = [];
  /** The namespace counted in #count while no other namespace has a route here. */
  #namespace: string | undefined;
  #count = 0;
  /** Routes per namespace, once a group holds more than one namespace. */
  #namespaces: Map<string, number> | undefined;
  #wildcards = 0;

  constructor(readonly isDomain: boolean) {}

  get routes(): readonly RouteCandidate[] {
    return this.#routes;
  }

  add(route: RouteCandidate): void {
    // A literal holds one element; the first push of an empty array would reserve 17, and so
    // would the first push onto a literal: small groups grow by exact-size copies.
    if (this.#routes.length === 0) this.#routes = [route];
    else if (this.#routes.length < SMALL_GROUP) this.#routes = this.#routes.concat([route]);
    else this.#routes.push(route);
    if (this.#namespaces !== undefined) this.#namespaces.set(route.namespace, (this.#namespaces.get(route.namespace) ?? 0) + 1);
    else if (this.#count === 0 || this.#namespace === route.namespace) {
      this.#namespace = route.namespace;
      this.#count++;
    } else {
      this.#namespaces = new Map([[this.#namespace as string, this.#count], [route.namespace, 1]]);
      this.#namespace = undefined;
      this.#count = 0;
    }
    if (isWildcard(route.host)) this.#wildcards++;
  }

  /** Removes `route`; false when it was not in the group. */
  remove(route: RouteCandidate): boolean {
    const at = this.#routes.indexOf(route);
    if (at < 0) return false;
    this.#routes.splice(at, 1);
    if (this.#namespaces === undefined) {
      if (--this.#count === 0) this.#namespace = undefined;
    } else {
      const left = (this.#namespaces.get(route.namespace) ?? 1) - 1;
      if (left === 0) this.#namespaces.delete(route.namespace);
      else this.#namespaces.set(route.namespace, left);
      if (this.#namespaces.size === 1) {
        for (const [namespace, count] of this.#namespaces) {
          this.#namespace = namespace;
          this.#count = count;
        }
        this.#namespaces = undefined;
      }
    }
    if (isWildcard(route.host)) this.#wildcards--;
    return true;
  }

  /** How many namespaces have a route in the group. */
  get #namespaceCount(): number {
    return this.#namespaces?.size ?? (this.#count > 0 ? 1 : 0);
  }

  /**
   * Whether its claimants may refuse one another: a host claimed from two namespaces, or a
   * domain where a wildcard and the hosts under it come from two. While no group is, the owners
   * accept every route.
   */
  get contested(): boolean {
    return this.#namespaceCount > 1 && (!this.isDomain || this.#wildcards > 0);
  }

  get hasWildcard(): boolean {
    return this.#wildcards > 0;
  }

  /** The namespace of its oldest route from a namespace other than `namespace` (as HostOwners would name it). */
  otherThan(namespace: string): string | undefined {
    if (this.#namespaces === undefined && (this.#count === 0 || this.#namespace === namespace)) return undefined;
    let oldest: RouteCandidate | undefined;
    for (const route of this.#routes) {
      if (route.namespace !== namespace && (oldest === undefined || compareClaimants(route, oldest) < 0)) oldest = route;
    }
    return oldest?.namespace;
  }
}

/** `d` for `*.d` and `x.d`; undefined for '' and one-label hosts. */
export function domainOf(host: string): string | undefined {
  const dot = host.indexOf('.');
  return dot < 0 ? undefined : host.slice(dot + 1);
}

export function isWildcard(host: string): boolean {
  return host.startsWith('*.');
}

/**
 * Which namespace owns which host, decided route by route in claimant order (oldest first). A
 * host belongs to the namespace of its first route, whatever the path: a newer namespace can take
 * neither the host nor a path under it. A wildcard `*.d` and the hosts one label under `d` belong
 * together (the wildcard would serve them): the wildcard is refused while another namespace holds
 * such a host, and such a host while another namespace holds the wildcard.
 */
export class HostOwners {
  /** Host -> its first accepted route. */
  readonly #hosts = new Map<string, RouteCandidate>();
  /** Domain -> its first accepted wildcard route. */
  readonly #wildcards = new Map<string, RouteCandidate>();
  /** Domain -> namespace -> the first accepted route of that namespace on a host one label under it. */
  readonly #underDomain = new Map<string, Map<string, RouteCandidate>>();
  /** Hosts with an accepted held claim. */
  readonly #held = new Set<string>();

  /** Every host with an accepted route, with its owner. */
  *owned(): IterableIterator<[string, HostOwner]> {
    for (const [host, first] of this.#hosts) yield [host, { namespace: first.namespace, held: this.#held.has(host) }];
  }

  /** The route that keeps `route` from its host; undefined when `route` is accepted (and recorded). */
  claim(route: RouteCandidate): RouteCandidate | undefined {
    const holder = this.holderOf(route.host, route.namespace);
    if (holder !== undefined) return holder;
    if (!this.#hosts.has(route.host)) this.#hosts.set(route.host, route);
    if (route.held === true) this.#held.add(route.host);
    const domain = domainOf(route.host);
    if (domain === undefined) return undefined;
    if (isWildcard(route.host)) {
      if (!this.#wildcards.has(domain)) this.#wildcards.set(domain, route);
    } else {
      let byNamespace = this.#underDomain.get(domain);
      if (byNamespace === undefined) {
        byNamespace = new Map();
        this.#underDomain.set(domain, byNamespace);
      }
      if (!byNamespace.has(route.namespace)) byNamespace.set(route.namespace, route);
    }
    return undefined;
  }

  /** The first accepted route that keeps `namespace` from `host`, if any. */
  holderOf(host: string, namespace: string): RouteCandidate | undefined {
    const first = this.#hosts.get(host);
    if (first !== undefined) return first.namespace === namespace ? undefined : first;
    const domain = domainOf(host);
    if (domain === undefined) return undefined;
    if (!isWildcard(host)) {
      const wildcard = this.#wildcards.get(domain);
      return wildcard !== undefined && wildcard.namespace !== namespace ? wildcard : undefined;
    }
    for (const [other, held] of this.#underDomain.get(domain) ?? []) if (other !== namespace) return held;
    return undefined;
  }
}

export function hostLabel(host: string): string {
  return host === '' ? 'the rules without a host' : `host ${host}`;
}

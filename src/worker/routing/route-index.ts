// Host and path route tables, built in one go (`routeTables`) or kept up to date route by route
// (`RouteIndex`). A host, every path on it, belongs to the namespace of its first claimant
// (claimant.ts; see HostOwners), so no other namespace can take a path of it; their claims are
// refused with a warning. Within it, the first claimant of a key in precedence order (Exact
// before Prefix, then age, then rule order) serves it. While no key or host is contested the
// tables are exactly the claims, updated by binary search; when some are, the one-go build runs,
// so warnings come out exactly as a cold build has them.
import { compareClaimants } from './claimant.js';
import { domainOf, groupsOf, hostLabel, HostOwners, isWildcard, OwnershipGroup, type HostOwner, type RouteCandidate } from './host-owners.js';
import type { RouteEntry, RouteTables, RoutingModel } from './model.js';
import { findingOf, type Warn } from './findings.js';
import { basePath, claimTables, comparatorOf, eachTable, routeClaims, TABLES, type TableName } from './route-table.js';
import { recordKeptEnds } from '../store/list-replacements.js';
import { lowerBound } from '../store/sorted-search.js';

export type { RouteCandidate } from './host-owners.js';

/** The tables of `routes`, with a warning per ignored route. */
export function routeTables(routes: readonly RouteCandidate[], warn: Warn): RouteTables {
  return buildTables(routes, warn).tables;
}

/** The tables of `routes` and the owners of their hosts, with a warning per ignored route. */
function buildTables(routes: readonly RouteCandidate[], warn: Warn): { tables: RouteTables; owners: HostOwners } {
  const warned = new Set<string>();
  const report = (message: string, route: RouteCandidate): void => {
    // A Prefix route claims two keys; its conflict is reported once.
    if (!warned.has(message)) {
      warned.add(message);
      warn(message, findingOf(route, 'HostConflict', 'path'));
    }
  };
  const refuse = (route: RouteCandidate, holder: RouteCandidate): void => {
    report(`${route.owner}: route ${route.host}${route.path} is already served by ${holder.owner}; ignored`, route);
  };
  const byAge = [...routes].sort(compareClaimants);
  const owners = new HostOwners();
  const accepted: RouteCandidate[] = [];
  for (const route of byAge) {
    const holder = owners.claim(route);
    if (holder === undefined) accepted.push(route);
    // A held claim that loses is no news: its Ingress's rejection is reported already.
    else if (route.held === true) continue;
    else if (holder.held !== true && holder.host === route.host && basePath(holder) === basePath(route)) refuse(route, holder);
    else report(`${route.owner}: route ${route.host}${route.path} is refused: ${hostLabel(holder.host)} belongs to namespace ${holder.namespace} (${holder.owner} claimed it first); ignored`, route);
  }
  // Exact paths first: for the same key, Kubernetes gives an Exact path precedence over a Prefix.
  const ordered = accepted.sort((a, b) => Number(b.exact) - Number(a.exact));
  const tables = claimTables(ordered, (route, holder, exactKey) => {
    if (holder.backend !== route.backend && !(holder.exact && !route.exact && exactKey)) refuse(route, holder);
  });
  return { tables, owners };
}

/**
 * Every key's claimants, and the tables they give. `remove` and `add` record route changes;
 * `tables` then brings the previous tables up to date. Arrays handed out are never modified
 * afterwards (a changed table is a new array; an unchanged one keeps its identity).
 */
export class RouteIndex {
  /**
   * Per table, key -> the route claiming it, or the routes when several do: nearly every key has
   * one claimant, and a one-element array per key cost 56 bytes (30,000 at 10,000 Ingresses).
   * Keyed by the claim's own key string, which the tables' entries then share.
   */
  readonly #claims = new Map<TableName, Map<string, Claimants>>(TABLES.map((name) => [name, new Map()]));
  /** Keys with more than one claimant. */
  #contested = 0;
  /** Ownership group (see groupsOf) -> the routes in it. */
  readonly #groups = new Map<string, OwnershipGroup>();
  /** Groups whose claimants may refuse one another (OwnershipGroup.contested): the one-go build decides them. */
  #shared = 0;
  /** The host owners of the last one-go build; undefined while the tables are the claims. */
  #owners: HostOwners | undefined;
  /** Keys whose claimants changed since the last `tables` call. */
  #touched = new Map<string, { table: TableName; key: string }>();
  /**
   * Every key in #claims counts as touched, besides #touched: set when routes are added to an
   * index without claims (a cold build), which then records nothing per key it adds.
   */
  #claimsTouched = false;
  /** Hosts whose group changed since the last `ownersChanged` call, with their owner then (see ownerOf). */
  #touchedHosts = new Map<string, HostOwner | undefined>();
  /** Whether the owners may differ from those of the last `ownersChanged` call whatever the touched hosts say. */
  #ownersUnknown = true;

  get contestedKeys(): number {
    return this.#contested + this.#shared;
  }

  clear(): void {
    for (const claims of this.#claims.values()) claims.clear();
    this.#groups.clear();
    this.#contested = 0;
    this.#shared = 0;
    this.#owners = undefined;
    this.#touched.clear();
    this.#claimsTouched = false;
    this.#touchedHosts.clear();
    this.#ownersUnknown = true;
  }

  /**
   * Whether hostOwners() may give other owners than at the previous call of this method (true
   * on the first call). Exact while no group is contested: the owner of each host touched since
   * is compared with its owner then; while one is, or just after, the answer is always true.
   */
  ownersChanged(): boolean {
    const contested = this.#contested > 0 || this.#shared > 0 || this.#owners !== undefined;
    let changed = this.#ownersUnknown || contested;
    if (!changed) {
      for (const [host, before] of this.#touchedHosts) {
        const now = this.#ownerOf(host);
        if (now?.namespace !== before?.namespace || now?.held !== before?.held) {
          changed = true;
          break;
        }
      }
    }
    this.#touchedHosts.clear();
    this.#ownersUnknown = contested;
    return changed;
  }

  /** The owner hostOwners() gives `host` while no group is contested. */
  #ownerOf(host: string): HostOwner | undefined {
    const group = this.#groups.get(`host\0${host}`);
    const first = group?.routes[0];
    return group === undefined || first === undefined ? undefined : { namespace: first.namespace, held: group.routes.some((route) => route.held === true) };
  }

  add(routes: readonly RouteCandidate[]): void {
    if (this.#noClaims()) this.#claimsTouched = true;
    const record = !this.#claimsTouched;
    for (const route of routes) {
      for (const { table, key } of routeClaims(route)) {
        const claims = this.#claims.get(table) as Map<string, Claimants>;
        const claimants = claims.get(key);
        if (claimants === undefined) claims.set(key, route);
        else if (Array.isArray(claimants)) claimants.push(route);
        else {
          claims.set(key, [claimants, route]);
          this.#contested++;
        }
        if (record) this.#touched.set(`${table}\0${key}`, { table, key });
      }
      for (const group of groupsOf(route)) this.#group(group, route, true);
    }
  }

  remove(routes: readonly RouteCandidate[]): void {
    for (const route of routes) {
      for (const { table, key } of routeClaims(route)) {
        const claims = this.#claims.get(table) as Map<string, Claimants>;
        const claimants = claims.get(key);
        if (claimants === route) claims.delete(key);
        else {
          const at = claimants === undefined || !Array.isArray(claimants) ? -1 : claimants.indexOf(route);
          if (at < 0 || !Array.isArray(claimants)) continue;
          claimants.splice(at, 1);
          if (claimants.length === 1) {
            this.#contested--;
            claims.set(key, claimants[0] as RouteCandidate);
          }
        }
        this.#touched.set(`${table}\0${key}`, { table, key });
      }
      for (const group of groupsOf(route)) this.#group(group, route, false);
    }
  }

  /**
   * The namespace whose served routes keep `namespace` from `host` (the host itself, or for a
   * wildcard and the hosts under it, their domain), as the current tables have it; undefined
   * when a route of `namespace` on `host` would be served.
   */
  hostHolder(host: string, namespace: string): string | undefined {
    if (this.#owners !== undefined) return this.#owners.holderOf(host, namespace)?.namespace;
    // No group is contested, so every route is served and each contested-free group answers alone.
    const onHost = this.#groups.get(`host\0${host}`)?.otherThan(namespace);
    if (onHost !== undefined) return onHost;
    const domain = domainOf(host);
    const group = domain === undefined ? undefined : this.#groups.get(`domain\0${domain}`);
    if (group === undefined) return undefined;
    if (isWildcard(host) || group.hasWildcard) return group.otherThan(namespace);
    return undefined;
  }

  /** Every host with a served route (or an accepted held claim), with its owner, as the current tables have it. */
  hostOwners(): Map<string, HostOwner> {
    if (this.#owners !== undefined) return new Map(this.#owners.owned());
    // No group is contested: every host group has one namespace.
    const owners = new Map<string, HostOwner>();
    for (const [id, group] of this.#groups) {
      if (!id.startsWith('host\0')) continue;
      const first = group.routes[0] as RouteCandidate;
      owners.set(id.slice(5), { namespace: first.namespace, held: group.routes.some((route) => route.held === true) });
    }
    return owners;
  }

  #noClaims(): boolean {
    for (const claims of this.#claims.values()) if (claims.size > 0) return false;
    return true;
  }

  /**
   * Adds a route to, or removes it from, an ownership group. When the group stops or starts
   * being contested, every key of its claimants is touched: the one-go build that ran while it
   * was contested may have refused keys that no other route contests.
   */
  #group(id: string, route: RouteCandidate, add: boolean): void {
    // While the owners are unknown anyway, ownersChanged() answers true without the touched hosts.
    if (!this.#ownersUnknown && id.startsWith('host\0')) {
      const host = id.slice(5);
      if (!this.#touchedHosts.has(host)) this.#touchedHosts.set(host, this.#ownerOf(host));
    }
    let group = this.#groups.get(id);
    const before = group?.contested ?? false;
    if (add) {
      if (group === undefined) {
        group = new OwnershipGroup(id.startsWith('domain\0'));
        this.#groups.set(id, group);
      }
      group.add(route);
    } else {
      if (group === undefined || !group.remove(route)) return;
      if (group.routes.length === 0) this.#groups.delete(id);
    }
    const after = group.contested;
    if (before === after) return;
    this.#shared += after ? 1 : -1;
    for (const claimant of group.routes) {
      for (const { table, key } of routeClaims(claimant)) this.#touched.set(`${table}\0${key}`, { table, key });
    }
  }

  /**
   * The tables after the recorded changes. Without contested keys or ownership groups they
   * are the claims (`previous` updated at the touched keys, or all claims when there are no
   * previous tables); otherwise they are built in one go from `all()`, the routes in Ingress
   * order, and conflict warnings go to `warn`.
   */
  tables(previous: RouteTables | undefined, all: () => readonly RouteCandidate[], warn: Warn): RouteTables {
    const touched = this.#touched;
    const claimsTouched = this.#claimsTouched;
    this.#touched = new Map();
    this.#claimsTouched = false;
    if (this.#contested > 0 || this.#shared > 0) {
      const { tables: fresh, owners } = buildTables(all(), warn);
      this.#owners = owners;
      return previous === undefined ? fresh : reuseUnchanged(fresh, previous);
    }
    this.#owners = undefined;
    if (previous === undefined) {
      // Every key has one claimant, which serves it.
      const sorted = (name: TableName): RouteEntry[] => {
        const list: RouteEntry[] = [];
        for (const [key, claimants] of this.#claims.get(name) as Map<string, Claimants>) list.push({ key, backend: firstOf(claimants).backend });
        return list.sort(comparatorOf(name));
      };
      return eachTable(sorted);
    }
    if (claimsTouched) {
      for (const [table, claims] of this.#claims) {
        for (const key of claims.keys()) {
          const id = `${table}\0${key}`;
          if (!touched.has(id)) touched.set(id, { table, key });
        }
      }
    }
    // A table is copied before its first change: the previous arrays are never modified. Each
    // touched key is visited once, so a table that changed at a key differs from the previous
    // one there: a copied table is a changed one, with no comparison of the two.
    // Per copied table, with the entries at its ends no change reached (list-replacements.ts): a
    // keyed loop over the table then finds what changed without comparing every entry.
    const next = new Map<TableName, { list: RouteEntry[]; prefix: number; suffix: number }>();
    for (const { table, key } of touched.values()) {
      const copied = next.get(table);
      const list = copied?.list ?? previous[table];
      const claimants = (this.#claims.get(table) as Map<string, Claimants>).get(key);
      const claimant = claimants === undefined ? undefined : firstOf(claimants);
      const at = position(list, key, comparatorOf(table));
      const present = at < list.length && (list[at] as RouteEntry).key === key;
      if (claimant === undefined ? !present : present && (list[at] as RouteEntry).backend === claimant.backend) continue;
      const copy = copied?.list ?? previous[table].slice();
      if (claimant === undefined) copy.splice(at, 1);
      else if (!present) copy.splice(at, 0, { key, backend: claimant.backend });
      else copy[at] = { key, backend: claimant.backend };
      // The entries after the one changed (or after `at`, for a removal) are kept ones, unless an earlier change reached them.
      const suffix = copy.length - at - (claimant === undefined ? 0 : 1);
      next.set(table, { list: copy, prefix: Math.min(copied?.prefix ?? at, at), suffix: Math.min(copied?.suffix ?? suffix, suffix) });
    }
    for (const [table, { list, prefix, suffix }] of next) recordKeptEnds(list, previous[table], prefix, suffix);
    return eachTable((name) => next.get(name)?.list ?? previous[name]);
  }
}

/** The claimants of a key: one route, or several in the order they claimed it. */
type Claimants = RouteCandidate | RouteCandidate[];

function firstOf(claimants: Claimants): RouteCandidate {
  return Array.isArray(claimants) ? (claimants[0] as RouteCandidate) : claimants;
}

/** Where `key` is, or would go, in a table sorted by `compare` (binary search). */
function position(list: readonly RouteEntry[], key: string, compare: (a: RouteEntry, b: RouteEntry) => number): number {
  return lowerBound(list, { key, backend: '' }, compare);
}

function sameEntries(a: readonly RouteEntry[], b: readonly RouteEntry[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if ((a[i] as RouteEntry).key !== (b[i] as RouteEntry).key || (a[i] as RouteEntry).backend !== (b[i] as RouteEntry).backend) return false;
  }
  return true;
}

/** Keeps the previous array of every table whose content did not change. */
function reuseUnchanged(fresh: RouteTables, previous: RouteTables): RouteTables {
  const pick = (name: TableName): readonly RouteEntry[] => (sameEntries(fresh[name], previous[name]) ? previous[name] : fresh[name]);
  return eachTable(pick);
}

export function tablesOf(model: RoutingModel): RouteTables {
  const { hostExact, hostPrefix, hostRegex, pathExact, pathPrefix } = model;
  return { hostExact, hostPrefix, hostRegex, pathExact, pathPrefix };
}

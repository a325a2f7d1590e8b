// The route tables of one Gateway bind (route-table.ts), kept key by key between builds: each key
// goes to its first claimant in precedence order (compareCandidates), as claimTables gives it.
// `full` builds them from every mapped route; `patch` takes the routes that left and joined the
// maps and touches only the keys they claim: it keeps, per key, its claimants in precedence
// order, so the winner of a key is the first of its list, and the tables' entries in table order
// are spliced where a key's entry changed. An entry whose key kept its backend is the same object
// as before, so the map text of the entries around it is reused ({{#memoEach}}). Candidates of
// different routes never compare equal; a patch that meets a tie gives up and the caller builds
// the tables whole, as a cold build would.
import { compareCandidates, type LineCandidate } from './gateway-lines.js';
import { keyedHost, type Planned } from './gateway-routes.js';
import type { RouteEntry } from './model.js';
import { comparatorOf, routeClaims, TABLES, type Claim, type TableName } from './route-table.js';
import { lowerBound } from '../store/sorted-search.js';

/** A mapped route and the candidate it was planned from (for precedence). */
export interface MappedRoute {
  readonly candidate: LineCandidate;
  readonly route: Planned;
}

interface Table {
  /** Entries in table order; a new array whenever one changes (the model holds the old one). */
  sorted: readonly RouteEntry[];
  readonly byKey: Map<string, RouteEntry>;
}

/** The keys a planned route claims, made once per route. */
const claimCache = new WeakMap<Planned, readonly Claim[]>();

export function claimsOf(route: Planned): readonly Claim[] {
  let claims = claimCache.get(route);
  if (claims === undefined) {
    claims = routeClaims(keyedHost(route), route.scope);
    claimCache.set(route, claims);
  }
  return claims;
}

export class BindTables {
  readonly #tables: ReadonlyMap<TableName, Table>;
  /** Each claimed key's claimants in precedence order, by `table\0key`; made on the first patch after a full build. */
  #claimants: Map<string, MappedRoute[]> | undefined;

  private constructor(tables: ReadonlyMap<TableName, Table>) {
    this.#tables = tables;
  }

  /** The entries of `name` in table order. */
  entries(name: TableName): readonly RouteEntry[] {
    return this.#tables.get(name)?.sorted ?? [];
  }

  /**
   * The tables of `mapped` (in precedence order), as claimTables gives them: entries of keys
   * that kept their backend in `previous` keep their objects.
   */
  static full(previous: BindTables | undefined, mapped: readonly Planned[]): BindTables {
    const winners = new Map<TableName, Map<string, string>>(TABLES.map((name) => [name, new Map()]));
    for (const route of mapped) {
      for (const { table, key } of claimsOf(route)) {
        const won = winners.get(table) as Map<string, string>;
        if (!won.has(key)) won.set(key, route.backend);
      }
    }
    const tables = new Map<TableName, Table>();
    for (const [name, won] of winners) {
      const before = previous === undefined ? undefined : previous.#tables.get(name);
      const byKey = new Map<string, RouteEntry>();
      let same = before !== undefined && before.byKey.size === won.size;
      for (const [key, backend] of won) {
        const kept = before?.byKey.get(key);
        const entry = kept !== undefined && kept.backend === backend ? kept : { key, backend };
        if (entry !== kept) same = false;
        byKey.set(key, entry);
      }
      const sorted = same && before !== undefined ? before.sorted : [...byKey.values()].sort(comparatorOf(name));
      tables.set(name, { sorted, byKey });
    }
    return new BindTables(tables);
  }

  /**
   * Brings the tables from the routes mapped before to those mapped now: `removed` left the
   * maps, `added` joined them, `mapped` gives every route mapped before this change (for the
   * claimants, made once). False when a claimant ties with another: nothing of the tables was
   * changed, and the caller builds them whole.
   */
  patch(removed: readonly MappedRoute[], added: readonly MappedRoute[], mapped: () => readonly MappedRoute[]): boolean {
    const claimants = (this.#claimants ??= claimantsOf(mapped()));
    const touched = new Map<string, { table: TableName; key: string }>();
    const fail = (): false => {
      this.#claimants = undefined;
      return false;
    };
    for (const { route } of removed) {
      for (const { table, key } of claimsOf(route)) {
        const id = `${table}\0${key}`;
        const list = claimants.get(id);
        const at = list === undefined ? -1 : list.findIndex((c) => c.route === route);
        if (list === undefined || at < 0) return fail();
        list.splice(at, 1);
        if (list.length === 0) claimants.delete(id);
        touched.set(id, { table, key });
      }
    }
    for (const claimant of added) {
      for (const { table, key } of claimsOf(claimant.route)) {
        const id = `${table}\0${key}`;
        const list = claimants.get(id);
        if (list === undefined) claimants.set(id, [claimant]);
        else {
          const at = insertionPoint(list, claimant, (a, b) => compareCandidates(a.candidate, b.candidate));
          if (at === undefined) return fail();
          list.splice(at, 0, claimant);
        }
        touched.set(id, { table, key });
      }
    }
    const edits = new Map<TableName, { gone: RouteEntry[]; come: RouteEntry[] }>();
    for (const [id, { table, key }] of touched) {
      const state = this.#tables.get(table) as Table;
      const winner = claimants.get(id)?.[0];
      const old = state.byKey.get(key);
      const entry = winner === undefined ? undefined : old !== undefined && old.backend === winner.route.backend ? old : { key, backend: winner.route.backend };
      if (entry === old) continue;
      let edit = edits.get(table);
      if (edit === undefined) edits.set(table, (edit = { gone: [], come: [] }));
      if (old !== undefined) edit.gone.push(old);
      if (entry === undefined) state.byKey.delete(key);
      else {
        state.byKey.set(key, entry);
        edit.come.push(entry);
      }
    }
    for (const [table, { gone, come }] of edits) {
      const state = this.#tables.get(table) as Table;
      const compare = comparatorOf(table);
      const sorted = state.sorted.slice();
      // Keys are unique in a table: each entry has one place.
      for (const entry of gone) {
        const at = lowerBound(sorted, entry, compare);
        if (sorted[at] !== entry) throw new Error(`the ${table} table lost the entry of ${entry.key}`);
        sorted.splice(at, 1);
      }
      for (const entry of come) sorted.splice(lowerBound(sorted, entry, compare), 0, entry);
      state.sorted = sorted;
    }
    return true;
  }
}

/** Each key's claimants, in the order of `mapped` (precedence order). */
function claimantsOf(mapped: readonly MappedRoute[]): Map<string, MappedRoute[]> {
  const out = new Map<string, MappedRoute[]>();
  for (const claimant of mapped) {
    for (const { table, key } of claimsOf(claimant.route)) {
      const id = `${table}\0${key}`;
      const list = out.get(id);
      if (list === undefined) out.set(id, [claimant]);
      else list.push(claimant);
    }
  }
  return out;
}

export { lowerBound };

/** Where `item` goes in `list` (in order); undefined when it ties with an item of the list. */
export function insertionPoint<T>(list: readonly T[], item: T, compare: (a: T, b: T) => number): number | undefined {
  const at = lowerBound(list, item, compare);
  return at < list.length && compare(list[at] as T, item) === 0 ? undefined : at;
}

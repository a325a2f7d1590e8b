// The per-route pass of a Gateway build without route limits, kept so the next one visits only
// the routes whose parts changed: when the routes attached are the same entries in the same
// order, under the same context and host ownership, and only a few of them have parts (owned
// hostnames, backends, lines or status) other than those the last pass read (a changed route
// object is a new entry with new parts), the last pass's
// results are copied and patched at those routes' places: their status, their budget item,
// their served backends, the listeners' attached counts, and what they serve (ServedLines).
// It gives up (and the builder visits every route, as a cold build does) when a changed route
// logged or logs a warning, or changes whether it has a budget item or served backends: those
// move the places of everything after it.
import type { RouteEntry } from './gateway-route-entries.js';
import type { GatewayContext } from './gateway-context.js';
import type { HostOwnership } from './gateway-ownership.js';
import type { RouteStatus } from './gateway-model.js';
import type { Backend } from './model.js';
import type { LogEntry } from './recorded-reads.js';
import type { RouteBudgetItem } from './route-budget.js';
import type { ServedLines } from './gateway-served-lines.js';

/** Over this many changed routes, every route is visited. */
const MAX_PATCHED = 64;

/** What one route gave the pass. */
export interface RouteVisit {
  readonly owned: RouteEntry['owned'];
  readonly backends: RouteEntry['backends'];
  readonly lines: RouteEntry['lines'];
  readonly status: RouteEntry['status'];
  /** Its place in `items`, -1 when it has none; its place in `served`, -1 when it serves no backends. */
  readonly item: number;
  readonly served: number;
  /** It counts on the listeners it attaches to (not refused). */
  readonly counted: boolean;
  /** It logged something. */
  readonly logged: boolean;
}

export interface RoutePass {
  readonly context: GatewayContext;
  readonly ownership: HostOwnership;
  readonly entries: readonly RouteEntry[];
  readonly visits: readonly RouteVisit[];
  readonly items: readonly RouteBudgetItem[];
  readonly served: readonly (readonly Backend[])[];
  readonly routeStatus: readonly RouteStatus[];
  readonly log: readonly LogEntry[];
  /** The attached counts of the context's listeners (bound and unserved) after the pass. */
  readonly counts: ReadonlyMap<{ attached: number }, number>;
}

/** The listeners whose attached counts a build resets: every bound listener, and every unbound one (its certificate), which counts the routes attached to it too. */
function countedListeners(context: GatewayContext): { attached: number }[] {
  const out: { attached: number }[] = [];
  for (const listeners of context.byBind.values()) for (const listener of listeners) out.push(listener);
  for (const entry of context.entries) for (const l of entry.listenerStatus) if (l.unserved !== undefined) out.push(l.unserved);
  return out;
}

/** A route's visit record, as the pass left its parts. */
function visitOf(entry: RouteEntry, item: number, served: number, counted: boolean): RouteVisit {
  const logged = (entry.owned?.log.length ?? 0) + (entry.backends?.log.length ?? 0) + (entry.lines?.log.length ?? 0) > 0;
  return { owned: entry.owned, backends: entry.backends, lines: entry.lines, status: entry.status, item, served, counted, logged };
}

function sameParts(entry: RouteEntry, visit: RouteVisit): boolean {
  return entry.owned === visit.owned && entry.backends === visit.backends && entry.lines === visit.lines && entry.status === visit.status;
}

/**
 * The indexes of the routes of `attached` whose parts changed since `pass`, when it can be
 * patched; undefined when every route must be visited. `patch`, when `attached` is the pass's
 * entries but at the places `touched` (ascending), limits the search to those.
 */
export function changedRoutes(
  pass: RoutePass | undefined,
  attached: readonly RouteEntry[],
  context: GatewayContext,
  ownership: HostOwnership,
  patch?: { readonly from: readonly RouteEntry[]; readonly touched: readonly number[] },
): number[] | undefined {
  if (pass === undefined || pass.context !== context || pass.ownership !== ownership || pass.entries.length !== attached.length) return undefined;
  const changed: number[] = [];
  const { entries, visits } = pass;
  if (patch !== undefined && patch.from === entries) {
    for (const i of patch.touched) {
      if (sameParts(attached[i] as RouteEntry, visits[i] as RouteVisit)) continue;
      if ((visits[i] as RouteVisit).logged || changed.length >= MAX_PATCHED) return undefined;
      changed.push(i);
    }
    return changed;
  }
  for (let i = 0; i < attached.length; i++) {
    const entry = attached[i] as RouteEntry;
    if (entry.key !== (entries[i] as RouteEntry).key) return undefined;
    if (sameParts(entry, visits[i] as RouteVisit)) continue;
    if ((visits[i] as RouteVisit).logged || changed.length >= MAX_PATCHED) return undefined;
    changed.push(i);
  }
  return changed;
}

/** One changed route's new contribution, as the builder's visit gives it. */
export interface RouteOutcome {
  readonly item: RouteBudgetItem | undefined;
  readonly served: readonly Backend[] | undefined;
  readonly counted: boolean;
}

/** Every route of `attached` visited in order, as a cold build does. */
export function fullPass(attached: readonly RouteEntry[], context: GatewayContext, ownership: HostOwnership, visit: (entry: RouteEntry) => RouteOutcome, servedLines: ServedLines): RoutePass {
  servedLines.begin();
  for (const listener of countedListeners(context)) listener.attached = 0;
  const served: (readonly Backend[])[] = [];
  const items: RouteBudgetItem[] = [];
  const routeStatus: RouteStatus[] = [];
  const log: LogEntry[] = [];
  const visits: RouteVisit[] = [];
  for (const entry of attached) {
    const outcome = visit(entry);
    const { owned, lines, backends } = entry as Required<RouteEntry>;
    if (owned.log.length > 0) log.push(...owned.log);
    if (backends.log.length > 0) log.push(...backends.log);
    if (lines.log.length > 0) log.push(...lines.log);
    if (outcome.counted) {
      for (const a of owned.attachments) a.listener.attached++;
      for (const u of owned.unserved) u.attached++;
    }
    if (outcome.item !== undefined) items.push(outcome.item);
    if (outcome.served !== undefined) served.push(outcome.served);
    visits.push(visitOf(entry, outcome.item === undefined ? -1 : items.length - 1, outcome.served === undefined ? -1 : served.length - 1, outcome.counted));
    servedLines.serve(entry.key, outcome.counted && lines.own.length > 0 ? lines : undefined);
    routeStatus.push((entry.status as NonNullable<RouteEntry['status']>).status);
  }
  servedLines.end();
  const counts = new Map(countedListeners(context).map((l) => [l, l.attached]));
  return { context, ownership, entries: attached, visits, items, served, routeStatus, log, counts };
}

/**
 * `pass` patched at `changed` by `visit` (which brings the route's parts up to date and tells
 * what it contributes); undefined when a changed route logs or moves places (the caller visits
 * every route then: the parts `visit` refreshed are kept and valid).
 */
export function patchedPass(pass: RoutePass, attached: readonly RouteEntry[], changed: readonly number[], visit: (entry: RouteEntry) => RouteOutcome, servedLines: ServedLines): RoutePass | undefined {
  const outcomes: RouteOutcome[] = [];
  for (const i of changed) {
    const entry = attached[i] as RouteEntry;
    const before = pass.visits[i] as RouteVisit;
    const outcome = visit(entry);
    const after = visitOf(entry, before.item, before.served, outcome.counted);
    if (after.logged || (outcome.item === undefined) !== (before.item < 0) || (outcome.served === undefined) !== (before.served < 0)) return undefined;
    outcomes.push(outcome);
  }
  const visits = pass.visits.slice();
  const items = pass.items.slice();
  const served = pass.served.slice();
  const routeStatus = pass.routeStatus.slice();
  const counts = new Map(pass.counts);
  const add = (entry: RouteVisit, by: number): void => {
    const owned = entry.owned as NonNullable<RouteEntry['owned']>;
    for (const a of owned.attachments) counts.set(a.listener, (counts.get(a.listener) ?? 0) + by);
    for (const u of owned.unserved) counts.set(u, (counts.get(u) ?? 0) + by);
  };
  servedLines.beginPatch();
  changed.forEach((i, n) => {
    const entry = attached[i] as RouteEntry;
    const before = pass.visits[i] as RouteVisit;
    const outcome = outcomes[n] as RouteOutcome;
    if (before.counted) add(before, -1);
    const after = visitOf(entry, before.item, before.served, outcome.counted);
    if (after.counted) add(after, 1);
    visits[i] = after;
    if (outcome.item !== undefined) items[before.item] = outcome.item;
    if (outcome.served !== undefined) served[before.served] = outcome.served;
    routeStatus[i] = (entry.status as NonNullable<RouteEntry['status']>).status;
    const lines = entry.lines as NonNullable<RouteEntry['lines']>;
    servedLines.serve(entry.key, outcome.counted && lines.own.length > 0 ? lines : undefined);
  });
  for (const [listener, count] of counts) listener.attached = count;
  return { ...pass, entries: attached, visits, items, served, routeStatus, counts };
}

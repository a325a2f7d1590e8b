// The health-checked server-slot budget of a routing model. HAProxy holds a file descriptor for
// every server slot with a health check, empty ones included, and will not start when they leave
// too few for connections; so past ModelOptions.maxServerSlotsTotal (values.fdHardLimit / 2) the
// namespace holding the most slots gives up its newest Ingress's or HTTPRoute's servers, with a
// warning.
import type { IngressEntry } from './ingress-entry.js';
import { EntryTally } from './entry-tally.js';
import { shedLargest } from './namespace-shares.js';
import type { RouteBudgetItem } from './route-budget.js';

export class SlotBudget {
  readonly #budget: number | undefined;
  /** Health-checked server slots of each entry's backends. */
  readonly #slotCounts = new WeakMap<IngressEntry, number>();
  /** The entries' slots, kept per entry between builds: while they fit, none is starved. */
  readonly #slots = new EntryTally<IngressEntry>((entry) => this.#slotsOf(entry));

  constructor(budget: number | undefined) {
    this.#budget = budget;
  }

  /**
   * The entries whose backends get no servers this build, each with its warning. HAProxy holds a
   * descriptor for every health-checked server slot, empty ones included, and will not start
   * when they leave too few for connections; so past ModelOptions.maxServerSlotsTotal the
   * namespace that holds the most slots gives up those of its newest Ingress, again and again
   * until the rest fit (namespace-shares.ts). Its routes stay: its hosts answer 503 until the
   * slots fit again.
   */
  starve(entries: readonly IngressEntry[], routes: readonly RouteBudgetItem[] = []): Map<IngressEntry | RouteBudgetItem, string> {
    const budget = this.#budget;
    if (budget === undefined) return new Map();
    let asked = this.#slots.update(entries);
    for (const route of routes) asked += route.slots;
    if (asked <= budget) return new Map();
    return starveSlots(budget, entries, routes, (entry) => this.#slotsOf(entry));
  }

  #slotsOf(entry: IngressEntry): number {
    let slots = this.#slotCounts.get(entry);
    if (slots === undefined) {
      // Only health-checked slots hold a descriptor (`haproxy.org/check: "false"` frees them).
      slots = entry.backends.reduce((sum, backend) => sum + (backend.options.check ? backend.servers.length : 0), 0);
      this.#slotCounts.set(entry, slots);
    }
    return slots;
  }
}

/** What SlotBudget.starve decides, computed whole over every item (`slotsOfEntry`: an entry's health-checked slots). */
export function starveSlots(budget: number, entries: readonly IngressEntry[], routes: readonly RouteBudgetItem[], slotsOfEntry: (entry: IngressEntry) => number): Map<IngressEntry | RouteBudgetItem, string> {
  const starved = new Map<IngressEntry | RouteBudgetItem, string>();
  const items: (IngressEntry | RouteBudgetItem)[] = routes.length === 0 ? [...entries] : [...entries, ...routes];
  const slotsOf = (item: IngressEntry | RouteBudgetItem): number => ('kind' in item ? item.slots : slotsOfEntry(item));
  const { shed, total } = shedLargest(items, budget, slotsOf, (item) => item.claimant);
  const all = routes.length === 0 ? 'all Ingresses' : 'all Ingresses and HTTPRoutes';
  for (const entry of shed) {
    starved.set(
      entry,
      `${entry.claimant.owner}: its backends get no servers (its ${'kind' in entry ? 'requests' : 'hosts'} answer 503): the health-checked server slots of ${all}, ${total} in all, are over ` +
        `${budget} (values.fdHardLimit / 2; HAProxy holds a descriptor for each), and namespace ${entry.claimant.namespace} holds the most; ` +
        'raise fdHardLimit (and the descriptor limit), lower serverSlots, or turn checks off where not needed (haproxy.org/check: "false")',
    );
  }
  return starved;
}

// The health-checked server-slot budget of a routing model. HAProxy holds a file descriptor for
// every server slot with a health check, empty ones included, and will not start when they leave
// too few for connections; so past ModelOptions.maxServerSlotsTotal (values.fdHardLimit / 2) the
// namespace holding the most slots gives up its newest Ingress's servers, with a warning.
import { compareClaimants } from './claimant.js';
import type { IngressEntry } from './ingress-entry.js';

export class SlotBudget {
  readonly #budget: number | undefined;
  /** Health-checked server slots of each entry's backends. */
  readonly #slotCounts = new WeakMap<IngressEntry, number>();

  constructor(budget: number | undefined) {
    this.#budget = budget;
  }

  /**
   * The entries whose backends get no servers this build, each with its warning. HAProxy holds a
   * descriptor for every health-checked server slot, empty ones included, and will not start
   * when they leave too few for connections; so past ModelOptions.maxServerSlotsTotal the
   * namespace that holds the most slots gives up those of its newest Ingress, again and again
   * until the rest fit. The largest holder pays, so no tenant can starve the others by adding
   * backends; the newest first within it, so growing never takes slots from an older Ingress of
   * its own. Its routes stay: its hosts answer 503 until the slots fit again.
   */
  starve(entries: readonly IngressEntry[]): Map<IngressEntry, string> {
    const starved = new Map<IngressEntry, string>();
    const budget = this.#budget;
    if (budget === undefined) return starved;
    let total = 0;
    const byNamespace = new Map<string, { slots: number; entries: IngressEntry[] }>();
    for (const entry of entries) {
      const slots = this.#slotsOf(entry);
      if (slots === 0) continue;
      total += slots;
      const held = byNamespace.get(entry.claimant.namespace);
      if (held === undefined) byNamespace.set(entry.claimant.namespace, { slots, entries: [entry] });
      else {
        held.slots += slots;
        held.entries.push(entry);
      }
    }
    if (total <= budget) return starved;
    const all = total;
    const sorted = new Set<string>();
    while (total > budget) {
      let namespace = '';
      let most = -1;
      for (const [name, held] of byNamespace) if (held.slots > most || (held.slots === most && name < namespace)) [namespace, most] = [name, held.slots];
      const held = byNamespace.get(namespace) as { slots: number; entries: IngressEntry[] };
      if (!sorted.has(namespace)) {
        held.entries.sort((a, b) => compareClaimants(a.claimant, b.claimant));
        sorted.add(namespace);
      }
      const entry = held.entries.pop() as IngressEntry;
      const slots = this.#slotsOf(entry);
      held.slots -= slots;
      total -= slots;
      if (held.entries.length === 0) byNamespace.delete(namespace);
      starved.set(
        entry,
        `${entry.claimant.owner}: its backends get no servers (its hosts answer 503): the health-checked server slots of all Ingresses, ${all} in all, are over ` +
          `${budget} (values.fdHardLimit / 2; HAProxy holds a descriptor for each), and namespace ${namespace} holds the most; ` +
          'raise fdHardLimit (and the descriptor limit), lower serverSlots, or turn checks off where not needed (haproxy.org/check: "false")',
      );
    }
    return starved;
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

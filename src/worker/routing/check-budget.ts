// The health checks of all backends share one rate. A tenant chooses how often its servers are
// checked (check-interval, down to 100 ms) and how many servers it has, so without a bound the
// checks alone could take HAProxy's CPU from every tenant's traffic: 2,000 servers checked every
// 100 ms (20,000 checks a second) took a third of a core on HAProxy 2.6, and the descriptor budget
// allows 32,768 checked slots (327,000 checks a second at 100 ms). So when the checked slots of
// all backends together would be checked more than CHECKS_PER_SECOND times a second at the
// shortest interval, a check-interval below the shared floor is raised to it (a doubling step of
// 100 ms, so the floor changes seldom). Every slot counts, disabled ones too: a slot is enabled
// through the Runtime API without a reload, and checked from then on.
import type { Backend } from './model.js';

/** Checks a second all backends together may ask for at their shortest intervals. */
export const CHECKS_PER_SECOND = 20_000;
/** The shortest check-interval the annotation allows, and the first step of the floor. */
const BASE_INTERVAL_MS = 100;

/** The shortest interval (ms) `slots` checked slots may use: 100 ms doubled until they fit in `rate` checks a second. */
export function intervalFloor(slots: number, rate = CHECKS_PER_SECOND): number {
  let floor = BASE_INTERVAL_MS;
  while ((slots * 1000) / floor > rate) floor *= 2;
  return floor;
}

/**
 * Raises the check interval of backends below the floor (`Backend.checkInterval`, set only
 * then). Each backend keeps one copy per interval, and an unchanged list comes back as the
 * previous array, so unchanged backends keep their identity (and their memo blocks).
 */
export class CheckBudget {
  readonly #copies = new WeakMap<Backend, Backend>();
  #last: readonly Backend[] | undefined;

  apply(backends: readonly Backend[]): readonly Backend[] {
    let slots = 0;
    for (const backend of backends) if (backend.options.check) slots += backend.servers.length;
    const floor = intervalFloor(slots);
    let changed = false;
    const adjusted = backends.map((backend) => {
      const asked = backend.options.checkInterval;
      const wanted = backend.options.check && asked !== undefined && asked < floor ? floor : undefined;
      const own = backend.checkInterval === wanted ? backend : this.#copy(backend, wanted);
      if (own !== backend) changed = true;
      return own;
    });
    const result = changed ? adjusted : backends;
    const last = this.#last;
    if (last !== undefined && last.length === result.length && result.every((b, i) => b === last[i])) return last;
    this.#last = result;
    return result;
  }

  #copy(backend: Backend, interval: number | undefined): Backend {
    const cached = this.#copies.get(backend);
    if (cached !== undefined && cached.checkInterval === interval) return cached;
    const copy: Backend = { ...backend, checkInterval: interval };
    if (interval === undefined) delete (copy as { checkInterval?: number }).checkInterval;
    Object.freeze(copy);
    this.#copies.set(backend, copy);
    return copy;
  }
}

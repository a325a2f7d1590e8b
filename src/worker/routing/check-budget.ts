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
import { recordReplacements, replacedPositions } from '../store/list-replacements.js';

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
  /** The input of the last call, its checked slots and the floor they gave. */
  #input: readonly Backend[] = [];
  #slots = 0;
  #floor = BASE_INTERVAL_MS;

  apply(backends: readonly Backend[]): readonly Backend[] {
    const last = this.#last;
    // The same list but for a few backends: their slots are taken out and put in, and while the
    // floor stays, only they are adjusted (what the whole pass below gives for the others is
    // what it gave the last time).
    if (last !== undefined && backends.length === this.#input.length && backends.length === last.length) {
      const input = this.#input;
      // The places replaced since the last list when that is recorded (rate-limit-tables.ts),
      // else every place where the two differ.
      const changed = replacedPositions(backends, input);
      let slots = this.#slots;
      for (const i of changed) slots += checkedSlotsOf(backends[i] as Backend) - checkedSlotsOf(input[i] as Backend);
      this.#input = backends;
      this.#slots = slots;
      if (intervalFloor(slots) === this.#floor) {
        let result: Backend[] | undefined;
        for (const i of changed) {
          const own = this.#adjusted(backends[i] as Backend, this.#floor);
          if (own === last[i]) continue;
          result ??= last.slice();
          result[i] = own;
        }
        if (result === undefined) return last;
        // The origin index then looks at these positions alone (list-replacements.ts).
        recordReplacements(result, last, changed);
        this.#last = result;
        return result;
      }
    }
    return this.#whole(backends);
  }

  #whole(backends: readonly Backend[]): readonly Backend[] {
    let slots = 0;
    for (const backend of backends) slots += checkedSlotsOf(backend);
    const floor = intervalFloor(slots);
    this.#input = backends;
    this.#slots = slots;
    this.#floor = floor;
    let changed = false;
    const adjusted = backends.map((backend) => {
      const own = this.#adjusted(backend, floor);
      if (own !== backend) changed = true;
      return own;
    });
    const result = changed ? adjusted : backends;
    const last = this.#last;
    if (last !== undefined && last.length === result.length && result.every((b, i) => b === last[i])) return last;
    this.#last = result;
    return result;
  }

  /** The backend with its check interval raised to `floor` where it asks for less. */
  #adjusted(backend: Backend, floor: number): Backend {
    const asked = backend.options.checkInterval;
    const wanted = backend.options.check && asked !== undefined && asked < floor ? floor : undefined;
    return backend.checkInterval === wanted ? backend : this.#copy(backend, wanted);
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

function checkedSlotsOf(backend: Backend): number {
  return backend.options.check ? backend.servers.length : 0;
}

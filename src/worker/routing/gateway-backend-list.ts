// The route backends of a Gateway build sorted by name, and their server-slots lines, kept from
// the previous build. A build hands in each served route's backends in route order; lists that
// are the same arrays as before keep their places, a list replaced by one of the same names puts
// its new objects in the old places, and anything else (a route or backend added or gone, a name
// met twice) sorts the whole set by name as a cold build does (a later backend of a name wins).
// Slot lines are kept by position and made again only for the backends put in place.
import type { Backend } from './model.js';
import { backendSlots, slotLine } from './server-slots.js';

/** Over this many replaced lists, the set is sorted whole. */
const MAX_PATCHED = 64;

export class GatewayBackendList {
  #lists: readonly (readonly Backend[])[] = [];
  #sorted: Backend[] = [];
  /** Position of each name in `#sorted`; undefined when a name was met twice. */
  #index: Map<string, number> | undefined;
  /** The slot line of each backend of `#sorted`. */
  #lines: string[] = [];
  #slotText = '';

  /**
   * The backends of `lists` sorted by name, and their slot-file lines in that order. `places`,
   * when `lists` is the last call's but at these places, limits the comparison to them.
   */
  of(lists: readonly (readonly Backend[])[], places?: readonly number[]): { sorted: readonly Backend[]; slotText: string } {
    const patched = this.#patch(lists, places);
    if (patched === undefined) {
      const byName = new Map<string, Backend>();
      let count = 0;
      for (const list of lists) {
        for (const backend of list) byName.set(backend.name, backend);
        count += list.length;
      }
      this.#sorted = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      this.#index = count === byName.size ? new Map(this.#sorted.map((b, i) => [b.name, i])) : undefined;
      this.#lines = this.#sorted.map(lineOf);
    } else if (!patched) {
      return { sorted: this.#sorted, slotText: this.#slotText };
    }
    this.#lists = lists;
    this.#slotText = this.#lines.join('');
    return { sorted: this.#sorted, slotText: this.#slotText };
  }

  /**
   * The slots of backend `name` as backendSlots reads them from the slot text of the last call
   * (undefined: it has no line there), from its own line; null when that cannot be told so (a
   * name met twice).
   */
  slotsOf(name: string): readonly string[] | undefined | null {
    const index = this.#index;
    if (index === undefined) return null;
    const at = index.get(name);
    return at === undefined ? undefined : backendSlots(this.#lines[at] as string, name);
  }

  /** Puts the replaced lists' backends in place: false when nothing changed, undefined when it cannot. */
  #patch(lists: readonly (readonly Backend[])[], places: readonly number[] | undefined): boolean | undefined {
    const index = this.#index;
    const before = this.#lists;
    if (index === undefined || lists.length !== before.length) return undefined;
    const changed: number[] = [];
    const count = places?.length ?? lists.length;
    for (let n = 0; n < count; n++) {
      const i = places === undefined ? n : (places[n] as number);
      if (lists[i] === before[i]) continue;
      if (changed.length === MAX_PATCHED) return undefined;
      const a = before[i] as readonly Backend[];
      const b = lists[i] as readonly Backend[];
      if (a.length !== b.length || a.some((backend, j) => backend.name !== (b[j] as Backend).name)) return undefined;
      changed.push(i);
    }
    if (changed.length === 0) return false;
    const sorted = [...this.#sorted];
    const lines = [...this.#lines];
    for (const i of changed) {
      for (const backend of lists[i] as readonly Backend[]) {
        const at = index.get(backend.name) as number;
        if (sorted[at] !== backend) lines[at] = lineOf(backend);
        sorted[at] = backend;
      }
    }
    this.#sorted = sorted;
    this.#lines = lines;
    return true;
  }
}

function lineOf(backend: Backend): string {
  return slotLine(backend.name, backend.servers.map((s) => (s.enabled ? s.address : '')));
}

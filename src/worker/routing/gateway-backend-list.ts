// The route backends of a Gateway build sorted by name, and their server-slots lines, kept from
// the previous build: the same backends give the same list and text, backends replaced under the
// same names keep the order, and each backend's slot line is made once per backend object.
import type { Backend } from './model.js';
import { slotLine } from './server-slots.js';

export class GatewayBackendList {
  #sorted: readonly Backend[] = [];
  #slotText = '';
  readonly #lines = new WeakMap<Backend, string>();

  /** `backends` (by name) sorted by name, and their slot-file lines in that order. */
  of(backends: ReadonlyMap<string, Backend>): { sorted: readonly Backend[]; slotText: string } {
    let sorted: Backend[] | undefined;
    let same = backends.size === this.#sorted.length;
    if (same) {
      for (let i = 0; i < this.#sorted.length; i++) {
        const before = this.#sorted[i] as Backend;
        const now = backends.get(before.name);
        if (now === undefined) {
          sorted = undefined;
          same = false;
          break;
        }
        if (now !== before) {
          sorted ??= this.#sorted.slice(0, i);
          same = false;
        }
        sorted?.push(now);
      }
    }
    if (same) return { sorted: this.#sorted, slotText: this.#slotText };
    sorted ??= [...backends.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.#sorted = sorted;
    this.#slotText = sorted.map((b) => this.#lineOf(b)).join('');
    return { sorted, slotText: this.#slotText };
  }

  #lineOf(backend: Backend): string {
    let line = this.#lines.get(backend);
    if (line === undefined) {
      line = slotLine(backend.name, backend.servers.map((s) => (s.enabled ? s.address : '')));
      this.#lines.set(backend, line);
    }
    return line;
  }
}

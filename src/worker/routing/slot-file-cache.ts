// The server-slot file as the builder reads and writes it, with its caches: a baseline's slot
// file is parsed once, not per build, and each backend object's line is made once while it lives.
import type { Backend } from './model.js';
import { parseSlotFile, slotLine } from './server-slots.js';

export class SlotFileCache {
  /** Slot-file line of each backend object. */
  readonly #lines = new WeakMap<Backend, string>();
  /** The last slot file parsed and its text. */
  #parsedText: string | undefined;
  #parsedSlots: ReadonlyMap<string, readonly string[]> = new Map();

  /** The slots of a baseline's slot file; the map is shared between builds, so never modified. */
  parse(text: string | undefined): ReadonlyMap<string, readonly string[]> {
    if (text === undefined || text === '') return new Map();
    if (text !== this.#parsedText) {
      this.#parsedSlots = parseSlotFile(text);
      this.#parsedText = text;
    }
    return this.#parsedSlots;
  }

  file(backends: readonly Backend[]): string {
    // Joined in one go: a flat string, where appending piece by piece would leave a rope that
    // every later reader (the checksum, the copy to the main thread) has to walk.
    const parts = new Array<string>(backends.length);
    for (let b = 0; b < backends.length; b++) {
      const backend = backends[b] as Backend;
      let line = this.#lines.get(backend);
      if (line === undefined) {
        line = slotLine(backend.name, backend.servers.map((server) => (server.enabled ? server.address : '')));
        this.#lines.set(backend, line);
      }
      parts[b] = line;
    }
    return parts.join('');
  }
}

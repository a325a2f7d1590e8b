// The text of server-slots.txt, kept between builds and updated per changed backend: a backend
// object keeps its identity while its content (its slots included) is unchanged, so a build where
// the backends are the same objects in the same places but for a few splices only those lines
// into the previous text. Otherwise (backends added, removed or moved) the text is joined afresh
// from each backend's line, cached per backend object. Either way the text is one flat string,
// the same as joining every backend's line. The previous render's slot file (the baseline) is
// parsed here too, once per text.
import type { Backend } from './model.js';
import { parseSlotFile, slotLine } from './server-slots.js';

/** Beyond this share of changed backends, joining every line is as cheap as splicing. */
const SPLICE_SHARE = 0.25;

export class SlotFile {
  /** Slot-file line of each backend object. */
  readonly #lines = new WeakMap<Backend, string>();
  /** The last baseline slot file parsed, and its text: parsed once, not per build. */
  #parsedText: string | undefined;
  #parsedSlots: ReadonlyMap<string, readonly string[]> = new Map();
  #previous: { readonly backends: readonly Backend[]; readonly text: string; readonly offsets: Int32Array } | undefined;

  /** The slots of a baseline's slot file; the map is shared between builds, so never modified. */
  parse(text: string | undefined): ReadonlyMap<string, readonly string[]> {
    if (text === undefined || text === '') return new Map();
    if (text !== this.#parsedText) {
      this.#parsedSlots = parseSlotFile(text);
      this.#parsedText = text;
    }
    return this.#parsedSlots;
  }

  /** The slot file of `backends`, in order. */
  text(backends: readonly Backend[]): string {
    const previous = this.#previous;
    if (previous !== undefined && previous.backends === backends) return previous.text;
    const changed = previous === undefined ? undefined : this.#changedPositions(previous.backends, backends);
    const text = changed === undefined ? this.#join(backends) : this.#splice(previous as NonNullable<typeof previous>, backends, changed);
    return text;
  }

  /** Positions whose backend object changed, or undefined when splicing does not pay or does not apply. */
  #changedPositions(before: readonly Backend[], backends: readonly Backend[]): number[] | undefined {
    if (before.length !== backends.length) return undefined;
    const limit = Math.max(1, Math.floor(backends.length * SPLICE_SHARE));
    const changed: number[] = [];
    for (let b = 0; b < backends.length; b++) {
      if (before[b] === backends[b]) continue;
      changed.push(b);
      if (changed.length > limit) return undefined;
    }
    return changed;
  }

  #lineOf(backend: Backend): string {
    let line = this.#lines.get(backend);
    if (line === undefined) {
      line = slotLine(backend.name, backend.servers.map((server) => (server.enabled ? server.address : '')));
      this.#lines.set(backend, line);
    }
    return line;
  }

  #join(backends: readonly Backend[]): string {
    // Joined in one go: a flat string, where appending piece by piece would leave a rope that
    // every later reader (the checksum, the copy to the main thread) has to walk.
    const parts = new Array<string>(backends.length);
    const offsets = new Int32Array(backends.length + 1);
    let at = 0;
    for (let b = 0; b < backends.length; b++) {
      const line = this.#lineOf(backends[b] as Backend);
      parts[b] = line;
      offsets[b] = at;
      at += line.length;
    }
    offsets[backends.length] = at;
    const text = parts.join('');
    this.#previous = { backends, text, offsets };
    return text;
  }

  #splice(previous: { readonly text: string; readonly offsets: Int32Array }, backends: readonly Backend[], changed: readonly number[]): string {
    const offsets = previous.offsets.slice();
    const pieces: string[] = [];
    let from = 0;
    let shift = 0;
    for (let c = 0; c < changed.length; c++) {
      const b = changed[c] as number;
      const line = this.#lineOf(backends[b] as Backend);
      const start = previous.offsets[b] as number;
      const end = previous.offsets[b + 1] as number;
      pieces.push(previous.text.slice(from, start), line);
      from = end;
      // Offsets after b move by the change in length so far.
      const next = c + 1 < changed.length ? (changed[c + 1] as number) : backends.length;
      shift += line.length - (end - start);
      if (shift !== 0) for (let k = b + 1; k <= next; k++) offsets[k] = (previous.offsets[k] as number) + shift;
    }
    pieces.push(previous.text.slice(from));
    const text = pieces.join('');
    this.#previous = { backends, text, offsets };
    return text;
  }
}

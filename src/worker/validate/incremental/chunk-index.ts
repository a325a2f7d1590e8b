// The chunk texts IncrementalValidator has seen, as records of what each phase recorded for
// them, filed by a hash of their first line. A record's text is a slice of the latest
// configuration the chunk was found in: each layout points it at the new configuration (a slice
// costs a few bytes, a copy of the text its whole length), so the records hold no text of their
// own and pin no earlier configuration. Its ops (detached-ops.ts) are copies of their own; its
// first line is held as a number (a copy of the line cost 60 bytes a chunk, 10,000 chunks at
// 10,000 Ingresses), and records whose lines hash alike share an entry, told apart by their texts.
import type { UsageOp } from '../auxiliary/usage-scanner.js';
import type { StructureOp } from '../structure/ops.js';

/** What the phases recorded for one chunk text; each part is computed on first use. */
export interface ChunkRecord {
  /** A slice of the latest configuration that has the chunk (IncrementalValidator moves it to each new one). */
  text: string;
  /** The hash of the first line of `text` (headKey): the key of the ChunkIndex. */
  readonly key: number;
  /** The length of that line, without its newline. */
  readonly headLength: number;
  /** Lines in `text`. */
  readonly lines: number;
  structure: readonly StructureOp[] | undefined;
  usage: readonly UsageOp[] | undefined;
  /** The rendered directories `usage` was scanned for (the scan depends on them). */
  usageKey: string | undefined;
  /** Position in the latest layout: the chunk after it is expected next. -1 for a new chunk. */
  slot: number;
  /** The layout generation that last used the chunk. */
  seen: number;
}

/** The record of a chunk text not seen before (a slice of the configuration it is in); its ops are computed on first use. */
export function newChunk(text: string): ChunkRecord {
  let lines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
  if (text.length > 0 && text.charCodeAt(text.length - 1) !== 10) lines++;
  const newline = text.indexOf('\n');
  const headLength = newline < 0 ? text.length : newline;
  return { text, key: headKey(text, 0, headLength), headLength, lines, structure: undefined, usage: undefined, usageKey: undefined, slot: -1, seen: 0 };
}

/** The ChunkIndex key of the first line text[from, to): its 32-bit FNV-1a hash, a small integer V8 holds unboxed. */
export function headKey(text: string, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash | 0;
}

/**
 * The chunks of the latest layout, found by content. Hashing whole chunk texts would cost a pass
 * over the configuration, so they are filed by a hash of their first line (a section header:
 * short and nearly always distinctive), then compared whole.
 */
export class ChunkIndex {
  /** A key's record, or its records when several chunks share it: most keys have one, and a one-element array costs more than the entry. */
  readonly #byHead = new Map<number, ChunkRecord | ChunkRecord[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The record of `text`, whose first line has the key `key` (headKey). */
  find(key: number, text: string): ChunkRecord | undefined {
    const filed = this.#byHead.get(key);
    if (filed === undefined) return undefined;
    if (!Array.isArray(filed)) return filed.text === text ? filed : undefined;
    for (const record of filed) if (record.text === text) return record;
    return undefined;
  }

  add(record: ChunkRecord): void {
    const filed = this.#byHead.get(record.key);
    if (filed === undefined) this.#byHead.set(record.key, record);
    else if (Array.isArray(filed)) filed.push(record);
    else this.#byHead.set(record.key, [filed, record]);
    this.#size++;
  }

  remove(record: ChunkRecord): void {
    const filed = this.#byHead.get(record.key);
    if (filed === record) {
      this.#byHead.delete(record.key);
      this.#size--;
      return;
    }
    const at = filed === undefined || !Array.isArray(filed) ? -1 : filed.indexOf(record);
    if (at < 0 || !Array.isArray(filed)) return;
    filed.splice(at, 1);
    if (filed.length === 1) this.#byHead.set(record.key, filed[0] as ChunkRecord);
    this.#size--;
  }
}

/**
 * A copy of `s` that does not keep alive the string it was sliced from. V8 represents a slice of
 * a long string as a view into it: a cached name parsed from a chunk would otherwise pin the
 * whole configuration it was first seen in, for as long as the chunk stays unchanged. A short
 * string (a name, a head line) goes through a JSON round trip, which gives one sequential string
 * of the same characters (lone surrogates included) with no header besides its own. A long one
 * is concatenated then sliced: slice() flattens the rope into a string of its own size, and the
 * slice's header is small beside it.
 */
export function detachString(s: string): string {
  return s.length <= SHORT_STRING ? (JSON.parse(JSON.stringify(s)) as string) : (' ' + s).slice(1);
}

/** detachString copies strings up to this length by a JSON round trip. */
const SHORT_STRING = 256;

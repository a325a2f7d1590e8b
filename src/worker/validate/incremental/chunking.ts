// Where IncrementalValidator cuts a configuration: before every line that certainly opens a
// section. The cuts are found without tokenizing ordinary lines (a first-character table of
// section keywords), and an expected chunk is confirmed in place with one string comparison.
import { SECTION_KINDS } from '../keywords.js';
import { CHAR_BACKSLASH, CHAR_DQUOTE, CHAR_SQUOTE, isBlank, tokenizeLine } from '../tokenizer.js';
import type { ChunkRecord } from './chunk-index.js';

/** Section keywords by their first character, for the quick test of opensSection(). */
const SECTION_KINDS_BY_INITIAL: readonly (readonly string[] | undefined)[] = (() => {
  const table: string[][] = [];
  for (const kind of SECTION_KINDS) (table[kind.charCodeAt(0)] ??= []).push(kind);
  return table;
})();

/** Scratch words for the rare opener line that needs the tokenizer. */
const openerWords: string[] = [];

/**
 * Whether the line config[start, end) certainly opens a section: after optional blanks, a
 * section keyword written plainly and followed by a blank or the end of the line, on a line the
 * tokenizer accepts (a line with an unmatched quote is reported and opens nothing). A line it
 * does not recognise (`"backend" x`, `backend#x`) stays inside the previous chunk, which is still
 * exact: the parser opens sections wherever it meets them, only the cut is lost.
 */
function opensSection(config: string, start: number, end: number): boolean {
  let i = start;
  while (i < end && isBlank(config.charCodeAt(i))) i++;
  const candidates = SECTION_KINDS_BY_INITIAL[config.charCodeAt(i)];
  if (candidates === undefined) return false;
  for (const kind of candidates) {
    const after = i + kind.length;
    if (after > end || !config.startsWith(kind, i)) continue;
    if (after < end && !isBlank(config.charCodeAt(after))) continue;
    // Without a quote or a backslash, the tokenizer accepts any line.
    for (let k = after; k < end; k++) {
      const c = config.charCodeAt(k);
      if (c === CHAR_DQUOTE || c === CHAR_SQUOTE || c === CHAR_BACKSLASH) {
        return tokenizeLine(config.slice(start, end), openerWords) === null;
      }
    }
    return true;
  }
  return false;
}

/** Whether the line starting at `pos` opens a section (the end of the text counts as one). */
export function cutsAt(config: string, pos: number): boolean {
  if (pos >= config.length) return true;
  let end = config.indexOf('\n', pos);
  if (end < 0) end = config.length;
  return opensSection(config, pos, end);
}

/**
 * The end of the chunk that starts at `start` (a cut): the start of the next line after it that
 * opens a section, or the end of the text. Every chunk but the last so ends with its newline,
 * and the lines of the chunks are the lines of the configuration.
 */
export function chunkEnd(config: string, start: number): number {
  const len = config.length;
  let pos = config.indexOf('\n', start);
  if (pos < 0) return len;
  pos++;
  while (pos < len) {
    let end = config.indexOf('\n', pos);
    if (end < 0) end = len;
    if (opensSection(config, pos, end)) return pos;
    pos = end + 1;
  }
  return len;
}

/**
 * Whether `record` is the chunk at `pos`: the same text there, and a cut right after it (which
 * chunkEnd() would find: the inner lines of a chunk text never open a section).
 */
export function chunkAt(config: string, pos: number, record: ChunkRecord | undefined): boolean {
  if (record === undefined) return false;
  const end = pos + record.text.length;
  if (end > config.length || config.slice(pos, end) !== record.text) return false;
  return end === config.length || (record.text.charCodeAt(record.text.length - 1) === 10 && cutsAt(config, end));
}

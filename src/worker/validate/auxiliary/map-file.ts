// Reading map and ACL pattern files: one pass over the text into keys, values and line numbers
// (parseMapText), then the two uses of it. Phase 'validation' reads the entries of maps that
// route to backends; phase 'auxiliary' reports entries without a value and repeated keys. Both
// depend on the text alone, which is what lets IncrementalValidator cache them per text.
import { CHAR_HASH, isBlank } from '../tokenizer.js';

/** The entries of a map file that have a value, in file order, as StructureState reads them to check the backends a map routes to. */
export interface MapEntries {
  readonly lines: readonly number[];
  readonly keys: readonly string[];
  readonly values: readonly string[];
  /**
   * The distinct values, when known (IncrementalValidator): if all name backends, no entry needs
   * looking at. Each value found is replaced by the backend's own name string, equal to it: the
   * next call, whose backends mostly come from the same cached chunks, then matches by identity.
   */
  readonly distinctValues?: string[];
}

/**
 * Every entry line of a map or pattern file, in one pass over the text with no per-line copies:
 * the key (first word) and value (the rest, blanks trimmed; '' when absent) of each line that is
 * neither blank nor a comment.
 */
export interface ParsedMap {
  readonly lines: readonly number[];
  readonly keys: readonly string[];
  readonly values: readonly string[];
}

export function parseMapText(text: string, starts?: number[]): ParsedMap {
  const lines: number[] = [];
  const keys: string[] = [];
  const values: string[] = [];
  const len = text.length;
  let pos = 0;
  let lineNo = 0;
  while (pos < len) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = len;
    lineNo++;
    let i = pos;
    while (i < end && isBlank(text.charCodeAt(i))) i++;
    if (i < end && text.charCodeAt(i) !== CHAR_HASH) {
      const keyStart = i;
      while (i < end && !isBlank(text.charCodeAt(i))) i++;
      const keyEnd = i;
      while (i < end && isBlank(text.charCodeAt(i))) i++;
      let valueEnd = end;
      while (valueEnd > i && isBlank(text.charCodeAt(valueEnd - 1))) valueEnd--;
      lines.push(lineNo);
      // Where each entry's line starts, when asked (incremental/map-deltas.ts).
      starts?.push(pos);
      keys.push(text.slice(keyStart, keyEnd));
      values.push(i < valueEnd ? text.slice(i, valueEnd) : '');
    }
    pos = end + 1;
  }
  return { lines, keys, values };
}

/** The entries that have a value. */
function mapEntriesFrom(parsed: ParsedMap): MapEntries {
  if (!parsed.values.includes('')) return parsed;
  const lines: number[] = [];
  const keys: string[] = [];
  const values: string[] = [];
  for (let i = 0; i < parsed.values.length; i++) {
    if (parsed.values[i] === '') continue;
    lines.push(parsed.lines[i] as number);
    keys.push(parsed.keys[i] as string);
    values.push(parsed.values[i] as string);
  }
  return { lines, keys, values };
}

export function mapEntriesOf(text: string): MapEntries {
  return mapEntriesFrom(parseMapText(text));
}

/** Map entries with their distinct values, for a quick all-present test. */
export function mapEntriesWithValues(parsed: ParsedMap): MapEntries {
  const entries = mapEntriesFrom(parsed);
  return { ...entries, distinctValues: [...new Set(entries.values)] };
}

/** An issue of one auxiliary file, before it is given the file's name. */
export interface LineIssue {
  readonly line: number;
  readonly message: string;
}

/** The issues of one map file: they depend on its text and on whether it is used only as a pattern file. */
export function mapIssuesOf(text: string, patternOnly: boolean): readonly LineIssue[] {
  return mapIssuesFrom(parseMapText(text), patternOnly);
}

/** Entries without a value, and repeated keys. A pattern file's lines are keys alone: no issues. */
export function mapIssuesFrom(parsed: ParsedMap, patternOnly: boolean): readonly LineIssue[] {
  const issues: LineIssue[] = [];
  if (patternOnly) return issues;
  // Only the keys are kept: memory grows with the map, never with the value text.
  const seen = new Map<string, number>();
  for (let i = 0; i < parsed.keys.length; i++) {
    const key = parsed.keys[i] as string;
    const lineNo = parsed.lines[i] as number;
    if (parsed.values[i] === '') {
      issues.push({ line: lineNo, message: `map entry '${key}' has no value (expected '<key> <value>')` });
      continue;
    }
    const first = seen.get(key);
    if (first !== undefined) {
      issues.push({ line: lineNo, message: `duplicate key '${key}' (first defined at line ${first})` });
    } else {
      seen.set(key, lineNo);
    }
  }
  return issues;
}

// The line cap: a wall behind the object guard's value caps. HAProxy reads map and pattern files
// through a buffer of `tune.bufsize` bytes (16,384 by default) and splits a longer line, whose tail
// then becomes an entry of its own: a route an attacker wrote. So no line of the configuration,
// a map or an auxiliary file may come near it: lines longer than the config's `tune.bufsize`
// minus a margin are errors naming the file and line. Lines are scanned once per distinct text
// (IncrementalValidator caches the scans per chunk and per file text).
import type { AuxiliaryFiles } from '../protocol.js';
import { CONFIG_FILE, MAX_ERRORS_PER_PHASE, type ValidationIssue } from './issue-sink.js';

/** HAProxy's default `tune.bufsize`. */
export const DEFAULT_BUFSIZE = 16_384;
/** Kept free below `tune.bufsize`: the line's end of line and terminator, and room to spare. */
export const LINE_MARGIN = 1024;
/** Lines shorter than this are never recorded: no buffer size makes them too long. */
const WATCHED_LENGTH = 512;

/** A line longer than WATCHED_LENGTH: 1-based line number within its text, and its length. */
export interface LongLine {
  readonly line: number;
  readonly length: number;
}

/** The longest line allowed under `bufsize`. */
export function maxLineLength(bufsize: number): number {
  return Math.max(WATCHED_LENGTH, bufsize - Math.min(LINE_MARGIN, Math.floor(bufsize / 4)));
}

/**
 * The lines of `text` longer than WATCHED_LENGTH characters. Lines are not walked one by one:
 * every line that ends within WATCHED_LENGTH characters of where the scan stands is short, so
 * the scan moves past the last newline there (one native search per window, not per line), and
 * newlines are counted only up to a long line found. `starts`, when given, receives where each
 * long line starts in `text`.
 */
export function longLines(text: string, starts?: number[]): readonly LongLine[] {
  const found: LongLine[] = [];
  const len = text.length;
  let pos = 0;
  /** Newlines before `countedTo`. */
  let counted = 0;
  let countedTo = 0;
  while (pos < len) {
    const last = text.lastIndexOf('\n', pos + WATCHED_LENGTH);
    if (last >= pos) {
      pos = last + 1;
      continue;
    }
    let end = text.indexOf('\n', pos);
    if (end < 0) end = len;
    if (end - pos > WATCHED_LENGTH) {
      for (let at = text.indexOf('\n', countedTo); at >= 0 && at < pos; at = text.indexOf('\n', at + 1)) counted++;
      countedTo = pos;
      found.push({ line: counted + 1, length: end - pos });
      starts?.push(pos);
    }
    pos = end + 1;
  }
  return found;
}

/** The last `tune.bufsize` a text sets, or undefined. */
export function bufsizeIn(text: string): number | undefined {
  let found: number | undefined;
  for (const match of text.matchAll(/^[ \t]*tune\.bufsize[ \t]+(\d+)/gm)) found = Number(match[1]);
  return found;
}

/** One text's long lines, placed: `offset` lines precede it in its file. */
export interface PlacedLines {
  readonly file: string;
  readonly offset: number;
  readonly lines: readonly LongLine[];
}

/** The errors for every long line, under the config's buffer size, capped like a phase's errors. */
export function lineIssues(placed: readonly PlacedLines[], bufsize: number | undefined): { errors: ValidationIssue[]; warnings: string[] } {
  const size = bufsize !== undefined && bufsize > 0 ? bufsize : DEFAULT_BUFSIZE;
  const limit = maxLineLength(size);
  const errors: ValidationIssue[] = [];
  let omitted = 0;
  for (const { file, offset, lines } of placed) {
    for (const { line, length } of lines) {
      if (length <= limit) continue;
      if (errors.length >= MAX_ERRORS_PER_PHASE) {
        omitted++;
        continue;
      }
      errors.push({
        phase: 'validation',
        file,
        line: offset + line,
        message: `line of ${length} characters is longer than HAProxy reads whole (tune.bufsize ${size} leaves ${limit})`,
      });
    }
  }
  return { errors, warnings: omitted > 0 ? [`validation: ${omitted} further over-long line(s) omitted`] : [] };
}

/** The long lines of every auxiliary file, as `maps/<name>`, `files/<name>`, `certs/<name>`. */
export function auxiliaryLongLines(aux: AuxiliaryFiles, scan: (text: string, file: string) => readonly LongLine[]): PlacedLines[] {
  const placed: PlacedLines[] = [];
  for (const [kind, dir] of [['maps', 'maps'], ['files', 'files'], ['certificates', 'certs']] as const) {
    for (const [name, text] of Object.entries((aux as Partial<AuxiliaryFiles> | undefined)?.[kind] ?? {})) {
      if (typeof text !== 'string') continue;
      const file = `${dir}/${name}`;
      const lines = scan(text, file);
      if (lines.length > 0) placed.push({ file, offset: 0, lines });
    }
  }
  return placed;
}

/** A phase report with the line cap's errors first (they are the cause of what follows them). */
export function withLineIssues(lines: { errors: ValidationIssue[]; warnings: string[] }, report: { readonly errors: readonly ValidationIssue[]; readonly warnings: readonly string[] }): { errors: readonly ValidationIssue[]; warnings: readonly string[] } {
  if (lines.errors.length === 0 && lines.warnings.length === 0) return report;
  return { errors: [...lines.errors, ...report.errors], warnings: [...report.warnings, ...lines.warnings] };
}

/** The line cap over a whole configuration and its files, computed afresh. */
export function checkLineLengths(config: string, aux: AuxiliaryFiles): { errors: ValidationIssue[]; warnings: string[] } {
  if (typeof config !== 'string') return { errors: [], warnings: [] };
  const placed: PlacedLines[] = [{ file: CONFIG_FILE, offset: 0, lines: longLines(config) }, ...auxiliaryLongLines(aux, (text) => longLines(text))];
  return lineIssues(placed, bufsizeIn(config));
}

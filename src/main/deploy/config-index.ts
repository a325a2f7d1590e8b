// A linear index of an HAProxy config, for the config diff: where each section starts and ends.
// Building it touches each line once with indexOf and a character test (most lines are never
// sliced), so a 10 MB config indexes in a few milliseconds; only the sections whose text differs
// between two configs are then parsed into body lines and server lines (`parseSection`). Map
// files get a one-pass index too: entries in file order, keyed by their first word.

import { commonPrefix, commonSuffix } from '../../worker/render/text-window.js';

export { commonPrefix, commonSuffix };

/** A `server` line of a backend or listen section. */
export interface ServerLine {
  readonly name: string;
  /** Host part of the address: an IP (IPv6 without brackets) or an opaque token. */
  readonly host: string;
  readonly port: number | undefined;
  /** False when the address has a form the Runtime API's `addr ... port ...` cannot express. */
  readonly addressSettable: boolean;
  /** The `weight` parameter; HAProxy's default is 1. */
  readonly weight: number | undefined;
  /** `disabled`: the server starts in maintenance. */
  readonly disabled: boolean;
  /** Every other parameter in order, single-spaced: a change here needs a reload. */
  readonly params: string;
  /** The line as written. */
  readonly line: string;
}

export interface ConfigSection {
  /** Unique within the config: the header, single-spaced, plus `#n` for the n-th repeat. */
  readonly key: string;
  /** The proxy name of a backend or listen section (the `<backend>` of `set server`). */
  readonly proxy: string | undefined;
  /** Line number (1-based) of the header in the indexed text, for reasons. */
  readonly lineNumber: number;
  /** Offsets of the section's text (header included) in the config: [start, end). */
  readonly start: number;
  readonly end: number;
}

export interface ConfigIndex {
  readonly text: string;
  /** The text before the first section (comments, blank lines) ends here. */
  readonly preambleEnd: number;
  readonly sections: readonly ConfigSection[];
}

/** A section's lines, header excluded: server lines parsed, the rest as written. */
export interface ParsedSection {
  readonly body: readonly string[];
  readonly servers: readonly ServerLine[];
}

const SECTION_KEYWORDS = new Set([
  'global',
  'defaults',
  'frontend',
  'backend',
  'listen',
  'userlist',
  'peers',
  'resolvers',
  'mailers',
  'program',
  'http-errors',
  'ring',
  'cache',
  'log-forward',
  'crt-store',
  'traces',
]);
/** Lines whose first letter starts no section keyword (every `server` line) are never sliced. */
const KEYWORD_INITIALS = new Set([...SECTION_KEYWORDS].map((k) => k.charCodeAt(0)));

/** Indexes a config (or a window of one: line numbers then count from the window) in one pass (see the header). */
export function indexConfig(text: string): ConfigIndex {
  const sections: { -readonly [K in keyof ConfigSection]: ConfigSection[K] }[] = [];
  const seen = new Map<string, number>();
  let preambleEnd = text.length;
  let lineStart = 0;
  let lineNumber = 0;
  while (lineStart < text.length) {
    lineNumber++;
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    // As in HAProxy's own parser, a section keyword opens a section at any indentation; no
    // keyword of a section body shares a name with one.
    const i = skipBlanks(text, lineStart, lineEnd);
    if (i < lineEnd && KEYWORD_INITIALS.has(text.charCodeAt(i))) {
      const j = skipWord(text, i, lineEnd);
      const keyword = text.slice(i, j);
      if (SECTION_KEYWORDS.has(keyword)) {
        const previous = sections[sections.length - 1];
        if (previous === undefined) preambleEnd = lineStart;
        else previous.end = lineStart;
        // `keyword name` without a regular expression: a big config has tens of thousands of headers.
        const nameStart = skipBlanks(text, j, lineEnd);
        const nameEnd = skipWord(text, nameStart, lineEnd);
        const name = text.slice(nameStart, nameEnd);
        const header =
          skipBlanks(text, nameEnd, lineEnd) < lineEnd ? text.slice(i, lineEnd).trim().split(/\s+/).join(' ') : name === '' ? keyword : `${keyword} ${name}`;
        const repeat = seen.get(header) ?? 0;
        seen.set(header, repeat + 1);
        const proxy = keyword === 'backend' || keyword === 'listen' ? name : undefined;
        sections.push({ key: repeat === 0 ? header : `${header}#${repeat}`, proxy, lineNumber, start: lineStart, end: text.length });
      }
    }
    lineStart = lineEnd + 1;
  }
  return { text, preambleEnd, sections };
}

/** The part of two configs that differs, widened to whole sections: identical before and after. */
export interface ChangedWindow {
  readonly start: number;
  /** End of the window in the first config; in the second it ends as far from the end. */
  readonly endA: number;
  readonly endB: number;
}

/**
 * Where two configs differ, as whole sections: everything before `start` and after the window's
 * end is the same text in both. The common prefix and suffix are found by comparing 64 KiB slices
 * (native comparisons, no per-character loop), so a render that changed one backend of a 10 MB
 * config is indexed only around that backend.
 */
export function changedWindow(a: string, b: string): ChangedWindow {
  const prefix = commonPrefix(a, b);
  const suffix = commonSuffix(a, b, Math.min(a.length, b.length) - prefix);
  // The line holding the first difference may be a header in one config only: widen to the section of the line before it.
  const lineStart = lineStartAt(a, prefix);
  const start = lineStart === 0 ? 0 : headerAtOrBefore(a, lineStart - 1);
  // Lines after the one holding the last difference lie wholly in the common suffix.
  const lastDiff = a.length - suffix;
  const newline = a.indexOf('\n', Math.max(lastDiff, start));
  const endA = newline < 0 ? a.length : headerAtOrAfter(a, newline + 1);
  return { start, endA, endB: b.length - (a.length - endA) };
}

/** The section's text, header included. */
export function sectionText(index: ConfigIndex, section: ConfigSection): string {
  return index.text.slice(section.start, section.end);
}

/**
 * Splits a section into body lines and (in a backend or listen section) parsed server lines.
 * Blank lines are left out: HAProxy ignores them, so one added or removed is no change.
 */
export function parseSection(index: ConfigIndex, section: ConfigSection): ParsedSection {
  const body: string[] = [];
  const servers: ServerLine[] = [];
  let first = true;
  for (const line of lines(sectionText(index, section))) {
    if (first) {
      first = false;
      continue;
    }
    if (line.trim() === '') continue;
    const server = section.proxy === undefined ? undefined : parseServerLine(line);
    if (server === undefined) body.push(line);
    else servers.push(server);
  }
  return { body, servers };
}

/**
 * The config's text with server lines replaced: `replacements` maps a proxy to its server
 * names' new lines. Sections of other proxies are copied as they are, without being parsed.
 */
export function replaceServerLines(index: ConfigIndex, replacements: ReadonlyMap<string, ReadonlyMap<string, string>>): string {
  const pieces: string[] = [index.text.slice(0, index.preambleEnd)];
  for (const section of index.sections) {
    const lines = section.proxy === undefined ? undefined : replacements.get(section.proxy);
    const text = sectionText(index, section);
    if (lines === undefined) {
      pieces.push(text);
      continue;
    }
    const out: string[] = [];
    for (const line of linesOf(text)) {
      const server = parseServerLine(line);
      out.push(server === undefined ? line : (lines.get(server.name) ?? line));
    }
    pieces.push(text.endsWith('\n') ? `${out.join('\n')}\n` : out.join('\n'));
  }
  return pieces.join('');
}

/** The server lines, by name, of the given proxies. */
export function serverLinesOf(index: ConfigIndex, proxies: ReadonlySet<string>): Map<string, Map<string, string>> {
  const found = new Map<string, Map<string, string>>();
  for (const section of index.sections) {
    if (section.proxy === undefined || !proxies.has(section.proxy)) continue;
    const byName = new Map<string, string>();
    for (const server of parseSection(index, section).servers) byName.set(server.name, server.line);
    found.set(section.proxy, byName);
  }
  return found;
}

/** Parses `server <name> <address> [params...]`; undefined for any other line. */
export function parseServerLine(line: string): ServerLine | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('server ') && !trimmed.startsWith('server\t')) return undefined;
  const words = trimmed.split(/\s+/);
  const name = words[1];
  const address = words[2];
  if (name === undefined || address === undefined) return undefined;
  let weight: number | undefined;
  let disabled = false;
  const params: string[] = [];
  for (let i = 3; i < words.length; i++) {
    const word = words[i] as string;
    if (word === 'disabled') disabled = true;
    else if (word === 'enabled') disabled = false;
    else if (word === 'weight' && i + 1 < words.length && /^\d+$/.test(words[i + 1] as string)) weight = Number(words[++i]);
    else params.push(word);
  }
  return { name, ...splitAddress(address), weight, disabled, params: params.join(' '), line };
}

/** `1.2.3.4:80`, `[::1]:80`, `host`; anything else (a prefix like `unix@`, bare IPv6) is opaque. */
function splitAddress(address: string): { host: string; port: number | undefined; addressSettable: boolean } {
  if (address.startsWith('[')) {
    const close = address.indexOf(']');
    const rest = close < 0 ? '' : address.slice(close + 1);
    if (close > 1 && (rest === '' || /^:\d+$/.test(rest))) {
      return { host: address.slice(1, close), port: rest === '' ? undefined : Number(rest.slice(1)), addressSettable: true };
    }
    return { host: address, port: undefined, addressSettable: false };
  }
  if (address.includes('@')) return { host: address, port: undefined, addressSettable: false };
  const colon = address.indexOf(':');
  if (colon < 0) return { host: address, port: undefined, addressSettable: true };
  if (colon !== address.lastIndexOf(':')) return { host: address, port: undefined, addressSettable: false };
  const port = address.slice(colon + 1);
  if (!/^\d+$/.test(port) || colon === 0) return { host: address, port: undefined, addressSettable: false };
  return { host: address.slice(0, colon), port: Number(port), addressSettable: true };
}

export interface MapIndex {
  /** Entries in file order. */
  readonly entries: readonly (readonly [key: string, value: string])[];
  /** Key → value; when a key repeats, the map cannot be changed entry by entry. */
  readonly byKey: ReadonlyMap<string, string>;
  readonly duplicateKeys: boolean;
}

/** Indexes a map file: `key value` per line (the value is the rest of the line); blank lines and `#` comments are skipped. */
export function indexMap(text: string): MapIndex {
  const entries: [string, string][] = [];
  const byKey = new Map<string, string>();
  let duplicateKeys = false;
  let lineStart = 0;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const keyStart = skipBlanks(text, lineStart, lineEnd);
    if (keyStart < lineEnd && text.charCodeAt(keyStart) !== 35 /* # */) {
      const keyEnd = skipWord(text, keyStart, lineEnd);
      const key = text.slice(keyStart, keyEnd);
      let valueEnd = lineEnd;
      while (valueEnd > keyEnd && isBlank(text.charCodeAt(valueEnd - 1))) valueEnd--;
      const value = text.slice(skipBlanks(text, keyEnd, valueEnd), valueEnd);
      if (byKey.has(key)) duplicateKeys = true;
      else byKey.set(key, value);
      entries.push([key, value]);
    }
    lineStart = lineEnd + 1;
  }
  return { entries, byKey, duplicateKeys };
}

/** Start of the line holding `offset` (lastIndexOf clamps a negative start to 0, hence the guard). */
function lineStartAt(text: string, offset: number): number {
  return offset <= 0 ? 0 : text.lastIndexOf('\n', offset - 1) + 1;
}

/** Whether the line starting at `lineStart` opens a section. */
function isHeaderLine(text: string, lineStart: number): boolean {
  let lineEnd = text.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = text.length;
  const i = skipBlanks(text, lineStart, lineEnd);
  return i < lineEnd && KEYWORD_INITIALS.has(text.charCodeAt(i)) && SECTION_KEYWORDS.has(text.slice(i, skipWord(text, i, lineEnd)));
}

/** Start of the header line of the section holding `offset` (0 in the preamble). */
function headerAtOrBefore(text: string, offset: number): number {
  for (let lineStart = lineStartAt(text, offset); ; lineStart = lineStartAt(text, lineStart - 1)) {
    if (isHeaderLine(text, lineStart)) return lineStart;
    if (lineStart === 0) return 0;
  }
}

/** Start of the first header line at or after `lineStart` (a line start), or the end of the text. */
function headerAtOrAfter(text: string, lineStart: number): number {
  for (let at = lineStart; at < text.length; ) {
    if (isHeaderLine(text, at)) return at;
    const newline = text.indexOf('\n', at);
    if (newline < 0) break;
    at = newline + 1;
  }
  return text.length;
}

function isBlank(code: number): boolean {
  return code === 32 || code === 9 || code === 13;
}

function skipBlanks(text: string, from: number, to: number): number {
  let i = from;
  while (i < to && isBlank(text.charCodeAt(i))) i++;
  return i;
}

function skipWord(text: string, from: number, to: number): number {
  let i = from;
  while (i < to && !isBlank(text.charCodeAt(i))) i++;
  return i;
}

/** The lines of `text` without their terminators (a final `\r` dropped), lazily. */
function* lines(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    yield text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
    start = end + 1;
  }
}

/** The lines of `text` exactly as written (split on `\n`), for rewriting it. */
function linesOf(text: string): string[] {
  const out = text.split('\n');
  if (text.endsWith('\n')) out.pop();
  return out;
}

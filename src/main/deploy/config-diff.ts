// Config diff (pure): what it takes to go from the deployed render to a new one: Runtime API
// operations for server slots (address, port, weight, state) and map entries, and `structural`
// with `reasons` for anything else (a section, any other line, a map file added, a certificate,
// any other file); server-slots.txt changes ride along with slots. Linear, and for a config near
// the size of the change: only the sections around the changes are indexed.
import { posix } from 'node:path';
import type { AuxiliaryFiles, TextEdit } from '../../worker/protocol.js';
import { changedWindow, indexConfig, indexMap, parseSection, sectionText, type ConfigIndex, type MapIndex, type ServerLine } from './config-index.js';
import type { MapOp, MapReplaceOp, RuntimeOp, ServerOp } from './runtime-ops.js';

/** What the diff reads of a render. */
export interface DiffInput {
  readonly haproxyConfig: string;
  readonly auxiliaryFiles: AuxiliaryFiles;
}

export interface ConfigDiff {
  /** In the order they must be applied. Empty when nothing runtime-eligible changed. */
  readonly runtimeOps: readonly RuntimeOp[];
  /** True when a reload is needed (for whatever the operations do not cover). */
  readonly structural: boolean;
  /** Why it is structural, one line each; empty when it is not. */
  readonly reasons: readonly string[];
}

export interface DiffOptions {
  /**
   * The directory the config loads maps from: runtime operations name a map by its absolute path.
   * @default '/etc/haproxy/maps' (the default template set's `mapsDir`)
   */
  readonly mapsDir?: string;
  /** Auxiliary files that change with server slots and need no reload. @default ['server-slots.txt'] */
  readonly runtimeFiles?: readonly string[];
  /**
   * A map change that needs more entry operations than this is sent as one versioned replacement
   * (`prepare map` / `add map @v` / `commit map`), which also swaps the map atomically.
   * @default 100
   */
  readonly versionedMapThreshold?: number;
  /** Reasons listed one by one before the rest are counted. @default 20 */
  readonly maxReasons?: number;
}

export const DEFAULT_RUNTIME_FILES: readonly string[] = ['server-slots.txt'];

/** What a patch tells the diff of its maps (patch-diff.ts): each edited map's edits, and the whole new config, which says how each map is looked up. */
export interface PatchedMaps {
  readonly mapEdits: Readonly<Record<string, readonly TextEdit[]>>;
  /** The whole config of the new render, when the diff is given only its edited sections. */
  readonly config?: string;
}

const NO_PATCH: PatchedMaps = { mapEdits: {} };

/**
 * Classifies the change from `deployed` to `next`. Runtime-eligible: a server slot's address,
 * port, weight or state in a backend both have with the same server names in the same order; an
 * entry of a map file both have. The rest of each config is compared natively outside the changed
 * window (see `changedWindow`), sections inside it by text, and only differing ones are parsed.
 */
export function diffRenders(deployed: DiffInput, next: DiffInput, options: DiffOptions = {}, patched: PatchedMaps = NO_PATCH): ConfigDiff {
  const mapEdits = patched.mapEdits;
  const reasons = new Reasons(options.maxReasons ?? 20);
  const ops: RuntimeOp[] = [];
  // Equal strings compare by memcmp; of a changed config only the sections around the changes are indexed.
  const a = deployed.haproxyConfig;
  const b = next.haproxyConfig;
  if (a !== b) {
    const window = changedWindow(a, b);
    let linesBefore: number | undefined;
    // Line numbers only matter for reasons: the lines before the window are counted when one is given.
    const lineOffset = (): number => (linesBefore ??= countLines(a, window.start));
    diffConfigs(indexConfig(a.slice(window.start, window.endA)), indexConfig(b.slice(window.start, window.endB)), ops, reasons, lineOffset);
  }
  const mapsDir = options.mapsDir ?? '/etc/haproxy/maps';
  const threshold = options.versionedMapThreshold ?? 100;
  const oldMaps = deployed.auxiliaryFiles.maps;
  const newMaps = next.auxiliaryFiles.maps;
  for (const name of Object.keys(oldMaps)) if (!Object.hasOwn(newMaps, name)) reasons.add(`map ${name} removed`);
  for (const [name, text] of Object.entries(newMaps)) {
    if (!Object.hasOwn(oldMaps, name)) reasons.add(`map ${name} added`);
    else if (oldMaps[name] !== text) {
      const file = posix.join(mapsDir, name);
      const before = oldMaps[name] as string;
      const ordered = mapOrder(patched.config ?? next.haproxyConfig, file);
      const edits = Object.hasOwn(mapEdits, name) ? mapEdits[name] : undefined;
      ops.push(...((edits === undefined ? undefined : diffMapEdits(file, before, text, edits, threshold, ordered)) ?? diffMap(file, indexMap(before), indexMap(text), threshold, ordered)));
    }
  }
  const runtimeFiles = new Set(options.runtimeFiles ?? DEFAULT_RUNTIME_FILES);
  diffFiles('file', deployed.auxiliaryFiles.files, next.auxiliaryFiles.files, runtimeFiles, reasons);
  diffFiles('certificate', deployed.auxiliaryFiles.certificates, next.auxiliaryFiles.certificates, new Set(), reasons);
  return { runtimeOps: ops, structural: reasons.count > 0, reasons: reasons.list() };
}

function diffConfigs(old: ConfigIndex, next: ConfigIndex, ops: RuntimeOp[], reasons: Reasons, lineOffset: () => number): void {
  if (old.text.slice(0, old.preambleEnd) !== next.text.slice(0, next.preambleEnd)) reasons.add('the lines before the first section changed');
  const oldByKey = new Map(old.sections.map((section) => [section.key, section]));
  const nextKeys = new Set(next.sections.map((section) => section.key));
  for (const section of old.sections) if (!nextKeys.has(section.key)) reasons.add(`${section.key} removed`);
  // Sections both have must keep their order: proxies are numbered in order of appearance.
  const kept = old.sections.filter((section) => nextKeys.has(section.key));
  let cursor = 0;
  let reordered = false;
  for (const section of next.sections) {
    const before = oldByKey.get(section.key);
    if (before === undefined) {
      reasons.add(`${section.key} added (line ${section.lineNumber + lineOffset()})`);
      continue;
    }
    if (!reordered && kept[cursor++]?.key !== section.key) {
      reordered = true;
      reasons.add(`sections reordered (at ${section.key})`);
    }
    // Most sections are unchanged: one string comparison, no parsing.
    if (sectionText(old, before) === sectionText(next, section)) continue;
    const a = parseSection(old, before);
    const b = parseSection(next, section);
    const changed = firstDifference(a.body, b.body);
    if (changed !== undefined) reasons.add(`${section.key} (line ${section.lineNumber + lineOffset()}): ${changed}`);
    if (section.proxy !== undefined) diffServers(section.key, section.proxy, a.servers, b.servers, ops, reasons);
  }
}

/** Slot by slot: same names in the same order, or the backend needs a reload. */
function diffServers(key: string, proxy: string, old: readonly ServerLine[], next: readonly ServerLine[], ops: RuntimeOp[], reasons: Reasons): void {
  if (old.length !== next.length || old.some((server, i) => server.name !== next[i]?.name)) {
    reasons.add(`${key}: servers added, removed or renamed (${old.length} -> ${next.length})`);
    return;
  }
  for (let i = 0; i < next.length; i++) {
    const before = old[i] as ServerLine;
    const after = next[i] as ServerLine;
    if (before.line === after.line) continue;
    if (before.params !== after.params) {
      if (withoutCheck(before.params) !== withoutCheck(after.params)) {
        reasons.add(`${key}: server ${after.name}: parameters changed (${quote(after.params)})`);
        continue;
      }
      // Only `check` differs (a template that checks populated slots only): the address and
      // state go out at once; the check follows with the next (paced) reload.
      reasons.add(`${key}: server ${after.name}: health check ${after.params.split(' ').includes('check') ? 'added' : 'removed'} (next reload)`);
    }
    const moved = before.host !== after.host || before.port !== after.port;
    if (moved && (!before.addressSettable || !after.addressSettable || (after.port === undefined && before.port !== undefined))) {
      reasons.add(`${key}: server ${after.name}: address ${quote(after.host)} cannot be set at runtime`);
      continue;
    }
    const slot = { backend: proxy, server: after.name };
    // Into maintenance before the address moves, out of it only once address and weight are right.
    if (after.disabled && !before.disabled) ops.push({ type: 'server-state', ...slot, state: 'maint' } satisfies ServerOp);
    if (moved) ops.push({ type: 'server-addr', ...slot, address: after.host, ...(after.port === undefined ? {} : { port: after.port }) } satisfies ServerOp);
    if ((before.weight ?? 1) !== (after.weight ?? 1)) ops.push({ type: 'server-weight', ...slot, weight: after.weight ?? 1 } satisfies ServerOp);
    if (!after.disabled && before.disabled) ops.push({ type: 'server-state', ...slot, state: 'ready' } satisfies ServerOp);
  }
}

/** Server parameters without the `check` keyword. */
function withoutCheck(params: string): string {
  return params
    .split(' ')
    .filter((word) => word !== 'check')
    .join(' ');
}

/**
 * Entry operations. In a first-match map (map_beg, map_reg, ...: HAProxy walks the entries in
 * order) they must reproduce the new file's order: `del` removes, `set` keeps an entry's place,
 * `add` appends, so kept entries must keep their order and new ones must come last. Otherwise,
 * with repeated keys, or past the threshold: one versioned replacement.
 */
function diffMap(file: string, old: MapIndex, next: MapIndex, threshold: number, ordered: boolean): (MapOp | MapReplaceOp)[] {
  const replace: MapReplaceOp = { type: 'map-replace', file, entries: next.entries };
  if (old.duplicateKeys || next.duplicateKeys) return [replace];
  const ops: MapOp[] = [];
  for (const [key] of old.entries) {
    if (!next.byKey.has(key)) ops.push({ type: 'map-del', file, key });
    if (ops.length > threshold) return [replace];
  }
  let keptSeen = 0;
  const keptTotal = ordered ? next.entries.reduce((n, [key]) => (old.byKey.has(key) ? n + 1 : n), 0) : 0;
  let oldCursor = 0;
  for (const [key, value] of next.entries) {
    const previous = old.byKey.get(key);
    if (previous === undefined) {
      // An added entry lands at the end: every kept entry must already be behind it.
      if (ordered && keptSeen < keptTotal) return [replace];
      ops.push({ type: 'map-add', file, key, value });
    } else {
      if (ordered) {
        // Kept entries in the old relative order: advance through the old file to this key.
        while (oldCursor < old.entries.length && (old.entries[oldCursor] as readonly [string, string])[0] !== key) oldCursor++;
        if (oldCursor === old.entries.length) return [replace];
        oldCursor++;
        keptSeen++;
      }
      if (previous !== value) ops.push({ type: 'map-set', file, key, value });
    }
    if (ops.length > threshold) return [replace];
  }
  return ops;
}

/**
 * A map's operations from one edit of it (`next` is `before` with the edit), from the entries of
 * the changed lines alone: what diffMap gives for the whole map, when the untouched lines repeat
 * no key (a map that does is diffed by its changed lines all the same, since no operation touches
 * those). Undefined when only the whole map can tell: several edits, an edit that does not cover
 * whole lines, a key of the changed lines that appears outside them. In a first-match map an
 * added entry with entries after the changed lines means a replacement, as in the whole diff.
 */
function diffMapEdits(file: string, before: string, next: string, edits: readonly TextEdit[], threshold: number, ordered: boolean): (MapOp | MapReplaceOp)[] | undefined {
  const edit = edits.length === 1 ? edits[0] : undefined;
  if (edit === undefined) return undefined;
  const end = edit.at + edit.remove;
  if (end > before.length || next.length !== before.length - edit.remove + edit.text.length) return undefined;
  if (!atLineStart(before, edit.at) || (end < before.length && (!atLineStart(before, end) || (edit.text !== '' && !edit.text.endsWith('\n'))))) return undefined;
  const old = indexMap(before.slice(edit.at, end));
  const changed = indexMap(edit.text);
  if (old.duplicateKeys || changed.duplicateKeys) return undefined;
  for (const key of old.byKey.keys()) if (keyOutside(before, key, edit.at, end)) return undefined;
  let added = false;
  for (const key of changed.byKey.keys()) {
    if (old.byKey.has(key)) continue;
    if (keyOutside(before, key, edit.at, end)) return undefined;
    added = true;
  }
  const ops = diffMap(file, old, changed, threshold, ordered);
  if (ops.some((op) => op.type === 'map-replace') || (ordered && added && entryFrom(before, end))) return [{ type: 'map-replace', file, entries: indexMap(next).entries }];
  return ops;
}

function atLineStart(text: string, at: number): boolean {
  return at === 0 || text.charCodeAt(at - 1) === 10;
}

/** Whether `key` is the key of a line of `text` outside [start, end) (native searches for it, no pass over the lines). */
function keyOutside(text: string, key: string, start: number, end: number): boolean {
  for (let at = text.indexOf(key); at >= 0; at = text.indexOf(key, at >= start && at < end ? end : at + 1)) {
    if (at >= start && at < end) continue;
    const after = text.charCodeAt(at + key.length);
    if (!(Number.isNaN(after) || after === 10 || after === 32 || after === 9 || after === 13)) continue;
    let i = at;
    while (i > 0 && (text.charCodeAt(i - 1) === 32 || text.charCodeAt(i - 1) === 9 || text.charCodeAt(i - 1) === 13)) i--;
    if (i === 0 || text.charCodeAt(i - 1) === 10) return true;
  }
  return false;
}

/** Whether a line from `from` on holds an entry (not blank, not a comment). */
function entryFrom(text: string, from: number): boolean {
  for (let lineStart = from; lineStart < text.length; ) {
    let i = lineStart;
    while (i < text.length && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 13)) i++;
    if (i < text.length && text.charCodeAt(i) !== 10 && text.charCodeAt(i) !== 35) return true;
    const newline = text.indexOf('\n', i);
    if (newline < 0) return false;
    lineStart = newline + 1;
  }
  return false;
}

/** The last config's answers of orderMatters: renders of runtime changes share their config (the same string). */
let orderMemo: { readonly config: string; readonly byFile: Map<string, boolean> } | undefined;

/** orderMatters, once per config and map file (a search of the whole config each). */
function mapOrder(config: string, file: string): boolean {
  if (orderMemo?.config !== config) orderMemo = { config, byFile: new Map() };
  let ordered = orderMemo.byFile.get(file);
  if (ordered === undefined) orderMemo.byFile.set(file, (ordered = orderMatters(config, file)));
  return ordered;
}

/** Converters that look a key up exactly (a tree in HAProxy): entry order cannot matter. */
const EXACT_LOOKUPS = new Set(['map', 'map_str', 'map_ip', 'map_int']);

/**
 * Whether the order of the map's entries can change a lookup: true unless every place the config
 * names the file is an exact-match converter (`map(<file>)`). A map the config never names (a
 * Lua script's, say) is taken to be ordered.
 */
function orderMatters(config: string, file: string): boolean {
  let found = false;
  for (let at = config.indexOf(file); at >= 0; at = config.indexOf(file, at + file.length)) {
    found = true;
    if (config.charCodeAt(at - 1) !== 40 /* ( */) return true;
    let start = at - 1;
    while (start > 0 && /[a-z_]/.test(config[start - 1] as string)) start--;
    if (!EXACT_LOOKUPS.has(config.slice(start, at - 1))) return true;
  }
  return !found;
}

function diffFiles(
  kind: 'file' | 'certificate',
  old: Readonly<Record<string, string>>,
  next: Readonly<Record<string, string>>,
  exempt: ReadonlySet<string>,
  reasons: Reasons,
): void {
  for (const name of Object.keys(old)) if (!exempt.has(name) && !Object.hasOwn(next, name)) reasons.add(`${kind} ${name} removed`);
  for (const [name, text] of Object.entries(next)) {
    if (exempt.has(name)) continue;
    if (!Object.hasOwn(old, name)) reasons.add(`${kind} ${name} added`);
    else if (old[name] !== text) reasons.add(`${kind} ${name} changed`);
  }
}

/** Lines before `end` (for line numbers in reasons); native indexOf, no per-character loop. */
function countLines(text: string, end: number): number {
  let lines = 0;
  for (let at = text.indexOf('\n'); at >= 0 && at < end; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}

/** The first line that differs, as `-old / +new`, or undefined when both are equal. */
function firstDifference(old: readonly string[], next: readonly string[]): string | undefined {
  const length = Math.max(old.length, next.length);
  for (let i = 0; i < length; i++) {
    if (old[i] !== next[i]) return `-${quote(old[i]?.trim() ?? '(none)')} +${quote(next[i]?.trim() ?? '(none)')}`;
  }
  return undefined;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text);
}

/** Structural reasons: the first `max` verbatim, the rest counted. */
class Reasons {
  readonly #max: number;
  readonly #items: string[] = [];
  #count = 0;

  constructor(max: number) {
    this.#max = max;
  }

  get count(): number {
    return this.#count;
  }

  add(reason: string): void {
    if (this.#count++ < this.#max) this.#items.push(reason);
  }

  list(): string[] {
    const more = this.#count - this.#items.length;
    return more > 0 ? [...this.#items, `... and ${more} more`] : this.#items;
  }
}

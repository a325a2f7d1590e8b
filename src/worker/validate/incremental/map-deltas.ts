// Map files read again by their changed lines only. Between two renders a map usually differs
// by a line or two (a path of one Ingress), yet reading it whole (its entries, their distinct
// values, the repeated-key check) costs a pass over every entry. MapDeltas keeps, per map file,
// its last text and what was read from it, takes the lines that differ from the new text (the
// render's ChangedWindows, found once for every reader of the render), reads those lines alone
// and splices them in. Map reading is line by line with no state across lines (map-file.ts), so the
// splice is exactly what reading the whole new text gives; the issues (no value, repeated key)
// are derived incrementally only while the map has none, and read whole otherwise.
// A splice edits the state's own arrays in place (a changed line of a 20,000-entry map must not
// copy four arrays of 20,000): the state of the previous text is then gone, and what was handed
// out for that text (its parsed map and entries share the arrays) is stale. `observe` returns
// those texts, and the caller drops whatever it cached for them.
import { mapEntriesWithValues, mapIssuesFrom, parseMapText, type LineIssue, type MapEntries, type ParsedMap } from '../auxiliary/map-file.js';
import type { ChangedWindows, LineWindow, TextViews } from '../../render/changed-windows.js';
import type { TextView } from '../../templates/text-rope.js';
import { detachString } from './chunk-index.js';

/** A parsed map whose arrays belong to one state alone (a splice edits them in place). */
interface OwnedMap extends ParsedMap {
  readonly lines: number[];
  readonly keys: string[];
  readonly values: string[];
}

/** What was read from one map text. */
interface MapState {
  readonly text: string;
  readonly parsed: OwnedMap;
  /** Where each entry's line starts in `text`. */
  readonly starts: number[];
  /** Set while no entry lacks a value and no key repeats: then the entries are `parsed` itself and it has no issues. */
  readonly clean: { readonly keys: Set<string>; readonly valueCounts: Map<string, number>; readonly distinct: string[] } | undefined;
  entries: MapEntries | undefined;
}

/** Changed regions longer than this share of the text are read whole. */
const WHOLE_SHARE = 0.25;

/**
 * The maps of the latest call, by file name, and their derivations by text (the texts of the
 * latest call only). `observe` brings them to a call's maps; the lookups answer for its texts.
 */
export class MapDeltas {
  #byName = new Map<string, MapState>();
  #byText = new Map<string, MapState>();
  /** Maps of the latest calls read by their changed lines (the others were read whole or unchanged). */
  #spliced = 0;

  get spliced(): number {
    return this.#spliced;
  }

  /**
   * Brings the states to `maps`. Never throws: on a fault every map is read whole. Returns the
   * texts whose state a splice edited in place: anything derived from their parsed map or
   * entries and kept by the caller no longer describes them and must be dropped.
   */
  observe(maps: Readonly<Record<string, string>>, windows: ChangedWindows): readonly string[] {
    const byName = new Map<string, MapState>();
    const byText = new Map<string, MapState>();
    const retired: string[] = [];
    try {
      for (const [name, text] of Object.entries(maps)) {
        if (typeof text !== 'string') continue;
        const before = this.#byName.get(name);
        // The window says whether the text changed: no separate comparison of the two texts.
        const cut = before === undefined ? undefined : windows.lines(`maps/${name}`, before.text, text);
        let state = before !== undefined && cut === undefined ? before : undefined;
        if (before !== undefined && cut !== undefined) {
          // Retired before the splice starts editing: a splice that fails half way has edited it too.
          retired.push(before.text);
          state = this.#spliceOf(before, text, cut, windows.views(`maps/${name}`, before.text, text));
        }
        state ??= wholeState(text);
        byName.set(name, state);
        byText.set(text, state);
      }
    } catch {
      byName.clear();
      byText.clear();
    }
    this.#byName = byName;
    this.#byText = byText;
    return retired;
  }

  parsed(text: string): ParsedMap | undefined {
    return this.#byText.get(text)?.parsed;
  }

  /** mapEntriesWithValues of the text (its distinct values in another order). */
  entries(text: string): MapEntries | undefined {
    const state = this.#byText.get(text);
    if (state === undefined) return undefined;
    if (state.entries === undefined) {
      state.entries = state.clean === undefined ? mapEntriesWithValues(state.parsed) : { ...state.parsed, distinctValues: state.clean.distinct };
    }
    return state.entries;
  }

  /** mapIssuesFrom of the text, not as a pattern file. */
  issues(text: string): readonly LineIssue[] | undefined {
    const state = this.#byText.get(text);
    if (state === undefined) return undefined;
    return state.clean === undefined ? mapIssuesFrom(state.parsed, false) : [];
  }

  /** The state of `text` from `before` and the lines that differ (`cut`), or undefined to read it whole. Both texts are read through `windows`' views. */
  #spliceOf(before: MapState, text: string, cut: LineWindow, views: TextViews): MapState | undefined {
    const clean = before.clean;
    if (clean === undefined) return undefined;
    const old = views.before;
    if (cut.oldEnd - cut.start + (cut.newEnd - cut.start) > WHOLE_SHARE * (old.length + text.length)) return undefined;
    const { parsed, starts } = before;
    const first = firstAtOrAfter(starts, cut.start);
    const next = firstAtOrAfter(starts, cut.oldEnd);
    const middle = views.after.slice(cut.start, cut.newEnd);
    const midStarts: number[] = [];
    const mid = parseMapText(middle, midStarts);
    // Detached: an entry (and the key set, which outlives this text) must not pin this render's whole map text.
    const midKeys = mid.keys.map(detachString);
    // The new entries must keep the map clean: a value each, and keys not met elsewhere.
    for (let i = first; i < next; i++) clean.keys.delete(parsed.keys[i] as string);
    const added: string[] = [];
    let stillClean = true;
    for (let i = 0; i < midKeys.length; i++) {
      const key = midKeys[i] as string;
      if (mid.values[i] === '' || clean.keys.has(key)) {
        stillClean = false;
        break;
      }
      clean.keys.add(key);
      added.push(key);
    }
    if (!stillClean) {
      // The key set was changed in place: the next text is read whole.
      return undefined;
    }
    const linesBefore = first === 0 ? newlines(old, 0, cut.start) : (parsed.lines[first - 1] as number) - 1 + newlines(old, starts[first - 1] as number, cut.start);
    const lineShift = newlines(middle, 0, middle.length) - newlines(old, cut.start, cut.oldEnd);
    const charShift = text.length - old.length;
    const midValues = mid.values.map(detachString);
    const midLines = mid.lines.map((line) => linesBefore + line);
    const midAt = midStarts.map((at) => cut.start + at);
    // The removed entries' values, read before the arrays are edited.
    const removedValues = parsed.values.slice(first, next);
    // In place: the unchanged entries are neither copied nor walked, except to shift the
    // line numbers and starts after the cut, and only by a nonzero shift.
    replaceRange(parsed.lines, first, next - first, midLines);
    replaceRange(parsed.keys, first, next - first, midKeys);
    replaceRange(parsed.values, first, next - first, midValues);
    replaceRange(starts, first, next - first, midAt);
    const after = first + midKeys.length;
    if (lineShift !== 0) shiftFrom(parsed.lines, after, lineShift);
    if (charShift !== 0) shiftFrom(starts, after, charShift);
    // The added values are counted before the removed ones, so that a value both removed and
    // added (an entry whose key changed) leaves the distinct values as they were.
    let distinctChanged = false;
    const counts = clean.valueCounts;
    for (const value of midValues) {
      const count = counts.get(value);
      if (count === undefined) distinctChanged = true;
      counts.set(value, (count ?? 0) + 1);
    }
    for (const value of removedValues) {
      const left = (counts.get(value) ?? 1) - 1;
      if (left === 0) {
        counts.delete(value);
        distinctChanged = true;
      } else counts.set(value, left);
    }
    const distinct = distinctChanged ? [...counts.keys()] : clean.distinct;
    this.#spliced++;
    // A new parsed object over the same arrays: the old one may be cached under the old text.
    return { text, parsed: { lines: parsed.lines, keys: parsed.keys, values: parsed.values }, starts, clean: { keys: clean.keys, valueCounts: counts, distinct }, entries: undefined };
  }
}

/** The state of a text read whole. */
function wholeState(text: string): MapState {
  const starts: number[] = [];
  // parseMapText's arrays are new: this state owns them.
  const parsed = parseMapText(text, starts) as OwnedMap;
  const keys = new Set<string>();
  const valueCounts = new Map<string, number>();
  let clean = true;
  for (let i = 0; i < parsed.keys.length && clean; i++) {
    const key = parsed.keys[i] as string;
    const value = parsed.values[i] as string;
    if (value === '' || keys.has(key)) clean = false;
    keys.add(key);
    valueCounts.set(value, (valueCounts.get(value) ?? 0) + 1);
  }
  return { text, parsed, starts, clean: clean ? { keys, valueCounts, distinct: [...valueCounts.keys()] } : undefined, entries: undefined };
}

/** Replaces `removed` items of `list` at `at` by `items`, in place. */
function replaceRange<T>(list: T[], at: number, removed: number, items: readonly T[]): void {
  if (items.length === removed) {
    for (let i = 0; i < removed; i++) list[at + i] = items[i] as T;
  } else if (items.length <= SPREAD_LIMIT) {
    list.splice(at, removed, ...items);
  } else {
    const tail = list.slice(at + removed);
    list.length = at;
    for (const item of items) list.push(item);
    for (const item of tail) list.push(item);
  }
}

/** Items spread into one splice call at most (arguments live on the stack). */
const SPREAD_LIMIT = 2048;

/** Adds `by` to every number of `list` from index `from` on. */
function shiftFrom(list: number[], from: number, by: number): void {
  for (let i = from; i < list.length; i++) list[i] = (list[i] as number) + by;
}

/** The first index whose value is at least `at` in an ascending list. */
function firstAtOrAfter(list: readonly number[], at: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as number) < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function newlines(text: TextView, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at >= 0 && at < to; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

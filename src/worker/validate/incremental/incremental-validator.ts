// IncrementalValidator: the two phases for a long-lived caller (one per render worker), at a
// cost that follows what changed since the previous call. It cuts the configuration into
// chunks, parses only chunk texts it has not seen, and replays every chunk through the same
// phase functions as validateStructure() and checkAuxiliaryFiles().
import type { AuxiliaryFiles } from '../../protocol.js';
import { mapEntriesWithValues, mapIssuesFrom, parseMapText, type LineIssue, type MapEntries, type ParsedMap } from '../auxiliary/map-file.js';
import { scanPem, type PemSummary } from '../auxiliary/pem.js';
import type { TextDerivations } from '../auxiliary/text-derivations.js';
import type { ValidationReport } from '../issue-sink.js';
import type { UsageScanner } from '../auxiliary/usage-scanner.js';
import type { AuxiliaryUsage, UsageState } from '../auxiliary/usage-state.js';
import type { OutputPaths } from '../paths.js';
import { CONFIG_FILE } from '../issue-sink.js';
import { auxiliaryLongLines, bufsizeIn, lineIssues, longLines, withLineIssues, type LongLine, type PlacedLines } from '../line-limits.js';
import { auxiliaryPhase, checkAuxiliaryFiles, structureFinish, structurePhase, validateStructure, type Replayed } from '../phases.js';
import { StructureParser } from '../structure/structure-parser.js';
import { ChunkIndex, detachString, headKey, newChunk, type ChunkRecord } from './chunk-index.js';
import { chunkAt, chunkEnd } from './chunking.js';
import { detachedOps } from './detached-ops.js';
import { ChangedWindows } from '../../render/changed-windows.js';
import { GenerationCache } from './generation-cache.js';
import { LongLineDeltas } from './long-line-deltas.js';
import { MapDeltas } from './map-deltas.js';
import { sharedEnds, type PlacedChunk } from './shared-ends.js';

// A worker re-validates every render, and between two renders of a large cluster most of the
// configuration is unchanged. IncrementalValidator cuts the configuration into chunks before the
// lines that open a section, keeps the StructureOps and UsageOps of each chunk text, parses only
// the chunk texts it has not seen, then replays all chunks in order with their line offsets.
// Replay is the very code the pure functions run (they replay the whole configuration as a
// single chunk), so the reports are identical: same errors in the same order with the same
// lines, same warnings, same error cap. Why the ops of a chunk do not depend on what precedes it
// is explained in ../phases.ts. Map entries, map issues and PEM summaries are cached per file
// text. Every cache keeps only what the latest call used, so memory stays proportional to one
// configuration and its files.
//
// Finding the chunks must not cost a pass over every line either: at each cut, the chunk that
// followed the same chunk in the latest layout is tried first (one string comparison, and a
// check that a section opens right after it); only text that matches no expected chunk is
// scanned line by line and looked up by content. What remains proportional to the whole
// configuration is that comparison and the replay of each chunk's few ops (a backend chunk
// records one: registering the backend), a few milliseconds for 10,000 backends.

/**
 * The line scan of a chunk with no long line and no `tune.bufsize`, nearly every chunk: one
 * shared, frozen scan rather than an object and an empty list per chunk (72 bytes each, 10,000
 * chunks at 10,000 Ingresses). Scans are only read.
 */
const NO_LONG_LINES: { readonly lines: readonly LongLine[]; readonly bufsize: number | undefined } = Object.freeze({ lines: Object.freeze([]), bufsize: undefined });

/**
 * The two phases for a long-lived caller (one per render worker): the same reports as
 * validateStructure() and checkAuxiliaryFiles(), for every input and whatever calls came before,
 * at a cost that follows what changed since the previous call. Never throws.
 */
export class IncrementalValidator {
  readonly #index = new ChunkIndex();
  /** Parses the new chunks (its state is reset for each). */
  readonly #parser = new StructureParser();
  #generation = 0;
  /** The latest configuration (undefined once released) and its chunks, reused when the next call passes the same text. */
  #layout: { readonly config: string | undefined; readonly chunks: readonly PlacedChunk[] } | null = null;
  /** The string the latest validateStructure() was given, when it was the same text as the layout's own, and that string (see keptText). */
  #alias: { readonly given: string; readonly kept: string } | undefined;
  /** The layout's own string when the latest #layoutOf() found the text it was given the same. */
  #reused: string | undefined;
  #processed = 0;
  /** The structure replay of the latest layout, with the names of the files it saw (see structureFinish). */
  #replayed: { readonly chunks: readonly PlacedChunk[]; readonly names: readonly (readonly string[])[]; readonly replayed: Replayed } | undefined;

  /** The usage the latest auxiliary replay found, for its layout and directories (the key of the chunks' usage ops). */
  #usage: { readonly chunks: readonly PlacedChunk[]; readonly key: string; readonly usage: AuxiliaryUsage } | undefined;

  /** The maps of the latest call, read again by their changed lines (map-deltas.ts). */
  readonly #maps = new MapDeltas();
  readonly #parseMap = (text: string): ParsedMap => this.#maps.parsed(text) ?? parseMapText(text);
  /** One parse per map text, shared by the structure phase's and the auxiliary phase's checks. */
  readonly #parsedMaps = new GenerationCache<ParsedMap>();
  readonly #mapEntries = new GenerationCache<MapEntries>();
  readonly #mapIssues = new GenerationCache<readonly LineIssue[]>();
  readonly #patternIssues = new GenerationCache<readonly LineIssue[]>();
  readonly #pems = new GenerationCache<PemSummary>();
  /** The line cap's scans: per chunk (long lines, `tune.bufsize`) and per auxiliary file text. */
  readonly #chunkLines = new WeakMap<ChunkRecord, { readonly lines: readonly LongLine[]; readonly bufsize: number | undefined }>();
  readonly #fileLines = new LongLineDeltas();
  /** Where each file changed since the previous render, shared with the render's other readers (changed-windows.ts). */
  readonly #windows: ChangedWindows;
  /** Set when this validator made #windows itself: it then clears them as each of its calls ends. */
  readonly #ownsWindows: boolean;
  /** The maps record the latest #observeMaps() brought the map states to. */
  #observed: AuxiliaryFiles['maps'] | undefined;
  /** The config's long lines and `tune.bufsize`, for the layout they were found in. */
  #configLines: { readonly chunks: readonly PlacedChunk[]; readonly lines: readonly LongLine[]; readonly bufsize: number | undefined } | undefined;
  readonly #derive: TextDerivations = {
    mapEntries: (text) => this.#mapEntries.get(text, () => this.#maps.entries(text) ?? mapEntriesWithValues(this.#parsedMaps.get(text, this.#parseMap))),
    mapIssues: (text, patternOnly) =>
      patternOnly
        ? this.#patternIssues.get(text, () => mapIssuesFrom(this.#parsedMaps.get(text, this.#parseMap), true))
        : this.#mapIssues.get(text, () => this.#maps.issues(text) ?? mapIssuesFrom(this.#parsedMaps.get(text, this.#parseMap), false)),
    pem: (text) => this.#pems.get(text, scanPem),
  };

  /**
   * `windows`, when given, are the caller's, cleared by it at the start of each render and asked
   * by its other readers of the render's texts; otherwise the validator keeps its own.
   */
  constructor(windows?: ChangedWindows) {
    this.#windows = windows ?? new ChangedWindows();
    this.#ownsWindows = windows === undefined;
  }

  /** Chunk texts held: at most the number of chunks of the latest configuration. */
  get cachedChunks(): number {
    return this.#index.size;
  }

  /** Maps read by their changed lines alone, over every call. */
  get splicedMaps(): number {
    return this.#maps.spliced;
  }

  /** Chunks the latest call had to parse (the others were reused). */
  get processedChunks(): number {
    return this.#processed;
  }

  /**
   * Lets go of the latest configuration's text and keeps its chunks, which the next call
   * compares with as before: for a caller whose output is no longer that text (the endpoint lane
   * edited it). The chunks' texts are slices of that configuration, so it stays in memory until
   * the next call, as one string: no more than copies of the chunk texts would cost.
   */
  releaseText(): void {
    if (this.#layout !== null) this.#layout = { config: undefined, chunks: this.#layout.chunks };
    this.#alias = undefined;
  }

  /**
   * When the latest validateStructure() was given `config` and found it the same text as the
   * configuration before, that earlier string, which this validator holds anyway (its chunks are
   * slices of it); otherwise undefined. A caller that goes on with the earlier string lets the
   * new copy go, and the comparisons after this one with the earlier text are by identity. Asked
   * once per render: it forgets the string it was given.
   */
  keptText(config: string): string | undefined {
    const alias = this.#alias;
    this.#alias = undefined;
    return alias !== undefined && alias.given === config ? alias.kept : undefined;
  }

  validateStructure(given: string, aux: AuxiliaryFiles, paths: OutputPaths): ValidationReport {
    if (typeof given !== 'string') return validateStructure(given, aux, paths);
    let config = given;
    this.#processed = 0;
    this.#observed = undefined;
    this.#observeMaps(aux);
    this.#mapEntries.begin();
    this.#parsedMaps.begin();
    try {
      // The same layout and files of the same names: the replay's outcome is the same.
      let chunks: readonly PlacedChunk[] | undefined;
      try {
        chunks = this.#layoutOf(config);
        // The same text as the latest: the rest of this call reads the string kept for it.
        const reused = this.#reused;
        this.#alias = reused === undefined ? undefined : { given, kept: reused };
        if (reused !== undefined) config = reused;
      } catch {
        this.#alias = undefined;
        // Reported by the phase below, which cuts the text again.
        chunks = undefined;
      }
      const names = chunks === undefined ? undefined : replayNames(aux, paths);
      const kept = this.#replayed;
      const report =
        kept !== undefined && chunks !== undefined && kept.chunks === chunks && names !== undefined && sameNames(kept.names, names)
          ? structureFinish(kept.replayed, aux, this.#derive)
          : structurePhase(
              aux,
              paths,
              this.#derive,
              (state) => {
                for (const { record, offset } of chunks ?? this.#layoutOf(config)) {
                  let ops = record.structure;
                  if (ops === undefined) {
                    // A copy is parsed: the parser keeps its last section's names until the next parse, and they must not pin this configuration.
                    ops = record.structure = detachedOps(this.#parser.parse(detachString(record.text)));
                    this.#processed++;
                  }
                  state.apply(ops, offset);
                }
              },
              (replayed) => {
                this.#replayed = chunks === undefined || names === undefined ? undefined : { chunks, names, replayed };
              },
            );
      return withLineIssues(this.#lineIssues(config, aux), report);
    } finally {
      this.#mapEntries.end();
      this.#parsedMaps.end();
      // Its own windows hold the previous texts: they are not kept past the call.
      if (this.#ownsWindows) this.#windows.clear();
    }
  }

  /**
   * Brings the map states to the maps of `aux`. The parsed maps and entries cached for a text
   * whose state was edited in place share its arrays: they are dropped (map-deltas.ts).
   */
  #observeMaps(aux: AuxiliaryFiles): void {
    if (aux === null || typeof aux !== 'object' || aux.maps === null || typeof aux.maps !== 'object') return;
    // The auxiliary phase of a render observes the record the structure phase did: asking the
    // windows again would compare each changed map's new text with itself, a full pass. Skipping
    // is safe whatever the record holds now: every lookup of the map states is by text.
    if (aux.maps === this.#observed) return;
    this.#observed = aux.maps;
    // Also from the caches the state does not share: a lookup of the new text, of the same
    // length, would otherwise compare it with the old one over their common prefix.
    for (const text of this.#maps.observe(aux.maps, this.#windows)) {
      for (const cache of [this.#parsedMaps, this.#mapEntries, this.#mapIssues, this.#patternIssues]) cache.delete(text);
    }
  }

  /** The line cap, as checkLineLengths() computes it, from scans cached per chunk and file text. */
  #lineIssues(config: string, aux: AuxiliaryFiles): ReturnType<typeof lineIssues> {
    const placed: PlacedLines[] = [];
    const chunks = this.#layoutOf(config);
    // The same layout (an unchanged config) has the same long lines: no walk over its chunks.
    let known = this.#configLines;
    if (known?.chunks !== chunks) {
      let bufsize: number | undefined;
      const lines: LongLine[] = [];
      for (const { record, offset } of chunks) {
        let scan = this.#chunkLines.get(record);
        if (scan === undefined) {
          const found = longLines(record.text);
          const size = bufsizeIn(record.text);
          scan = found.length === 0 && size === undefined ? NO_LONG_LINES : { lines: found, bufsize: size };
          this.#chunkLines.set(record, scan);
        }
        if (scan.bufsize !== undefined) bufsize = scan.bufsize;
        for (const long of scan.lines) lines.push({ line: offset + long.line, length: long.length });
      }
      known = this.#configLines = { chunks, lines, bufsize };
    }
    const { lines, bufsize } = known;
    placed.push({ file: CONFIG_FILE, offset: 0, lines });
    this.#fileLines.begin();
    try {
      placed.push(...auxiliaryLongLines(aux, (text, file) => this.#fileLines.lines(file, text, this.#windows)));
    } finally {
      this.#fileLines.end();
    }
    return lineIssues(placed, bufsize);
  }

  checkAuxiliaryFiles(aux: AuxiliaryFiles, config: string, paths: OutputPaths): ValidationReport {
    if (typeof config !== 'string') return checkAuxiliaryFiles(aux, config, paths);
    this.#processed = 0;
    this.#observeMaps(aux);
    // Parsed maps carry over from the structure phase of the same render (begin() keeps them
    // reachable for one more call).
    const caches = [this.#mapIssues, this.#patternIssues, this.#pems, this.#parsedMaps];
    for (const cache of caches) cache.begin();
    try {
      const key = JSON.stringify([paths.mapsDir, paths.filesDir, paths.certsDir]);
      const feed = (state: UsageState, scanner: UsageScanner): void => {
        for (const { record } of this.#layoutOf(config)) {
          let ops = record.usage;
          if (ops === undefined || record.usageKey !== key) {
            ops = record.usage = detachedOps(scanner.scan(record.text));
            record.usageKey = key;
            this.#processed++;
          }
          state.apply(ops);
        }
      };
      // The usage is a function of the chunks' texts in order and the directories: the same
      // layout (an unchanged config) replays to the same usage, with no walk over its chunks.
      return auxiliaryPhase(aux, paths, this.#derive, feed, (replay) => {
        const chunks = this.#layoutOf(config);
        const known = this.#usage;
        if (known !== undefined && known.chunks === chunks && known.key === key) return known.usage;
        const usage = replay();
        this.#usage = { chunks, key, usage };
        return usage;
      });
    } finally {
      for (const cache of caches) cache.end();
      if (this.#ownsWindows) this.#windows.clear();
    }
  }

  /**
   * The chunks of `config`, the same as cutting before every line opensSection() accepts. At
   * each cut, the chunk expected there (the one after the previous chunk in the latest layout,
   * or the one after that, in case a chunk was replaced or removed) is compared in place;
   * otherwise the chunk is found by scanning its lines and looked up by text, or is new.
   */
  #layoutOf(config: string): readonly PlacedChunk[] {
    const layout = this.#layout;
    if (layout !== null && layout.config === config) {
      // The same text, maybe as another string: the layout keeps the string it had, whose
      // slices the chunks' texts are, and keptText() hands it to the caller, so that the calls
      // after this one for the same render (the line cap, the auxiliary phase, the checksum)
      // find it by identity instead of comparing the whole text again, and the new copy dies.
      this.#reused = layout.config;
      return layout.chunks;
    }
    this.#reused = undefined;
    const previous = layout?.chunks ?? [];
    const index = this.#index;
    const generation = ++this.#generation;
    const len = config.length;
    // The chunks of the latest text that lie in what it shares with this one, at either end, are
    // this text's too (see sharedEnds): only the chunks between them are looked for.
    const shared = layout?.config === undefined ? undefined : sharedEnds(layout.config, config, previous);
    const chunks: PlacedChunk[] = shared === undefined ? [] : previous.slice(0, shared.head);
    let pos = shared === undefined ? 0 : shared.headEnd;
    let offset = 0;
    for (const { record } of chunks) {
      record.seen = generation;
      offset += record.lines;
    }
    let expected = chunks.length;
    const stop = shared === undefined ? -1 : shared.tailStart;
    while (pos < len) {
      if (pos === stop && shared !== undefined) {
        for (let i = shared.tail; i < previous.length; i++) {
          const placed = previous[i] as PlacedChunk;
          placed.record.seen = generation;
          chunks.push(placed.offset === offset ? placed : { record: placed.record, offset });
          offset += placed.record.lines;
          pos += placed.record.text.length;
        }
        break;
      }
      let record: ChunkRecord | undefined = previous[expected]?.record;
      if (!chunkAt(config, pos, record)) {
        record = previous[expected + 1]?.record;
        if (!chunkAt(config, pos, record)) record = undefined;
      }
      if (record === undefined) {
        let newline = config.indexOf('\n', pos);
        if (newline < 0) newline = len;
        const slice = config.slice(pos, chunkEnd(config, pos));
        record = index.find(headKey(config, pos, newline), slice);
        if (record === undefined) {
          record = newChunk(slice);
          index.add(record);
        }
      }
      if (record.slot >= 0) expected = record.slot + 1;
      record.seen = generation;
      // The record's text now slices this configuration: an earlier one is no longer held for it.
      const end = pos + record.text.length;
      record.text = config.slice(pos, end);
      chunks.push({ record, offset });
      offset += record.lines;
      pos = end;
    }
    for (const { record } of previous) {
      if (record.seen !== generation) index.remove(record);
    }
    for (let i = 0; i < chunks.length; i++) (chunks[i] as PlacedChunk).record.slot = i;
    this.#layout = { config, chunks };
    return chunks;
  }
}

/** What the structure replay reads of the files and directories: which files exist, by kind. Undefined for files that are not plain records. */
function replayNames(aux: AuxiliaryFiles, paths: OutputPaths): (readonly string[])[] | undefined {
  if (aux === null || typeof aux !== 'object') return undefined;
  const records = [aux.maps, aux.files, aux.certificates];
  if (records.some((record) => record === null || typeof record !== 'object')) return undefined;
  return [[paths.mapsDir, paths.filesDir, paths.certsDir], ...records.map((record) => Object.keys(record))];
}

function sameNames(a: readonly (readonly string[])[], b: readonly (readonly string[])[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as readonly string[];
    const y = b[i] as readonly string[];
    if (x.length !== y.length) return false;
    for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return false;
  }
  return true;
}

// The two phases, each a parse into ops followed by a replay of the ops into a state. The pure
// functions replay the whole configuration as one text; IncrementalValidator replays cached
// chunks through the very same structurePhase() and auxiliaryPhase(), which is why their
// reports are identical. The comments below say why the ops of a chunk depend on its text alone.
import type { AuxiliaryFiles } from '../protocol.js';
import { AuxiliaryChecker } from './auxiliary/auxiliary-checker.js';
import { UNCACHED, type TextDerivations } from './auxiliary/text-derivations.js';
import { UsageScanner } from './auxiliary/usage-scanner.js';
import { UsageState, type AuxiliaryUsage } from './auxiliary/usage-state.js';
import { CONFIG_FILE, describe, IssueSink, type SinkSnapshot, type ValidationReport } from './issue-sink.js';
import { checkLineLengths, withLineIssues } from './line-limits.js';
import { PathResolver, type OutputPaths } from './paths.js';
import { parseStructure } from './structure/structure-parser.js';
import { StructureState } from './structure/structure-state.js';

// Phase 'validation'
//
// The phase is one line by line pass, split in two so that its cost can follow what changed
// between two renders:
//
// - StructureParser reads lines and keeps only the state a section needs for itself: the
//   section, its server names and its ACLs. Everything else, that is errors and every step that
//   reads or writes state shared by the whole configuration (registering a proxy, a defaults or
//   a named section, `from` lookups, bind addresses, crt-base / ca-base, referenced paths,
//   backend and section references), is written down as a StructureOp, in the order the pass
//   meets it, with line numbers counted from the first line of the parsed text. A path is
//   recorded as written: its verdict depends on the crt-base / ca-base in force, on the rendered
//   directories and on which files were rendered, all decided at replay. So the ops of a text
//   depend on that text alone.
// - StructureState replays ops against the state of the whole configuration and owns the
//   IssueSink, so the error cap, the deduplication of path warnings and the order of errors and
//   warnings are those of one pass. finish() then checks the collected references, as the pass
//   always did after the last line.
//
// validateStructure() parses the whole configuration as one text and replays it.
// IncrementalValidator cuts the configuration before lines that certainly open a section,
// parses each chunk on its own (or reuses the ops of an identical chunk text) and replays the
// chunks in order, adding each chunk's line offset. That is exact: the parser starts a text with
// no section, as the pass does at the top of the file, and a section opener resets all of the
// parser's own state, so from an opener on, the parse of a chunk is the parse of the whole
// configuration from that line; the concatenated ops of the chunks are the ops of the whole
// configuration, line numbers aside. Line numbers are shifted at replay, including the one a
// duplicate server message quotes (op 'error-at': the first server is in the same section, so
// in the same chunk).

// Phase 'auxiliary'
//
// The phase first finds how the configuration uses the rendered files (UsageScanner writes
// UsageOps, UsageState replays them into an AuxiliaryUsage), then checks each file. As in phase
// 'validation', the scan goes line by line and its only state across lines is crt-base /
// ca-base, kept by the replay: the ops of a chunk depend on its text and on the rendered
// directories (which lines the scan looks at, where map paths land), never on other chunks, so
// IncrementalValidator reuses them while the directories stay the same. The issues of a map
// depend on its text and on whether it is used only as a pattern file, the PEM summary of a
// certificate on its text alone: both are cached per text. The rest (private keys, crt-lists)
// depends on the other files and is checked afresh.

/**
 * Phase 'validation': no line of the config or its files longer than HAProxy reads whole
 * (line-limits.ts), then sections, keywords, references and server lines of `config`. Never throws.
 */
export function validateStructure(config: string, aux: AuxiliaryFiles, paths: OutputPaths): ValidationReport {
  const report = structurePhase(aux, paths, UNCACHED, (state) => state.apply(parseStructure(config), 0));
  return withLineIssues(checkLineLengths(config, aux), report);
}

/** Phase 'auxiliary': maps, certificates and crt-lists are well formed. Never throws. */
export function checkAuxiliaryFiles(aux: AuxiliaryFiles, config: string, paths: OutputPaths): ValidationReport {
  return auxiliaryPhase(aux, paths, UNCACHED, (state, scanner) => {
    state.apply(scanner.scan(config));
    return state.usage();
  });
}

/**
 * Runs phase 'validation': `feed` replays the ops of the configuration, in order, into the
 * state; the references are checked after the last one. The pure function and
 * IncrementalValidator differ only in `feed` and `derive`.
 */
export function structurePhase(
  aux: AuxiliaryFiles,
  paths: OutputPaths,
  derive: TextDerivations,
  feed: (state: StructureState) => void,
  keep?: (replayed: Replayed) => void,
): ValidationReport {
  const sink = new IssueSink('validation');
  try {
    const state = new StructureState(aux, paths, sink, derive);
    feed(state);
    keep?.({ state, issues: sink.snapshot() });
    state.finish();
  } catch (err) {
    sink.error(CONFIG_FILE, undefined, `internal validator error: ${describe(err)}`);
  }
  return sink.report();
}

/** The state after the replay of a configuration's ops, and the issues the replay reported. */
export interface Replayed {
  readonly state: StructureState;
  readonly issues: SinkSnapshot;
}

/**
 * Phase 'validation' of the configuration `replayed` was kept for (structurePhase's `keep`),
 * with files of the same names: the replay's issues, then the references checked against these
 * files. The same report as structurePhase gives.
 */
export function structureFinish(replayed: Replayed, aux: AuxiliaryFiles, derive: TextDerivations): ValidationReport {
  const sink = IssueSink.restore('validation', replayed.issues);
  try {
    replayed.state.rebind(aux, sink, derive);
    replayed.state.finish();
  } catch (err) {
    sink.error(CONFIG_FILE, undefined, `internal validator error: ${describe(err)}`);
  }
  return sink.report();
}

/**
 * Runs phase 'auxiliary': `feed` replays the usage ops of the configuration and gives the usage
 * (the state's, or one it kept for the same ops), then each file is checked.
 */
export function auxiliaryPhase(
  aux: AuxiliaryFiles,
  paths: OutputPaths,
  derive: TextDerivations,
  feed: (state: UsageState, scanner: UsageScanner) => AuxiliaryUsage,
): ValidationReport {
  const sink = new IssueSink('auxiliary');
  try {
    const resolver = new PathResolver(paths);
    const state = new UsageState(resolver);
    const usage = feed(state, new UsageScanner(paths, resolver));
    new AuxiliaryChecker(aux, usage, resolver, sink, derive).run();
  } catch (err) {
    sink.error('auxiliary', undefined, `internal validator error: ${describe(err)}`);
  }
  return sink.report();
}

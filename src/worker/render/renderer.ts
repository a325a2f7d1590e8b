// The render service shared by both executors: render the template set against guarded store
// views under the set's guard policy, then validate (structure, then auxiliary files). Both steps
// are incremental per engine and give exactly what a cold render and a full validation give.
// Every rejection is reported (escaped) and returned as data; object data never fails a render;
// the output is capped in size. Returns plain data, never throws: failures become PipelineErrors
// on the main thread.
import { performance } from 'node:perf_hooks';
import { contextOf, withGuardContext } from '../store/guard-context.js';
import type { Finding } from '../routing/findings.js';
import { gatewayOptions } from '../routing/gateway-model.js';
import { modelOptions } from '../routing/model.js';
import { servedIngresses } from '../routing/served-ingresses.js';
import { GuardedReader } from '../store/guarded-reader.js';
import type { IndexedStore } from '../store/indexed-store.js';
import { escapeLogText, printable } from '../store/log-text.js';
import { DEFAULT_MAX_OUTPUT_BYTES, MAX_SERVER_SLOTS } from '../store/value-limits.js';
import type { AuxiliaryFiles, OriginIndex, Rejection, RenderBaseline, RenderExclusions, RenderOutcome, RenderSuccess, TemplateSetSource } from '../protocol.js';
import { ExclusionFilter } from '../store/render-exclusions.js';
import { ChangedWindows, type TextViews } from './changed-windows.js';
import { checksum, lineDigestOf, SLOTS_ID } from './checksum.js';
import { ConfigDigest } from './config-digest.js';
import { OriginIndexer, withSections } from './origin-index.js';
import { endpointLane, type LaneRender } from './endpoint-lane.js';
import { laneBase, storeAt, type LaneBase } from './lane-base.js';
import { SliceServices } from './slice-services.js';
import type { SplicedText } from '../templates/memo-cache.js';
import { outputPaths, type RenderScope, type TemplateEngine } from '../templates/template-engine.js';
import { formatIssue, IncrementalValidator, type ValidationIssue } from '../validate/validator.js';

export interface RenderRequest {
  readonly set: TemplateSetSource;
  readonly lookup: (store: string) => IndexedStore | undefined;
  readonly storeVersion: number;
  readonly baseline?: RenderBaseline | undefined;
  /** What the render gate takes out of this render. */
  readonly exclusions?: RenderExclusions | undefined;
}

/** At most this many issues are spelled out in a failure message. */
const MAX_REPORTED_ISSUES = 5;

/**
 * One validator per engine (that is, per worker or inline pipeline): it re-parses only the
 * sections whose text changed since the previous render, with reports identical to a full parse.
 */
const engineStates = new WeakMap<TemplateEngine, EngineState>();

/** What one engine's renders keep between renders, next to the engine's own caches. */
interface EngineState {
  /** Where each file changed since the previous render, found once for all its readers; cleared as each render starts. */
  readonly windows: ChangedWindows;
  readonly validator: IncrementalValidator;
  /** The last text and digest of each output file, for the checksum. */
  readonly digests: Map<string, { text: string; digest: string }>;
  /** The config's digest, kept per block between renders. */
  readonly configDigest: ConfigDigest;
  /** The digests of the line-digested files (LINE_DIGESTED), kept per line between renders. */
  readonly lineDigests: Map<string, ConfigDigest>;
  /** The origin index's objects and names, reused where the model's objects are the same. */
  readonly origins: OriginIndexer;
  /** The Service of each EndpointSlice, and what the last render leaves the endpoint lane. */
  readonly slices: SliceServices;
  lane: LaneBase | undefined;
}

function stateOf(engine: TemplateEngine): EngineState {
  let state = engineStates.get(engine);
  if (state === undefined) {
    const windows = new ChangedWindows();
    state = { windows, validator: new IncrementalValidator(windows), digests: new Map(), configDigest: new ConfigDigest(), lineDigests: new Map(), origins: new OriginIndexer(), slices: new SliceServices(), lane: undefined };
    engineStates.set(engine, state);
  }
  return state;
}

/**
 * The changed lines of file `id` (`maps/<name>`, `files/<name>`, `certificates/<name>`) between
 * `before` and `after`, as text-window.ts's changedLines gives them: found once for the engine's
 * latest render and every reader of it (when `before` is the text that render compared with).
 */
export function changedLinesOf(engine: TemplateEngine, id: string, before: string, after: string): ReturnType<ChangedWindows['lines']> {
  return stateOf(engine).windows.lines(id, before, after);
}

/** Views of file `id`'s texts, as asked of `changedLinesOf`, that read them without flattening them (changed-windows.ts). */
export function viewsOf(engine: TemplateEngine, id: string, before: string, after: string): TextViews {
  return stateOf(engine).windows.views(id, before, after);
}

export function renderAndValidate(engine: TemplateEngine, request: RenderRequest): RenderOutcome {
  const start = performance.now();
  const warnings: string[] = [];
  const findings: Rejection[] = [];
  const found = new Set<string>();
  // Every warning is escaped here, whoever built it: object text never reaches a log raw.
  const warn = (message: string, finding?: Finding): void => {
    const escaped = escapeLogText(message);
    warnings.push(escaped);
    if (finding !== undefined && !found.has(escaped)) {
      found.add(escaped);
      findings.push(findingRejection(finding, escaped));
    }
  };
  const { set } = request;
  const paths = outputPaths(set.values);
  const context = contextOf(set);
  const reader = new GuardedReader(request.lookup, warn, context, new ExclusionFilter(request.exclusions));
  const scope: RenderScope = {
    reader,
    values: set.values,
    baseline: request.baseline,
    paths,
    warn,
    emitted: { maps: {}, files: {}, certificates: {} },
  };
  const serverSlots = Number(set.values.serverSlots ?? 0);
  if (serverSlots > MAX_SERVER_SLOTS) warn(`values.serverSlots ${serverSlots} is over the limit of ${MAX_SERVER_SLOTS}; backends get at most ${MAX_SERVER_SLOTS} slots`);
  let output;
  let rejections: readonly Rejection[] = [];
  let origins: OriginIndex;
  let served: readonly string[] | undefined;
  const state = stateOf(engine);
  state.windows.clear();
  // Bad values (modelOptions throws) fail in the whole render below, with its message.
  let sliceStore: string | undefined;
  try {
    sliceStore = modelOptions(set.values).stores.endpointSlices;
  } catch {
    sliceStore = undefined;
  }
  const changes = sliceStore === undefined ? undefined : state.slices.observe(request.lookup(sliceStore));
  const base = state.lane;
  state.lane = undefined;
  if (base !== undefined && sliceStore !== undefined && warnings.length === 0) {
    const texts = { config: state.configDigest, slots: lineDigestOf(state.lineDigests, SLOTS_ID) };
    const lane = withGuardContext(context, () => endpointLane(engine, base, { ...request, context, paths, baseline: request.baseline, exclusions: request.exclusions }, changes, texts));
    if (lane !== undefined) {
      // The validator's text is the previous output's, which the lane's output replaces.
      state.validator.releaseText();
      const outcome = laneOutcome(lane, base, state, request.storeVersion, start, set.values.maxOutputBytes);
      if (outcome.ok) state.lane = { ...base, outcome, generations: new Map(base.generations).set(sliceStore, storeAt(request.lookup(sliceStore))) };
      return outcome;
    }
  }
  try {
    output = withGuardContext(context, () => {
      reader.collectRejections(set.stores.map((def) => def.name));
      const rendered = engine.render(set, scope, request.storeVersion);
      served = servedIngresses(reader, modelOptions(set.values));
      rejections = reader.rejections;
      return rendered;
    });
    const config = output.haproxyConfig;
    origins = withGuardContext(context, () => state.origins.build({ config, routing: scope.routing, reader, ingressStore: modelOptions(set.values).stores.ingresses, routeStore: routeStoreOf(set) }));
  } catch (error) {
    return { ok: false, phase: 'render', message: (error as Error).message, warnings, rejections: reader.rejections };
  }
  state.windows.hint(fileSplices(scope, output.auxiliaryFiles));
  const rendered = performance.now();
  const tooLarge = outputSizeProblem(output.haproxyConfig, output.auxiliaryFiles, set.values.maxOutputBytes);
  if (tooLarge !== null) return { ok: false, phase: 'render', message: tooLarge, warnings, rejections };

  const { validator } = state;
  const structure = validator.validateStructure(output.haproxyConfig, output.auxiliaryFiles, paths);
  // An unchanged config goes on as the string the validator kept: one copy, compared by identity from here on.
  const kept = validator.keptText(output.haproxyConfig);
  if (kept !== undefined) {
    output = { ...output, haproxyConfig: kept };
    origins = withSections({ objects: origins.objects, names: origins.names }, kept);
  }
  warnings.push(...structure.warnings);
  if (structure.errors.length > 0) return failure('validation', structure.errors, warnings, rejections);
  const auxiliary = validator.checkAuxiliaryFiles(output.auxiliaryFiles, output.haproxyConfig, paths);
  warnings.push(...auxiliary.warnings);
  if (auxiliary.errors.length > 0) return failure('auxiliary', auxiliary.errors, warnings, rejections);
  const sum = checksum(output.haproxyConfig, output.auxiliaryFiles, state);
  const validated = performance.now();

  const success: RenderSuccess = {
    ok: true,
    haproxyConfig: output.haproxyConfig,
    auxiliaryFiles: output.auxiliaryFiles,
    checksum: sum,
    storeVersion: request.storeVersion,
    timings: { renderMs: rendered - start, validateMs: validated - rendered, totalMs: validated - start },
    warnings,
    rejections,
    origins,
    ...(served === undefined ? {} : { servedIngresses: served }),
    ...(findings.length === 0 ? {} : { findings }),
    ...(scope.routing === undefined || scope.routing.gateway.status.gatewayClasses.length === 0 ? {} : { gatewayStatus: scope.routing.gateway.status }),
  };
  state.lane = laneBase(set, request, success, scope.routing, scope.templateReads ?? new Set(), base);
  return success;
}

/** The lane's render as an outcome: checked for size, checksummed, everything else the base's. */
function laneOutcome(lane: LaneRender, base: LaneBase, state: EngineState, storeVersion: number, start: number, maxOutputBytes: unknown): RenderOutcome {
  const previous = base.outcome;
  // The same limit as a full render's (values.maxOutputBytes).
  const tooLarge = outputSizeProblem(lane.haproxyConfig, lane.auxiliaryFiles, maxOutputBytes, lane.bytes);
  if (tooLarge !== null) return { ok: false, phase: 'render', message: tooLarge, warnings: [...previous.warnings], rejections: previous.rejections };
  // The lane edited the kept digests into its texts when they held the base's (and otherwise left
  // them alone): either way the checksum needs no window of the edits, which would be of the base.
  const sum = checksum(lane.haproxyConfig, lane.auxiliaryFiles, state);
  const rendered = performance.now();
  // The same origins, their sections read from this config: the previous config stays unpinned.
  const origins = previous.origins === undefined ? {} : { origins: withSections({ objects: previous.origins.objects, names: previous.origins.names }, lane.haproxyConfig) };
  return { ...previous, haproxyConfig: lane.haproxyConfig, auxiliaryFiles: lane.auxiliaryFiles, checksum: sum, storeVersion, timings: { renderMs: rendered - start, validateMs: 0, totalMs: rendered - start }, edits: lane.edits, ...origins };
}

/** A routing finding as a rejection of its Ingress; the reason is the warning without its `Ingress ns/name: ` lead. */
function findingRejection(finding: Finding, message: string): Rejection {
  const namespace = printable(finding.namespace);
  const name = printable(finding.name);
  const lead = `Ingress ${namespace}/${name}: `;
  const reason = message.startsWith(lead) ? message.slice(lead.length) : message;
  return Object.freeze({ kind: 'Ingress', namespace, name, scope: finding.scope, reason, code: finding.code });
}

export { withSections } from './origin-index.js';

function failure(phase: 'validation' | 'auxiliary', issues: readonly ValidationIssue[], warnings: string[], rejections: readonly Rejection[]): RenderOutcome {
  const shown = issues.slice(0, MAX_REPORTED_ISSUES).map(formatIssue);
  const more = issues.length > MAX_REPORTED_ISSUES ? `; and ${issues.length - MAX_REPORTED_ISSUES} more` : '';
  return { ok: false, phase, message: shown.join('; ') + more, warnings, rejections };
}

/**
 * Why the output is too large to hand on (`values.maxOutputBytes`, 32 MiB by default), or null.
 * Lengths are summed first (no pass over the text); bytes are counted only near the limit.
 */
function outputSizeProblem(config: string, aux: AuxiliaryFiles, configured: unknown, knownBytes?: number): string | null {
  const wanted = Number(configured ?? DEFAULT_MAX_OUTPUT_BYTES);
  const limit = Number.isInteger(wanted) && wanted > 0 ? wanted : DEFAULT_MAX_OUTPUT_BYTES;
  if (knownBytes !== undefined && knownBytes <= limit) return null;
  const texts = [config, ...(['maps', 'files', 'certificates'] as const).flatMap((kind) => Object.values(aux[kind]))];
  let length = 0;
  for (const text of texts) length += text.length;
  // A UTF-16 code unit is at most 3 UTF-8 bytes: below a third of the limit nothing can be over.
  if (length * 3 <= limit) return null;
  let bytes = 0;
  for (const text of texts) bytes += Buffer.byteLength(text);
  if (bytes <= limit) return null;
  return `the rendered output is ${bytes} bytes (config and auxiliary files), over the limit of ${limit} bytes (values.maxOutputBytes)`;
}

/**
 * The render's keyed-loop splices whose text is a whole auxiliary file (a map is one loop), for
 * the changed-line lookups of those files. The others (loops inside the config or inside a larger
 * file) are dropped at once: kept, they would hold their earlier texts until the next render.
 */
function fileSplices(scope: RenderScope, aux: AuxiliaryFiles): SplicedText[] {
  const splices = scope.memo?.takeSplices() ?? [];
  if (splices.length === 0) return splices;
  const texts = (['maps', 'files', 'certificates'] as const).flatMap((kind) => Object.values(aux[kind]));
  return splices.filter((splice) => texts.some((text) => text.length === splice.after.length && text === splice.after));
}

/** The store HTTPRoutes are read from, when the set declares it. */
function routeStoreOf(set: TemplateSetSource): string | undefined {
  const name = gatewayOptions(set.values).stores.httpRoutes;
  return set.stores.some((def) => def.name === name) ? name : undefined;
}

// The render service shared by both executors: render the template set against a store view,
// then validate (structure, then auxiliary files). Both steps are incremental per engine (model
// entries, memo blocks, validated sections are reused when unchanged) and give exactly what a
// cold render and a full validation give. Returns plain data, never throws: the
// result crosses the thread boundary as is, and the main thread turns failures into
// PipelineErrors.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { GuardedReader } from '../store/guarded-reader.js';
import type { IndexedStore } from '../store/indexed-store.js';
import type { AuxiliaryFiles, RenderBaseline, RenderOutcome, TemplateSetSource } from '../protocol.js';
import { outputPaths, type RenderScope, type TemplateEngine } from '../templates/template-engine.js';
import { formatIssue, IncrementalValidator, type ValidationIssue } from '../validate/validator.js';

export interface RenderRequest {
  readonly set: TemplateSetSource;
  readonly lookup: (store: string) => IndexedStore | undefined;
  readonly storeVersion: number;
  readonly baseline?: RenderBaseline | undefined;
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
  readonly validator: IncrementalValidator;
  /** The last text and digest of each output file, for the checksum. */
  readonly digests: Map<string, { text: string; digest: string }>;
}

export function renderAndValidate(engine: TemplateEngine, request: RenderRequest): RenderOutcome {
  const start = performance.now();
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
  };
  const paths = outputPaths(request.set.values);
  const scope: RenderScope = {
    reader: new GuardedReader(request.lookup, warn),
    values: request.set.values,
    baseline: request.baseline,
    paths,
    warn,
    emitted: { maps: {}, files: {}, certificates: {} },
  };
  let output;
  try {
    output = engine.render(request.set, scope, request.storeVersion);
  } catch (error) {
    return { ok: false, phase: 'render', message: (error as Error).message, warnings };
  }
  const rendered = performance.now();

  let state = engineStates.get(engine);
  if (state === undefined) {
    state = { validator: new IncrementalValidator(), digests: new Map() };
    engineStates.set(engine, state);
  }
  const { validator, digests } = state;
  const structure = validator.validateStructure(output.haproxyConfig, output.auxiliaryFiles, paths);
  warnings.push(...structure.warnings);
  if (structure.errors.length > 0) return failure('validation', structure.errors, warnings);
  const auxiliary = validator.checkAuxiliaryFiles(output.auxiliaryFiles, output.haproxyConfig, paths);
  warnings.push(...auxiliary.warnings);
  if (auxiliary.errors.length > 0) return failure('auxiliary', auxiliary.errors, warnings);
  const sum = checksum(output.haproxyConfig, output.auxiliaryFiles, digests);
  const validated = performance.now();

  return {
    ok: true,
    haproxyConfig: output.haproxyConfig,
    auxiliaryFiles: output.auxiliaryFiles,
    checksum: sum,
    storeVersion: request.storeVersion,
    timings: { renderMs: rendered - start, validateMs: validated - rendered, totalMs: validated - start },
    warnings,
  };
}

function failure(phase: 'validation' | 'auxiliary', issues: readonly ValidationIssue[], warnings: string[]): RenderOutcome {
  const shown = issues.slice(0, MAX_REPORTED_ISSUES).map(formatIssue);
  const more = issues.length > MAX_REPORTED_ISSUES ? `; and ${issues.length - MAX_REPORTED_ISSUES} more` : '';
  return { ok: false, phase, message: shown.join('; ') + more, warnings };
}

/**
 * SHA-256 over the config's digest and each auxiliary file's kind, name and digest, in a fixed
 * order. Per-file digests let an unchanged file (the same text as in the previous render) skip
 * hashing: `digests` remembers the last text and digest per file.
 */
export function checksum(config: string, aux: AuxiliaryFiles, digests?: Map<string, { text: string; digest: string }>): string {
  const hash = createHash('sha256');
  hash.update(fileDigest('config', config, digests));
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    const files = aux[kind];
    for (const name of Object.keys(files).sort()) {
      hash.update(`\0${kind}/${name}\0`);
      hash.update(fileDigest(`${kind}/${name}`, files[name] as string, digests));
    }
  }
  if (digests !== undefined) {
    // Bounded by the files of this render.
    const live = new Set(['config', ...(['maps', 'files', 'certificates'] as const).flatMap((kind) => Object.keys(aux[kind]).map((name) => `${kind}/${name}`))]);
    for (const id of digests.keys()) if (!live.has(id)) digests.delete(id);
  }
  return hash.digest('hex');
}

function fileDigest(id: string, text: string, digests: Map<string, { text: string; digest: string }> | undefined): string {
  const known = digests?.get(id);
  if (known !== undefined && known.text === text) return known.digest;
  const digest = createHash('sha256').update(text).digest('hex');
  digests?.set(id, { text, digest });
  return digest;
}

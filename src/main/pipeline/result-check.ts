// What the Coordinator accepts from a PipelineExecutor. Executors are the embedder's extension
// point, so a result is read defensively: every field SPEC §7 requires is checked once, here,
// and copied into a plain object, so that a getter that throws, a Proxy or a later mutation by
// the executor cannot reach the Coordinator's loop. `rejections` is optional (absent: none).
// Results this package's executors built (checked-results.ts) are taken as they are.
import type { AuxiliaryFiles, OriginIndex, Rejection, RenderPatch, RenderTimings, TextEdit } from '../../worker/protocol.js';
import type { GatewayStatusReport } from '../../worker/routing/gateway-model.js';
import { isChecked } from './checked-results.js';
import type { CheckedPipelineResult } from './pipeline.js';

/** A result that could not be read as a PipelineResult: the reason names the field. */
export class MalformedResultError extends Error {
  override readonly name = 'MalformedResultError';
}

const AUXILIARY_KINDS = ['maps', 'files', 'certificates'] as const;
const TIMING_FIELDS = ['renderMs', 'validateMs', 'totalMs'] as const;
const REJECTION_FIELDS = ['kind', 'namespace', 'name', 'scope', 'reason'] as const;

/**
 * Reads an executor's result into a PipelineResult, or throws MalformedResultError naming the
 * first field that is missing or of the wrong type (a throw while reading counts the same way).
 */
export function readPipelineResult(raw: unknown): CheckedPipelineResult {
  // This package's executors' results are well formed and frozen: nothing to copy.
  if (isChecked(raw)) return raw as CheckedPipelineResult;
  try {
    return readResult(raw);
  } catch (error) {
    if (error instanceof MalformedResultError) throw error;
    throw new MalformedResultError(`the pipeline result could not be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function readResult(raw: unknown): CheckedPipelineResult {
  const result = record(raw, 'the pipeline result');
  const rejections = result['rejections'];
  const origins = result['origins'];
  const served = result['servedIngresses'];
  const findings = result['findings'];
  const gatewayStatus = result['gatewayStatus'];
  const patch = result['patch'];
  return {
    renderId: text(result['renderId'], 'renderId'),
    haproxyConfig: text(result['haproxyConfig'], 'haproxyConfig'),
    auxiliaryFiles: readAuxiliaryFiles(result['auxiliaryFiles']),
    checksum: text(result['checksum'], 'checksum'),
    storeVersion: finite(result['storeVersion'], 'storeVersion'),
    timings: readTimings(result['timings']),
    warnings: list(result['warnings'], 'warnings').map((w, i) => text(w, `warnings[${i}]`)),
    rejections: rejections === undefined ? [] : list(rejections, 'rejections').map((r, i) => readRejection(r, `rejections[${i}]`)),
    ...(origins === undefined ? {} : { origins: readOrigins(origins) }),
    ...(served === undefined ? {} : { servedIngresses: list(served, 'servedIngresses').map((key, i) => text(key, `servedIngresses[${i}]`)) }),
    ...(findings === undefined ? {} : { findings: list(findings, 'findings').map((f, i) => readRejection(f, `findings[${i}]`)) }),
    // Read by a status writer, which checks what it uses; here only that it is an object.
    ...(gatewayStatus === undefined ? {} : { gatewayStatus: record(gatewayStatus, 'gatewayStatus') as unknown as GatewayStatusReport }),
    ...(patch === undefined ? {} : { patch: readPatch(patch) }),
  };
}

/** A patch's shape: the render it edits, and per file a list of edits with whole-number offsets. */
function readPatch(raw: unknown): RenderPatch {
  const patch = record(raw, 'patch');
  const from = text(patch['from'], 'patch.from');
  const edits: Record<string, TextEdit[]> = {};
  for (const [file, fileEdits] of Object.entries(record(patch['edits'], 'patch.edits'))) {
    edits[file] = list(fileEdits, `patch.edits[${JSON.stringify(file)}]`).map((rawEdit, i) => {
      const what = `patch.edits[${JSON.stringify(file)}][${i}]`;
      const edit = record(rawEdit, what);
      const at = finite(edit['at'], `${what}.at`);
      const remove = finite(edit['remove'], `${what}.remove`);
      if (!Number.isInteger(at) || at < 0 || !Number.isInteger(remove) || remove < 0) throw new MalformedResultError(`${what} has offsets that are not whole numbers from 0`);
      return { at, remove, text: text(edit['text'], `${what}.text`) };
    });
  }
  return { from, edits };
}

/**
 * The origin index is the gate's map from config lines to objects: its shape is checked, its
 * entries are read where used (a getter's throw is the gate's to handle, where it traces a refusal).
 */
function readOrigins(raw: unknown): OriginIndex {
  const origins = record(raw, 'origins');
  // Objects and sections computed on first read (this package's executors) are left unread: only a refusal needs them.
  const objects = Object.getOwnPropertyDescriptor(origins, 'objects');
  if (objects === undefined || !('get' in objects)) list(origins['objects'], 'origins.objects');
  const sections = Object.getOwnPropertyDescriptor(origins, 'sections');
  if (sections === undefined || !('get' in sections)) list(origins['sections'], 'origins.sections');
  record(origins['names'], 'origins.names');
  return origins as unknown as OriginIndex;
}

function readAuxiliaryFiles(raw: unknown): AuxiliaryFiles {
  const aux = record(raw, 'auxiliaryFiles');
  const out: Record<string, Record<string, string>> = {};
  for (const kind of AUXILIARY_KINDS) {
    const files = record(aux[kind], `auxiliaryFiles.${kind}`);
    const copy: Record<string, string> = {};
    for (const [name, content] of Object.entries(files)) copy[name] = text(content, `auxiliaryFiles.${kind}[${JSON.stringify(name)}]`);
    out[kind] = copy;
  }
  return out as unknown as AuxiliaryFiles;
}

function readTimings(raw: unknown): RenderTimings {
  const timings = record(raw, 'timings');
  const out: Record<string, number> = {};
  for (const field of TIMING_FIELDS) out[field] = finite(timings[field], `timings.${field}`);
  return out as unknown as RenderTimings;
}

function readRejection(raw: unknown, what: string): Rejection {
  const rejection = record(raw, what);
  const out: Record<string, unknown> = {};
  for (const field of REJECTION_FIELDS) out[field] = text(rejection[field], `${what}.${field}`);
  const { wholeObject, code } = rejection;
  if (wholeObject !== undefined) {
    if (wholeObject !== true) throw new MalformedResultError(`${what}.wholeObject is not true (got ${describe(wholeObject)})`);
    out['wholeObject'] = true;
  }
  if (code !== undefined) out['code'] = text(code, `${what}.code`);
  return out as unknown as Rejection;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new MalformedResultError(`${what} is not an object (got ${describe(value)})`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new MalformedResultError(`${what} is not an array (got ${describe(value)})`);
  return value;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new MalformedResultError(`${what} is not a string (got ${describe(value)})`);
  return value;
}

function finite(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new MalformedResultError(`${what} is not a finite number (got ${describe(value)})`);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'undefined' ? 'nothing' : `a ${typeof value}`;
}

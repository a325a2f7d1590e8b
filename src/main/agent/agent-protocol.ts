// The agent API's messages (`GET /v1/state`, `POST /v1/apply`) as data, and the one parser that
// turns an untrusted apply body into a checked ApplyRequest. Shared by the agent (which parses)
// and the leader's AgentTarget (which builds requests), so both sides read the same contract.
// Everything is capped here: a body that passes holds only plain file names, bounded strings and
// the known runtime operations, so nothing behind the parser re-checks shapes.
import type { RuntimeOp } from '../deploy/runtime-ops.js';

/** Auxiliary file kinds, as in a render's `auxiliaryFiles`. */
export const FILE_KINDS = ['maps', 'files', 'certificates'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** The leader's output paths that its render names; the agent rewrites them to its own `--dir`. */
export interface LeaderPaths {
  readonly mapsDir: string;
  readonly filesDir: string;
  readonly certsDir: string;
  /** Where the render's admin socket lives (`<out>/run`). */
  readonly runDir: string;
}

/** A change of files: text to write, or null to remove. */
export type FileChanges = Readonly<Record<FileKind, Readonly<Record<string, string | null>>>>;

export interface ApplyRequest {
  readonly epoch: number;
  readonly sequence: number;
  /** The checksum the agent serves after this apply. */
  readonly checksum: string;
  /** The agent checksum the file changes are relative to; ignored when `full`. */
  readonly baseChecksum: string | null;
  /** `config` and `files` are the whole render: nothing of the agent's current files is kept. */
  readonly full: boolean;
  readonly paths: LeaderPaths;
  /** haproxy.cfg, when it changed (always with `full`). */
  readonly config?: string;
  /** Or, instead of `config`, the change to the base's haproxy.cfg (as the leader sent it). */
  readonly configPatch?: ConfigPatch;
  readonly files: FileChanges;
  /** Changes to maps and files the agent holds, each relative to the base's text (as the leader sent it). */
  readonly filePatches: Readonly<Record<'maps' | 'files', Readonly<Record<string, ConfigPatch>>>>;
  readonly runtimeOps: readonly RuntimeOp[];
  readonly reload: boolean;
}

/** The base's config text with [start, end) replaced by `text`; `digest` is the sha256 of the result. */
export interface ConfigPatch {
  readonly start: number;
  readonly end: number;
  readonly text: string;
  readonly digest: string;
}

/** `GET /v1/state`, and the `state` of every apply answer. */
export interface AgentState {
  readonly epoch: number;
  readonly sequence: number;
  /** Checksum of the render the agent's HAProxy serves; null before the first apply. */
  readonly checksum: string | null;
  /** sha256 of each file as the leader sent it: `haproxy.cfg`, `maps/<name>`, `files/<name>`, `certs/<name>`. */
  readonly files: Readonly<Record<string, string>>;
  readonly haproxy: { readonly version: string | null; readonly running: boolean };
  readonly ready: boolean;
}

/** Error answers carry one of these; `full_sync_required` (412) asks the leader to send everything. */
export type ApplyErrorCode = 'fenced' | 'full_sync_required' | 'refused' | 'invalid' | 'runtime_failed' | 'reload_failed' | 'state_not_saved' | 'unauthorized' | 'too_large';

export interface ApplyAnswer {
  readonly ok: boolean;
  readonly error?: ApplyErrorCode;
  readonly message?: string;
  /** Runtime API command lines HAProxy acknowledged. */
  readonly applied?: number;
  readonly reloaded?: boolean;
  readonly state: AgentState;
}

/** The record path of a file: how `AgentState.files` names it. */
export function recordPath(kind: FileKind, name: string): string {
  return kind === 'certificates' ? `certs/${name}` : `${kind}/${name}`;
}

export interface ApplyLimits {
  /** Longest config text. @default 64 MiB */
  readonly maxConfigBytes?: number;
  /** Files per kind. @default 100_000 */
  readonly maxFiles?: number;
  /** Runtime operations per apply. @default 1_000_000 */
  readonly maxOps?: number;
}

export type ParseResult = { readonly ok: true; readonly request: ApplyRequest } | { readonly ok: false; readonly message: string };

/** A plain file name: no directory part, nothing hidden (the output directory's rule). */
const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;
const MAX_FIELD = 4096;
const MAX_CHECKSUM = 256;

/** Parses and checks an apply body (already JSON-decoded). The message names the field. */
export function parseApplyRequest(body: unknown, limits: ApplyLimits = {}): ParseResult {
  try {
    return { ok: true, request: checkRequest(body, limits) };
  } catch (error) {
    if (error instanceof BadRequest) return { ok: false, message: error.message };
    throw error;
  }
}

class BadRequest extends Error {}

function checkRequest(body: unknown, limits: ApplyLimits): ApplyRequest {
  const o = record(body, 'body');
  const full = optionalBoolean(o.full, 'full') ?? false;
  const config = o.config === undefined ? undefined : text(o.config, 'config', limits.maxConfigBytes ?? 64 * 1024 * 1024);
  if (full && config === undefined) throw new BadRequest('full: a full sync needs config');
  const baseChecksum = o.baseChecksum === null || o.baseChecksum === undefined ? null : text(o.baseChecksum, 'baseChecksum', MAX_CHECKSUM);
  const paths = record(o.paths, 'paths');
  const configPatch = o.configPatch === undefined ? undefined : patch(o.configPatch, limits.maxConfigBytes ?? 64 * 1024 * 1024);
  if (configPatch !== undefined && (full || config !== undefined)) throw new BadRequest('configPatch: goes without config and without full');
  return {
    epoch: counter(o.epoch, 'epoch'),
    sequence: counter(o.sequence, 'sequence'),
    checksum: text(o.checksum, 'checksum', MAX_CHECKSUM),
    baseChecksum,
    full,
    paths: {
      mapsDir: absolutePath(paths.mapsDir, 'paths.mapsDir'),
      filesDir: absolutePath(paths.filesDir, 'paths.filesDir'),
      certsDir: absolutePath(paths.certsDir, 'paths.certsDir'),
      runDir: absolutePath(paths.runDir, 'paths.runDir'),
    },
    ...(config === undefined ? {} : { config }),
    ...(configPatch === undefined ? {} : { configPatch }),
    files: fileChanges(o.files, limits.maxFiles ?? 100_000, full),
    filePatches: filePatches(o.filePatches, limits.maxConfigBytes ?? 64 * 1024 * 1024, full),
    runtimeOps: runtimeOps(o.runtimeOps, limits.maxOps ?? 1_000_000),
    reload: optionalBoolean(o.reload, 'reload') ?? false,
  };
}

function patch(value: unknown, maxBytes: number, where = 'configPatch'): ConfigPatch {
  const o = record(value, where);
  const start = integer(o.start, `${where}.start`, 0, maxBytes);
  const end = integer(o.end, `${where}.end`, start, maxBytes);
  return { start, end, text: text(o.text, `${where}.text`, maxBytes), digest: text(o.digest, `${where}.digest`, MAX_CHECKSUM) };
}

function filePatches(value: unknown, maxBytes: number, full: boolean): ApplyRequest['filePatches'] {
  const o = value === undefined ? {} : record(value, 'filePatches');
  if (full && Object.keys(o).length > 0) throw new BadRequest('filePatches: a full sync sends whole files');
  const result: Record<'maps' | 'files', Record<string, ConfigPatch>> = { maps: {}, files: {} };
  for (const [kind, entries] of Object.entries(o)) {
    if (kind !== 'maps' && kind !== 'files') throw new BadRequest(`filePatches.${kind}: only maps and files are patched`);
    for (const [name, entry] of Object.entries(record(entries, `filePatches.${kind}`))) {
      if (!SAFE_NAME.test(name)) throw new BadRequest(`filePatches.${kind}: ${JSON.stringify(name.slice(0, 80))} is not a plain file name`);
      result[kind][name] = patch(entry, maxBytes, `filePatches.${kind}.${name}`);
    }
  }
  return result;
}

function fileChanges(value: unknown, maxFiles: number, full: boolean): FileChanges {
  const o = value === undefined ? {} : record(value, 'files');
  for (const key of Object.keys(o)) if (!(FILE_KINDS as readonly string[]).includes(key)) throw new BadRequest(`files.${key}: unknown file kind (expected ${FILE_KINDS.join(', ')})`);
  const result: Record<string, Record<string, string | null>> = {};
  for (const kind of FILE_KINDS) {
    const entries = o[kind] === undefined ? {} : record(o[kind], `files.${kind}`);
    const names = Object.keys(entries);
    if (names.length > maxFiles) throw new BadRequest(`files.${kind}: ${names.length} files, more than the ${maxFiles} allowed`);
    const kept: Record<string, string | null> = {};
    for (const name of names) {
      if (!SAFE_NAME.test(name)) throw new BadRequest(`files.${kind}: ${JSON.stringify(name.slice(0, 80))} is not a plain file name`);
      const content = entries[name];
      if (content === null && !full) kept[name] = null;
      else kept[name] = text(content, `files.${kind}.${name}`, Number.MAX_SAFE_INTEGER);
    }
    result[kind] = kept;
  }
  return result as unknown as FileChanges;
}

function runtimeOps(value: unknown, maxOps: number): RuntimeOp[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new BadRequest('runtimeOps: expected an array');
  if (value.length > maxOps) throw new BadRequest(`runtimeOps: ${value.length} operations, more than the ${maxOps} allowed`);
  return value.map((item, i) => runtimeOp(item, `runtimeOps[${i}]`));
}

function runtimeOp(value: unknown, where: string): RuntimeOp {
  const o = record(value, where);
  const field = (name: string): string => text(o[name], `${where}.${name}`, MAX_FIELD);
  switch (o.type) {
    case 'server-addr': {
      const port = o.port === undefined ? undefined : integer(o.port, `${where}.port`, 0, 65_535);
      return { type: 'server-addr', backend: field('backend'), server: field('server'), address: field('address'), ...(port === undefined ? {} : { port }) };
    }
    case 'server-state': {
      const state = o.state;
      if (state !== 'ready' && state !== 'maint') throw new BadRequest(`${where}.state: expected "ready" or "maint"`);
      return { type: 'server-state', backend: field('backend'), server: field('server'), state };
    }
    case 'server-weight':
      return { type: 'server-weight', backend: field('backend'), server: field('server'), weight: integer(o.weight, `${where}.weight`, 0, 256) };
    case 'map-add':
    case 'map-set':
      return { type: o.type, file: field('file'), key: field('key'), value: field('value') };
    case 'map-del':
      return { type: 'map-del', file: field('file'), key: field('key') };
    case 'map-replace': {
      if (!Array.isArray(o.entries)) throw new BadRequest(`${where}.entries: expected an array`);
      const entries = o.entries.map((entry: unknown, i: number): [string, string] => {
        if (!Array.isArray(entry) || entry.length !== 2) throw new BadRequest(`${where}.entries[${i}]: expected [key, value]`);
        return [text(entry[0], `${where}.entries[${i}][0]`, MAX_FIELD), text(entry[1], `${where}.entries[${i}][1]`, MAX_FIELD)];
      });
      return { type: 'map-replace', file: field('file'), entries };
    }
    default:
      throw new BadRequest(`${where}.type: unknown operation ${JSON.stringify(String(o.type).slice(0, 40))}`);
  }
}

function record(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequest(`${where}: expected an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, where: string, max: number): string {
  if (typeof value !== 'string') throw new BadRequest(`${where}: expected a string`);
  if (value.length > max) throw new BadRequest(`${where}: longer than ${max} characters`);
  return value;
}

function absolutePath(value: unknown, where: string): string {
  const path = text(value, where, MAX_FIELD);
  if (!path.startsWith('/') || /[\s\n]/.test(path)) throw new BadRequest(`${where}: expected an absolute path without spaces`);
  return path;
}

function counter(value: unknown, where: string): number {
  return integer(value, where, 0, Number.MAX_SAFE_INTEGER);
}

function integer(value: unknown, where: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new BadRequest(`${where}: expected an integer from ${min} to ${max}`);
  return value;
}

function optionalBoolean(value: unknown, where: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new BadRequest(`${where}: expected true or false`);
  return value;
}

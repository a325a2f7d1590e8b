// Reads a directory of Kubernetes YAML or JSON (multi-document files and `kind: List` included)
// into the stores a template set watches. A bad document is reported with its file, line and
// object name and skipped; every other object still loads. Files are capped in size and YAML
// aliases in number, so one hostile file costs bounded memory and fails alone.
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
import type { KubeObject, StoreDefinition } from '../../../worker/protocol.js';
import { resembledKind } from './kind-hint.js';

export interface LoadedObject {
  readonly store: string;
  readonly object: KubeObject;
  /** `file:line` where the object starts. */
  readonly source: string;
}

export interface ManifestLoad {
  readonly objects: LoadedObject[];
  readonly errors: string[];
  /**
   * The errors (also in `errors`) of files that were not read whole: unreadable, too large, or a
   * document that does not parse. The objects such a file holds are unknown, not absent.
   */
  readonly broken: string[];
  /** Objects whose kind no store watches (a kind that resembles a watched one is an error instead). */
  readonly ignored: number;
  readonly files: number;
}

const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** The default cap on one manifest file: far above any real manifest, far below what hurts. */
export const DEFAULT_MAX_MANIFEST_BYTES = 8 * 1024 * 1024;
/** YAML aliases one document may expand: enough for anchors in real manifests, not for a bomb. */
const MAX_ALIAS_COUNT = 100;

export interface ManifestLimits {
  /** Larger files are refused whole, with an error naming them. @default 8 MiB */
  readonly maxFileBytes?: number;
}

/**
 * Reads one manifest file, or explains why not: too large (the cap and the size named), or
 * unreadable. Never reads more than the cap into memory.
 */
export async function readManifestFile(file: string, name: string, limits: ManifestLimits = {}): Promise<{ text: string } | { error: string }> {
  const cap = limits.maxFileBytes ?? DEFAULT_MAX_MANIFEST_BYTES;
  try {
    const size = (await stat(file)).size;
    if (size > cap) return { error: `${name}: ${size} bytes is over the manifest size limit of ${cap} bytes; the file is ignored` };
    return { text: await readFile(file, 'utf8') };
  } catch (error) {
    return { error: `${name}: cannot read: ${(error as Error).message}` };
  }
}

/** Whether a path names a manifest file by its extension. */
export function isManifestFile(path: string): boolean {
  return EXTENSIONS.has(extname(path));
}

export async function loadManifests(dir: string, stores: readonly StoreDefinition[], limits: ManifestLimits = {}): Promise<ManifestLoad> {
  const files = await listManifestFiles(dir);
  const objects: LoadedObject[] = [];
  const errors: string[] = [];
  const broken: string[] = [];
  let ignored = 0;
  for (const file of files) {
    const name = relative(process.cwd(), file) || file;
    const read = await readManifestFile(file, name, limits);
    if ('error' in read) {
      errors.push(read.error);
      broken.push(read.error);
      continue;
    }
    const result = parseManifest(read.text, name, stores);
    objects.push(...result.objects);
    errors.push(...result.errors);
    broken.push(...result.broken);
    ignored += result.ignored;
  }
  return { objects, errors, broken, ignored, files: files.length };
}

/** Parses one file's text. Pure, so tests can feed it strings. */
export function parseManifest(text: string, file: string, stores: readonly StoreDefinition[]): Omit<ManifestLoad, 'files'> {
  const objects: LoadedObject[] = [];
  const errors: string[] = [];
  const broken: string[] = [];
  let ignored = 0;
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  const documents = Array.isArray(docs) ? docs : [docs];
  for (const doc of documents) {
    // The object's own first line, not the `---` that opens its document.
    const start = (doc.contents as { range?: [number, number, number] } | null)?.range?.[0] ?? doc.range[0];
    const line = lineCounter.linePos(start).line;
    const where = `${file}:${line}`;
    if (doc.errors.length > 0) {
      const first = doc.errors[0];
      const errLine = first?.pos === undefined ? line : lineCounter.linePos(first.pos[0]).line;
      const error = `${file}:${errLine}: invalid YAML: ${first?.message.split('\n')[0] ?? 'parse error'}`;
      errors.push(error);
      broken.push(error);
      continue;
    }
    let value: unknown;
    try {
      // An alias bomb or an alias to an anchor that does not exist throws here, for this
      // document only.
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      const message = `${where}: invalid YAML: ${(error as Error).message.split('\n')[0]}`;
      errors.push(message);
      broken.push(message);
      continue;
    }
    if (value === null || value === undefined) continue;
    const items = isRecord(value) && value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    for (const item of items) {
      const problem = checkShape(item);
      if (problem !== null) {
        errors.push(`${where}: ${problem}`);
        continue;
      }
      const object = item as KubeObject;
      const store = storeFor(object, stores);
      if (store === undefined) {
        const resembled = resembledKind(object.kind as string, [...new Set(stores.map((s) => s.kind))]);
        if (resembled === undefined) ignored++;
        else errors.push(`${where}: kind ${JSON.stringify(object.kind)} is not a watched kind; did you mean ${resembled}?`);
        continue;
      }
      objects.push({ store, object, source: where });
    }
  }
  return { objects, errors, broken, ignored };
}

function checkShape(item: unknown): string | null {
  if (!isRecord(item)) return 'a Kubernetes object must be a mapping';
  const meta = isRecord(item.metadata) ? item.metadata : undefined;
  const name = typeof meta?.name === 'string' ? (typeof meta.namespace === 'string' ? `${meta.namespace}/${meta.name}` : meta.name) : undefined;
  const label = `${typeof item.kind === 'string' ? item.kind : 'object'}${name === undefined ? '' : ` ${name}`}`;
  if (typeof item.apiVersion !== 'string' || item.apiVersion === '') return `${label}: apiVersion is missing`;
  if (typeof item.kind !== 'string' || item.kind === '') return `${label}: kind is missing`;
  if (!isRecord(item.metadata)) return `${label}: metadata is missing`;
  if (typeof item.metadata.name !== 'string' || item.metadata.name === '') return `${label}: metadata.name is missing`;
  if (item.metadata.namespace !== undefined && typeof item.metadata.namespace !== 'string') return `${label}: metadata.namespace must be a string`;
  return null;
}

/** Namespaced objects without a namespace land in `default`, as kubectl would put them; cluster-scoped ones keep none. */
function storeFor(object: KubeObject, stores: readonly StoreDefinition[]): string | undefined {
  const def = stores.find((s) => s.kind === object.kind && s.apiVersion === object.apiVersion);
  if (def !== undefined && def.namespaced !== false && object.metadata.namespace === undefined) object.metadata.namespace = 'default';
  return def?.name;
}

/** Every manifest file under `dir`, recursively, in name order. */
export async function listManifestFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listManifestFiles(path)));
    else if (entry.isFile() && isManifestFile(entry.name)) out.push(path);
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Reads a directory of Kubernetes YAML or JSON (multi-document files and `kind: List` included)
// into the stores a template set watches. A bad document is reported with its file, line and
// object name and skipped; every other object still loads.
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
import type { KubeObject, StoreDefinition } from '../../../worker/protocol.js';

export interface LoadedObject {
  readonly store: string;
  readonly object: KubeObject;
  /** `file:line` where the object starts. */
  readonly source: string;
}

export interface ManifestLoad {
  readonly objects: LoadedObject[];
  readonly errors: string[];
  /** Objects whose kind no store watches. */
  readonly ignored: number;
  readonly files: number;
}

const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

export async function loadManifests(dir: string, stores: readonly StoreDefinition[]): Promise<ManifestLoad> {
  const files = await listFiles(dir);
  const objects: LoadedObject[] = [];
  const errors: string[] = [];
  let ignored = 0;
  for (const file of files) {
    const name = relative(process.cwd(), file) || file;
    const result = parseManifest(await readFile(file, 'utf8'), name, stores);
    objects.push(...result.objects);
    errors.push(...result.errors);
    ignored += result.ignored;
  }
  return { objects, errors, ignored, files: files.length };
}

/** Parses one file's text. Pure, so tests can feed it strings. */
export function parseManifest(text: string, file: string, stores: readonly StoreDefinition[]): Omit<ManifestLoad, 'files'> {
  const objects: LoadedObject[] = [];
  const errors: string[] = [];
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
      errors.push(`${file}:${errLine}: invalid YAML: ${first?.message.split('\n')[0] ?? 'parse error'}`);
      continue;
    }
    const value: unknown = doc.toJS();
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
        ignored++;
        continue;
      }
      objects.push({ store, object, source: where });
    }
  }
  return { objects, errors, ignored };
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

/** Namespaced objects without a namespace land in `default`, as kubectl would put them. */
function storeFor(object: KubeObject, stores: readonly StoreDefinition[]): string | undefined {
  const def = stores.find((s) => s.kind === object.kind && s.apiVersion === object.apiVersion);
  if (def !== undefined && object.metadata.namespace === undefined) object.metadata.namespace = 'default';
  return def?.name;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(path)));
    else if (entry.isFile() && EXTENSIONS.has(extname(entry.name))) out.push(path);
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

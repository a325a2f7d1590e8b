// Loads a template set (one YAML file) into the plain form workers receive, with a content hash
// that keys the workers' compiled-template caches. `--set key=value` overrides land in `values`.
// Errors name the file and, for YAML syntax errors, the line.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { StoreDefinition, TemplateSetSource } from '../../worker/protocol.js';
import { DEFAULT_TEMPLATE_SET_PATH } from '../core/paths.js';

export { DEFAULT_TEMPLATE_SET_PATH };

export class TemplateSetError extends Error {
  constructor(readonly file: string, message: string) {
    super(`${file}: ${message}`);
    this.name = 'TemplateSetError';
  }
}

export async function loadTemplateSet(file: string = DEFAULT_TEMPLATE_SET_PATH, overrides: Record<string, unknown> = {}): Promise<TemplateSetSource> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new TemplateSetError(file, `cannot read template set: ${(error as Error).message}`);
  }
  return parseTemplateSet(text, file, overrides);
}

export function parseTemplateSet(text: string, file: string, overrides: Record<string, unknown> = {}): TemplateSetSource {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const line = first?.linePos?.[0]?.line;
    throw new TemplateSetError(file, `invalid YAML${line === undefined ? '' : ` at line ${line}`}: ${first?.message ?? 'parse error'}`);
  }
  const raw: unknown = doc.toJS();
  if (!isRecord(raw)) throw new TemplateSetError(file, 'a template set must be a YAML mapping');
  const known = new Set(['watchedResources', 'templateSnippets', 'haproxyConfig', 'maps', 'files', 'sslCertificates', 'values']);
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) throw new TemplateSetError(file, `unknown top-level key ${JSON.stringify(key)}; expected one of ${[...known].join(', ')}`);
  }
  if (typeof raw.haproxyConfig !== 'string' || raw.haproxyConfig.trim() === '') {
    throw new TemplateSetError(file, 'haproxyConfig must be a non-empty template string');
  }
  const stores = parseWatchedResources(raw.watchedResources, file);
  const values = { ...(isRecord(raw.values) ? raw.values : {}), ...overrides };
  const set = {
    stores,
    snippets: stringRecord(raw.templateSnippets, 'templateSnippets', file),
    haproxyConfig: raw.haproxyConfig,
    maps: stringRecord(raw.maps, 'maps', file),
    files: stringRecord(raw.files, 'files', file),
    sslCertificates: stringRecord(raw.sslCertificates, 'sslCertificates', file),
    values,
  };
  const hash = createHash('sha256').update(JSON.stringify(set)).digest('hex').slice(0, 16);
  return { hash, ...set };
}

/** Keys that would reach an object's prototype. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * Parses `--set key=value` pairs. Dotted keys nest (`a.b=1`); numbers and booleans are typed.
 */
export function parseSetOverrides(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new TypeError(`--set expects key=value, got ${JSON.stringify(pair)}`);
    const path = pair.slice(0, eq).split('.');
    if (path.some((part) => part === '' || FORBIDDEN_KEYS.has(part))) {
      throw new TypeError(`--set key ${JSON.stringify(pair.slice(0, eq))} is not allowed`);
    }
    const text = pair.slice(eq + 1);
    // Only text that round-trips is typed as a number: `080` and `1.10` stay strings.
    const value: unknown = text !== '' && String(Number(text)) === text ? Number(text) : text === 'true' ? true : text === 'false' ? false : text;
    let node = out;
    for (const part of path.slice(0, -1)) {
      const next = node[part];
      node[part] = isRecord(next) ? next : {};
      node = node[part] as Record<string, unknown>;
    }
    node[path[path.length - 1] as string] = value;
  }
  return out;
}

function parseWatchedResources(raw: unknown, file: string): StoreDefinition[] {
  if (raw === undefined) return [];
  if (!isRecord(raw)) throw new TemplateSetError(file, 'watchedResources must be a mapping of store name to resource');
  return Object.entries(raw).map(([name, def]) => {
    const where = `watchedResources.${name}`;
    if (!isRecord(def)) throw new TemplateSetError(file, `${where} must be a mapping`);
    if (typeof def.apiVersion !== 'string' || typeof def.kind !== 'string') {
      throw new TemplateSetError(file, `${where} needs apiVersion and kind strings`);
    }
    const indexBy = def.indexBy ?? ['metadata.namespace', 'metadata.name'];
    if (!Array.isArray(indexBy) || indexBy.length === 0 || !indexBy.every((p) => typeof p === 'string')) {
      throw new TemplateSetError(file, `${where}.indexBy must be a non-empty list of field paths`);
    }
    if (def.debounceMs !== undefined && (typeof def.debounceMs !== 'number' || def.debounceMs < 0)) {
      throw new TemplateSetError(file, `${where}.debounceMs must be a non-negative number`);
    }
    return {
      name,
      apiVersion: def.apiVersion,
      kind: def.kind,
      indexBy: indexBy as string[],
      ...(typeof def.debounceMs === 'number' ? { debounceMs: def.debounceMs } : {}),
    };
  });
}

function stringRecord(raw: unknown, key: string, file: string): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) throw new TemplateSetError(file, `${key} must be a mapping of name to template`);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'string') throw new TemplateSetError(file, `${key}.${name} must be a template string`);
    if (name.includes('/') || name.includes('..')) throw new TemplateSetError(file, `${key}.${name}: file names may not contain '/' or '..'`);
    out[name] = value;
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

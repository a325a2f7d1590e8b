// Loads a template set (one YAML file) into the plain form workers receive, with a content hash
// that keys the workers' compiled-template caches. Programmatic overrides (output paths, the
// default certificate) and then the user's `--set` / `--set-new` pairs land in `values`.
// Errors name the file and, for YAML syntax errors, the line.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { HttpResourceDefinition, StoreDefinition, TemplateSetSource } from '../../worker/protocol.js';
import { TemplateSetError } from '../core/errors.js';
import { DEFAULT_TEMPLATE_SET_PATH } from '../core/paths.js';
import { applyValueOverrides, type ValueOverrides } from './value-overrides.js';

export { DEFAULT_TEMPLATE_SET_PATH };

export { TemplateSetError } from '../core/errors.js';
export { applyValueOverrides, parseSetOverrides, type ValueOverrides } from './value-overrides.js';

/**
 * Loads and parses a template set. `overrides` replace or add values as given (the caller's own
 * settings); `user` holds `--set` pairs, whose keys must exist in the values, and `--set-new` pairs.
 */
export async function loadTemplateSet(file: string = DEFAULT_TEMPLATE_SET_PATH, overrides: Record<string, unknown> = {}, user: ValueOverrides = {}): Promise<TemplateSetSource> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new TemplateSetError(file, `cannot read template set: ${(error as Error).message}`);
  }
  return parseTemplateSet(text, file, overrides, user);
}

export function parseTemplateSet(text: string, file: string, overrides: Record<string, unknown> = {}, user: ValueOverrides = {}): TemplateSetSource {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const line = first?.linePos?.[0]?.line;
    throw new TemplateSetError(file, `invalid YAML${line === undefined ? '' : ` at line ${line}`}: ${first?.message ?? 'parse error'}`);
  }
  const raw: unknown = doc.toJS();
  if (!isRecord(raw)) throw new TemplateSetError(file, 'a template set must be a YAML mapping');
  const known = new Set(['watchedResources', 'templateSnippets', 'haproxyConfig', 'maps', 'files', 'sslCertificates', 'values', 'httpResources']);
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) throw new TemplateSetError(file, `unknown top-level key ${JSON.stringify(key)}; expected one of ${[...known].join(', ')}`);
  }
  if (typeof raw.haproxyConfig !== 'string' || raw.haproxyConfig.trim() === '') {
    throw new TemplateSetError(file, 'haproxyConfig must be a non-empty template string');
  }
  const stores = parseWatchedResources(raw.watchedResources, file);
  const values = applyValueOverrides({ ...(isRecord(raw.values) ? raw.values : {}), ...overrides }, user, file);
  const set = {
    stores,
    snippets: stringRecord(raw.templateSnippets, 'templateSnippets', file),
    haproxyConfig: raw.haproxyConfig,
    maps: stringRecord(raw.maps, 'maps', file),
    files: stringRecord(raw.files, 'files', file),
    sslCertificates: stringRecord(raw.sslCertificates, 'sslCertificates', file),
    values,
    httpResources: parseHttpResources(raw.httpResources, file),
  };
  const hash = createHash('sha256').update(JSON.stringify(set)).digest('hex').slice(0, 16);
  return { hash, ...set };
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
    for (const key of ['resource', 'labelSelector', 'fieldSelector'] as const) {
      if (def[key] !== undefined && (typeof def[key] !== 'string' || def[key] === '')) {
        throw new TemplateSetError(file, `${where}.${key} must be a non-empty string`);
      }
    }
    if (def.namespaced !== undefined && typeof def.namespaced !== 'boolean') throw new TemplateSetError(file, `${where}.namespaced must be true or false`);
    const known = new Set(['apiVersion', 'kind', 'indexBy', 'debounceMs', 'resource', 'namespaced', 'labelSelector', 'fieldSelector']);
    for (const key of Object.keys(def)) {
      if (!known.has(key)) throw new TemplateSetError(file, `${where}: unknown key ${JSON.stringify(key)}; expected one of ${[...known].join(', ')}`);
    }
    return {
      name,
      apiVersion: def.apiVersion,
      kind: def.kind,
      indexBy: indexBy as string[],
      ...(typeof def.debounceMs === 'number' ? { debounceMs: def.debounceMs } : {}),
      ...(typeof def.resource === 'string' ? { resource: def.resource } : {}),
      ...(typeof def.namespaced === 'boolean' ? { namespaced: def.namespaced } : {}),
      ...(typeof def.labelSelector === 'string' ? { labelSelector: def.labelSelector } : {}),
      ...(typeof def.fieldSelector === 'string' ? { fieldSelector: def.fieldSelector } : {}),
    };
  });
}

/** `httpResources`: a list of `{name, url, refreshInterval, timeout}`; durations as `30s`, `500ms`, `5m` or milliseconds. */
function parseHttpResources(raw: unknown, file: string): HttpResourceDefinition[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new TemplateSetError(file, 'httpResources must be a list of {name, url, refreshInterval, timeout}');
  const names = new Set<string>();
  return raw.map((entry: unknown, i) => {
    const where = `httpResources[${i}]`;
    if (!isRecord(entry)) throw new TemplateSetError(file, `${where} must be a mapping`);
    const { name, url } = entry;
    if (typeof name !== 'string' || !/^[a-z0-9]([-a-z0-9_.]{0,62})$/i.test(name)) throw new TemplateSetError(file, `${where}.name must be a short name of letters, digits, '-', '_' or '.'`);
    if (names.has(name)) throw new TemplateSetError(file, `${where}.name ${JSON.stringify(name)} is used twice`);
    names.add(name);
    let parsed: URL;
    try {
      parsed = new URL(String(url));
    } catch {
      throw new TemplateSetError(file, `${where}.url ${JSON.stringify(url)} is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TemplateSetError(file, `${where}.url must be http or https`);
    for (const key of Object.keys(entry)) {
      if (!['name', 'url', 'refreshInterval', 'timeout'].includes(key)) throw new TemplateSetError(file, `${where}: unknown key ${JSON.stringify(key)}`);
    }
    return {
      name,
      url: parsed.href,
      refreshIntervalMs: durationMs(entry.refreshInterval ?? '60s', `${where}.refreshInterval`, file),
      timeoutMs: durationMs(entry.timeout ?? '10s', `${where}.timeout`, file),
    };
  });
}

/** `500ms`, `30s`, `5m`, `1h`, or a number of milliseconds; positive. */
function durationMs(raw: unknown, where: string, file: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const match = typeof raw === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(raw) : null;
  const ms = typeof raw === 'number' ? raw : match === null ? Number.NaN : Number(match[1]) * (units[match[2] as string] as number);
  if (!Number.isFinite(ms) || ms <= 0) throw new TemplateSetError(file, `${where} must be a positive duration such as 30s or 500ms, got ${JSON.stringify(raw)}`);
  return ms;
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

// `--set key=value` and `--set-new key=value`: typed overrides of a template set's values. A
// `--set` key must already be a value of the set (a misspelling such as `httpport` is an error that
// lists the known keys, never a silently ignored value); `--set-new` may add a key. Dotted keys
// reach into nested values (`timeouts.client=50s`).
import { TemplateSetError } from '../core/errors.js';

export interface ValueOverrides {
  /** `key=value` pairs whose keys must exist in the set's values. */
  readonly set?: readonly string[];
  /** `key=value` pairs that may add keys. */
  readonly setNew?: readonly string[];
}

/** Keys that would reach an object's prototype. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

interface Pair {
  readonly path: readonly string[];
  readonly value: unknown;
}

/** One `key=value` pair; numbers and booleans are typed. Throws a TypeError naming the pair. */
function parsePair(pair: string, flag: string): Pair {
  const eq = pair.indexOf('=');
  if (eq <= 0) throw new TypeError(`${flag} expects key=value, got ${JSON.stringify(pair)}`);
  const path = pair.slice(0, eq).split('.');
  if (path.some((part) => part === '' || FORBIDDEN_KEYS.has(part))) {
    throw new TypeError(`${flag} key ${JSON.stringify(pair.slice(0, eq))} is not allowed`);
  }
  const text = pair.slice(eq + 1);
  // Only text that round-trips is typed as a number: `080` and `1.10` stay strings.
  const value: unknown = text !== '' && String(Number(text)) === text ? Number(text) : text === 'true' ? true : text === 'false' ? false : text;
  return { path, value };
}

/**
 * Parses `--set key=value` pairs into a nested object, without checking keys. Dotted keys nest
 * (`a.b=1`); numbers and booleans are typed.
 */
export function parseSetOverrides(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) setPath(out, parsePair(pair, '--set'));
  return out;
}

/**
 * `values` with the user's overrides applied (a copy; `values` is not modified). A `--set` key
 * that is not in `values` is a TemplateSetError naming `file` and listing the known keys.
 */
export function applyValueOverrides(values: Readonly<Record<string, unknown>>, overrides: ValueOverrides, file: string): Record<string, unknown> {
  const out = structuredClone(values) as Record<string, unknown>;
  for (const pair of overrides.set ?? []) {
    const parsed = parsePair(pair, '--set');
    const missing = missingKey(out, parsed.path);
    if (missing !== undefined) {
      const key = parsed.path.slice(0, missing.depth + 1).join('.');
      const known = missing.known.length === 0 ? '(none)' : missing.known.join(', ');
      throw new TemplateSetError(file, `--set ${key}: no such value; known values${missing.depth === 0 ? '' : ` of ${parsed.path.slice(0, missing.depth).join('.')}`}: ${known} (--set-new adds a value)`);
    }
    setPath(out, parsed);
  }
  for (const pair of overrides.setNew ?? []) setPath(out, parsePair(pair, '--set-new'));
  return out;
}

/** Where `path` leaves the existing values: the depth of the first missing key and the keys known there. */
function missingKey(values: Record<string, unknown>, path: readonly string[]): { depth: number; known: string[] } | undefined {
  let node: unknown = values;
  for (let depth = 0; depth < path.length; depth++) {
    const record = isRecord(node) ? node : undefined;
    if (record === undefined || !Object.prototype.hasOwnProperty.call(record, path[depth] as string)) {
      return { depth, known: record === undefined ? [] : Object.keys(record).sort() };
    }
    node = record[path[depth] as string];
  }
  return undefined;
}

function setPath(target: Record<string, unknown>, { path, value }: Pair): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    node[part] = isRecord(next) ? next : {};
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

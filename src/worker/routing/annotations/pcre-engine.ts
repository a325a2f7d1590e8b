// HAProxy's own verdict on regular expressions: each new distinct pattern is compiled by the
// HAProxy binary itself (`haproxy -c` on a tiny config of one ACL per pattern), so a pattern that
// JavaScript accepts and PCRE2 refuses is caught where it enters, and rejects only its object.
// New patterns are checked in one run per call (a multi-line annotation is one call); verdicts are
// cached, bounded, per thread. The check runs synchronously: annotation checks run in the render
// worker threads (and in the inline pipeline), and a run takes a few milliseconds. When HAProxy
// cannot be run (not installed), or a run says nothing about a pattern, the verdict is left to the
// JavaScript-side checks of pcre.ts and to the render gate.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Checks patterns; returns, for each pattern it has a verdict on, the problem (null: compiles). */
export type PcreEngine = (patterns: readonly string[]) => ReadonlyMap<string, string | null>;

/** Distinct patterns whose verdicts are kept; the oldest is dropped past this. */
export const PCRE_CACHE_ENTRIES = 4096;
/** Patterns per `haproxy -c` run. */
const BATCH = 256;
const RUN_TIMEOUT_MS = 10_000;

/**
 * An engine that runs `binary -c` on a config with one `acl` line per pattern, and reads which
 * lines HAProxy refused. Null for every pattern when the binary cannot be run.
 */
export function haproxyPcreEngine(binary: string = process.env.HAPROXY_BIN ?? 'haproxy'): PcreEngine {
  let unavailable = false;
  return (patterns) => {
    const verdicts = new Map<string, string | null>();
    if (unavailable || patterns.length === 0) return verdicts;
    const header = ['defaults', '  mode http', 'frontend check', '  bind 127.0.0.1:1'];
    const config = [...header, ...patterns.map((p, i) => `  acl p${i} path -m reg -- ${p}`), ''].join('\n');
    // A file, not stdin: HAProxy cannot open /dev/stdin when it is a socket, as Node's pipes are.
    const dir = mkdtempSync(join(tmpdir(), 'haptic-pcre-'));
    const file = join(dir, 'check.cfg');
    writeFileSync(file, config);
    const run = spawnSync(binary, ['-c', '-f', file], { encoding: 'utf8', timeout: RUN_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
    rmSync(dir, { recursive: true, force: true });
    if (run.error !== undefined) {
      if ((run.error as NodeJS.ErrnoException).code === 'ENOENT') unavailable = true;
      return verdicts;
    }
    const refused = new Map<number, string>();
    for (const line of `${run.stdout}\n${run.stderr}`.split('\n')) {
      const match = /\[ALERT\].*parsing \[[^\]]*:(\d+)\] : (.*)$/.exec(line);
      if (match === null) continue;
      const index = Number(match[1]) - header.length - 1;
      if (index < 0 || index >= patterns.length) continue;
      const detail = /is invalid \(error=(.*?)(, erroffset=\d+)?\)\.?$/.exec(match[2] as string);
      refused.set(index, detail === null ? (match[2] as string) : (detail[1] as string));
    }
    // A failed run that names no pattern line says nothing about the patterns.
    if (run.status !== 0 && refused.size === 0) return verdicts;
    patterns.forEach((pattern, i) => verdicts.set(pattern, refused.get(i) ?? null));
    return verdicts;
  };
}

let engine: PcreEngine | null = process.env.HAPTIC_PCRE_CHECK === 'off' ? null : haproxyPcreEngine();
const cache = new Map<string, string | null>();

/** Replaces the engine (null: no engine check, the JavaScript checks alone) and clears the cache. */
export function setPcreEngine(next: PcreEngine | null): void {
  engine = next;
  cache.clear();
}

/**
 * HAProxy's problem with each of `patterns` (null: it compiles, or no engine could tell). Only the
 * patterns without a cached verdict are sent to the engine, in one run per batch.
 */
export function pcreProblems(patterns: readonly string[]): ReadonlyMap<string, string | null> {
  const fresh = [...new Set(patterns)].filter((p) => !cache.has(p));
  if (engine !== null) {
    for (let at = 0; at < fresh.length; at += BATCH) {
      for (const [pattern, verdict] of engine(fresh.slice(at, at + BATCH))) remember(pattern, verdict);
    }
  }
  const result = new Map<string, string | null>();
  for (const pattern of patterns) {
    const verdict = cache.get(pattern);
    if (verdict !== undefined) {
      // Refresh: the most recently used stay.
      cache.delete(pattern);
      cache.set(pattern, verdict);
    }
    result.set(pattern, verdict ?? null);
  }
  return result;
}

function remember(pattern: string, verdict: string | null): void {
  cache.delete(pattern);
  cache.set(pattern, verdict);
  while (cache.size > PCRE_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
}

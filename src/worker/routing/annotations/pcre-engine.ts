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

/** What can be one word of the check config's ACL line: printable ASCII without quotes or '#', at most 1 KiB. */
const CHECKABLE = /^[!$-&(-~]{1,1024}$/;

/**
 * An engine that runs `binary -c` on a config with one `acl` line per pattern, and reads which
 * lines HAProxy refused. A pattern counts as compiling only after a run that HAProxy passed, so
 * an error that stops HAProxy's parsing early cannot pass the patterns after it: the patterns not
 * refused by a failed run are run again, without the refused ones. Nothing is said about a
 * pattern that is not one plain word (the JavaScript checks refuse those), nor about any when
 * the binary cannot be run or a run fails without naming a pattern.
 */
export function haproxyPcreEngine(binary: string = process.env.HAPROXY_BIN ?? 'haproxy'): PcreEngine {
  let unavailable = false;
  return (patterns) => {
    const verdicts = new Map<string, string | null>();
    let pending = [...new Set(patterns)].filter((p) => CHECKABLE.test(p));
    while (!unavailable && pending.length > 0) {
      const run = checkRun(binary, pending);
      if (run === 'unavailable') unavailable = true;
      if (run === 'unavailable' || run === 'inconclusive') break;
      for (const [pattern, reason] of run.refused) verdicts.set(pattern, reason);
      if (run.passed) {
        for (const pattern of pending) if (!run.refused.has(pattern)) verdicts.set(pattern, null);
        break;
      }
      pending = pending.filter((p) => !run.refused.has(p));
    }
    return verdicts;
  };
}

type CheckRun = 'unavailable' | 'inconclusive' | { readonly passed: boolean; readonly refused: ReadonlyMap<string, string> };

/** One `haproxy -c` run over `patterns`: whether HAProxy passed the config, and the patterns it refused, with its reasons. */
function checkRun(binary: string, patterns: readonly string[]): CheckRun {
  const header = ['defaults', '  mode http', 'frontend check', '  bind 127.0.0.1:1'];
  const config = [...header, ...patterns.map((p, i) => `  acl p${i} path -m reg -- ${p}`), ''].join('\n');
  // A file, not stdin: HAProxy cannot open /dev/stdin when it is a socket, as Node's pipes are.
  const dir = mkdtempSync(join(tmpdir(), 'haptic-pcre-'));
  const file = join(dir, 'check.cfg');
  writeFileSync(file, config);
  const run = spawnSync(binary, ['-c', '-f', file], { encoding: 'utf8', timeout: RUN_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
  rmSync(dir, { recursive: true, force: true });
  if (run.error !== undefined) return (run.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'unavailable' : 'inconclusive';
  const refused = new Map<string, string>();
  for (const line of `${run.stdout}\n${run.stderr}`.split('\n')) {
    const match = /\[ALERT\].*parsing \[[^\]]*:(\d+)\] : (.*)$/.exec(line);
    const pattern = match === null ? undefined : patterns[Number(match[1]) - header.length - 1];
    if (match === null || pattern === undefined) continue;
    const detail = /is invalid \(error=(.*?)(, erroffset=\d+)?\)\.?$/.exec(match[2] as string);
    refused.set(pattern, detail === null ? (match[2] as string) : (detail[1] as string));
  }
  if (run.status === 0) return { passed: true, refused };
  return refused.size === 0 ? 'inconclusive' : { passed: false, refused };
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

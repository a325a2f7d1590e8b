// Backend tuning: `load-balance` (HAProxy's algorithms with their options; `hash`, which takes a
// sample expression, is not offered), `cookie-persistence` (an inserted cookie naming the
// server), `timeout-server` / `-connect` / `-tunnel` / `-queue`, `pod-maxconn` (per server),
// `server-ssl` (TLS to the pods, certificate not verified) and `server-proto: h2`.
import type { LoadBalance } from '../model.js';
import { bad, isHeaderName, ok, parseInteger, parseTime, type Parsed } from './values.js';

export const DEFAULT_LOAD_BALANCE: LoadBalance = Object.freeze({ algorithm: 'roundrobin', options: Object.freeze([]) });
const MAX_TIMEOUT_MS = 86_400_000;
const MAX_POD_MAXCONN = 1_000_000;
const PARAMETER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const COOKIE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const PLAIN_ALGORITHMS = new Set(['roundrobin', 'static-rr', 'leastconn', 'first', 'source']);

export function parseLoadBalance(raw: string): Parsed<LoadBalance> {
  const words = raw.trim().split(/[ \t]+/);
  const head = /^([a-z_-]+)(?:\(([^()]*)\))?$/.exec(words[0] ?? '');
  if (head === null) return bad('must be a balance algorithm: roundrobin, static-rr, leastconn, first, source, uri, url_param, hdr(name), random or rdp-cookie');
  const algorithm = head[1] as string;
  const argument = head[2];
  const rest = words.slice(1);
  const result = (options: readonly string[], arg?: string): Parsed<LoadBalance> =>
    ok(Object.freeze(arg === undefined ? { algorithm, options: Object.freeze([...options]) } : { algorithm, argument: arg, options: Object.freeze([...options]) }));
  if (PLAIN_ALGORITHMS.has(algorithm)) {
    if (argument !== undefined || rest.length > 0) return bad(`${algorithm} takes no arguments`);
    return result([]);
  }
  switch (algorithm) {
    case 'uri': {
      if (argument !== undefined) return bad('uri takes its options after a space: uri [path-only] [whole] [len N] [depth N]');
      const problem = options(rest, { 'path-only': false, whole: false, len: true, depth: true });
      return problem === null ? result(rest) : bad(`uri: ${problem}`);
    }
    case 'url_param': {
      const [name, ...more] = rest;
      if (argument !== undefined || name === undefined || !PARAMETER_NAME.test(name)) return bad('must be url_param <name> [check_post N]');
      const problem = options(more, { check_post: true });
      return problem === null ? result(rest) : bad(`url_param: ${problem}`);
    }
    case 'hdr': {
      if (argument === undefined || !isHeaderName(argument)) return bad('must be hdr(<header name>) [use_domain_only]');
      const problem = options(rest, { use_domain_only: false });
      return problem === null ? result(rest, argument) : bad(`hdr: ${problem}`);
    }
    case 'random': {
      if (rest.length > 0) return bad('random takes no options');
      if (argument === undefined) return result([]);
      const draws = parseInteger(argument, 1, 100);
      return draws.ok ? result([], String(draws.value)) : bad(`random(draws): draws ${draws.reason}`);
    }
    case 'rdp-cookie': {
      if (rest.length > 0) return bad('rdp-cookie takes no options');
      if (argument !== undefined && !PARAMETER_NAME.test(argument)) return bad('must be rdp-cookie or rdp-cookie(<name>)');
      return result([], argument);
    }
    case 'hash':
      return bad('hash takes a sample expression and is not supported; use source, uri, url_param or hdr');
    default:
      return bad(`${JSON.stringify(algorithm)} is not a balance algorithm of HAProxy`);
  }
}

/** Why `words` are not options of `allowed` (name -> takes a number), or null. */
function options(words: readonly string[], allowed: Readonly<Record<string, boolean>>): string | null {
  const seen = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (!Object.hasOwn(allowed, word)) return `unknown option ${JSON.stringify(word)} (allowed: ${Object.keys(allowed).join(', ')})`;
    if (seen.has(word)) return `option ${word} is given twice`;
    seen.add(word);
    if (allowed[word] === true) {
      const value = parseInteger(words[++i] ?? '', 1, 1_048_576);
      if (!value.ok) return `option ${word} needs a number: ${value.reason}`;
    }
  }
  return null;
}

export function parseCookieName(raw: string): Parsed<string> {
  return COOKIE_NAME.test(raw) ? ok(raw) : bad("must be a cookie name of letters, digits, '-' and '_' (at most 64)");
}

/** A backend timeout, in milliseconds (1ms to 24h). */
export function parseTimeout(raw: string): Parsed<number> {
  return parseTime(raw, 1, MAX_TIMEOUT_MS);
}

export function parsePodMaxconn(raw: string): Parsed<number> {
  return parseInteger(raw, 1, MAX_POD_MAXCONN);
}

export function parseServerProto(raw: string): Parsed<'h2'> {
  return raw === 'h2' ? ok('h2') : bad('must be h2 (the only protocol supported)');
}

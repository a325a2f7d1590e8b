// The argument checks of proxy keywords, as one table: keyword -> check. A check validates the
// words after the keyword and records the references they carry (backends, files, sections,
// ACLs). The table is resolved once at load for every keyword of the proxy matrix, so a line
// costs one lookup, whatever its keyword, and allocates nothing beyond what its check records.
import {
  BALANCE_ALGORITHMS,
  CONDITION_FAMILY_KEYWORDS,
  CONDITION_KEYWORDS,
  HTTP_AFTER_RESPONSE_ACTIONS,
  HTTP_REQUEST_ACTIONS,
  HTTP_RESPONSE_ACTIONS,
  PROXY_KEYWORDS,
  PROXY_MODES,
  TCP_CONNECTION_ACTIONS,
  TCP_CONTENT_ACTIONS,
  TCP_RESPONSE_ACTIONS,
  TCP_SESSION_ACTIONS,
} from '../keywords.js';
import { isDynamic, isIntegerArg, isTimeArg } from '../tokenizer.js';
import type { Section } from './ops.js';
import type { ParseContext } from './parse-context.js';
import { errorfile, scanReferences } from './references.js';
import { backendTarget, ruleAction } from './rules.js';
import { bindLine, serverLine, serverParams, serverTemplate } from './server-lines.js';

/**
 * Checks the words of one proxy line whose keyword passed the matrix. `key` is the keyword as
 * the matrix names it (`timeout server` for a family); `w` still holds every word of the line.
 */
type ArgumentCheck = (p: ParseContext, w: readonly string[], lineNo: number, key: string, section: Section) => void;

/** Runs the argument check of `key`, a keyword of the proxy matrix allowed in `section`. */
export function checkProxyArguments(p: ParseContext, section: Section, key: string, w: readonly string[], lineNo: number): void {
  const check = PROXY_ARGUMENTS.get(key) ?? defaultCheck(key);
  check(p, w, lineNo, key, section);
}

function acl(p: ParseContext, w: readonly string[], lineNo: number): void {
  const name = w[1];
  if (name === undefined || w.length < 3) {
    p.error(lineNo, `'acl' expects a name and a criterion`);
    return;
  }
  p.acls.add(name);
  scanReferences(p, w, 2, lineNo, false);
}

function mode(p: ParseContext, w: readonly string[], lineNo: number): void {
  if (!PROXY_MODES.has(w[1] ?? '') && !isDynamic(w[1] ?? '')) p.error(lineNo, `'mode' expects 'http' or 'tcp' (got '${w[1] ?? ''}')`);
}

function balance(p: ParseContext, w: readonly string[], lineNo: number): void {
  const algo = w[1] ?? '';
  const paren = algo.indexOf('(');
  if (!BALANCE_ALGORITHMS.has(paren < 0 ? algo : algo.slice(0, paren)) && !isDynamic(algo)) {
    p.error(lineNo, `unknown load balancing algorithm '${algo}'`);
  }
}

function errorfiles(p: ParseContext, w: readonly string[], lineNo: number): void {
  if (w[1] === undefined) p.error(lineNo, `'errorfiles' expects the name of an http-errors section`);
  else p.sectionRef('http-errors', w[1], lineNo, 'errorfiles');
}

function filter(p: ParseContext, w: readonly string[], lineNo: number): void {
  if (w[1] === 'cache') {
    if (w[2] !== undefined) p.sectionRef('cache', w[2], lineNo, 'filter cache');
  }
}

function integerArgument(p: ParseContext, w: readonly string[], lineNo: number, key: string): void {
  if (!isIntegerArg(w[1])) p.error(lineNo, `'${key}' expects an integer argument (got '${w[1] ?? ''}')`);
}

/** `timeout <what> <time>`, `tcp-request inspect-delay <time>`: the time is the third word. */
function timeArgument(p: ParseContext, w: readonly string[], lineNo: number, key: string): void {
  if (!isTimeArg(w[2])) p.error(lineNo, `'${key}' expects a time argument (got '${w[2] ?? ''}')`);
}

/** A ruleset whose action is word `index` and must be one of `allowed`. */
function ruleset(index: number, allowed: ReadonlySet<string>): ArgumentCheck {
  return (p, w, lineNo, key) => ruleAction(p, w, index, allowed, lineNo, key);
}

const backendTargetCheck: ArgumentCheck = (p, w, lineNo, key, section) => backendTarget(p, section, key, w, lineNo);

/** Keywords with checks of their own; the rest of the matrix gets defaultCheck(). */
const SPECIFIC_CHECKS: readonly (readonly [string, ArgumentCheck])[] = [
  ['acl', acl],
  ['use_backend', backendTargetCheck],
  ['default_backend', backendTargetCheck],
  ['server', (p, w, lineNo) => serverLine(p, w, lineNo, false)],
  ['default-server', (p, w, lineNo) => serverParams(p, w, 1, lineNo, 'default-server')],
  ['server-template', serverTemplate],
  ['bind', (p, w, lineNo, _key, section) => bindLine(p, section, w, lineNo)],
  ['mode', mode],
  ['balance', balance],
  ['maxconn', integerArgument],
  ['retries', integerArgument],
  ['fullconn', integerArgument],
  ['backlog', integerArgument],
  ['hash-balance-factor', integerArgument],
  ['errorfile', errorfile],
  ['errorfiles', errorfiles],
  ['http-request', ruleset(1, HTTP_REQUEST_ACTIONS)],
  ['http-response', ruleset(1, HTTP_RESPONSE_ACTIONS)],
  ['http-after-response', ruleset(1, HTTP_AFTER_RESPONSE_ACTIONS)],
  ['tcp-request connection', ruleset(2, TCP_CONNECTION_ACTIONS)],
  ['tcp-request session', ruleset(2, TCP_SESSION_ACTIONS)],
  ['tcp-request content', ruleset(2, TCP_CONTENT_ACTIONS)],
  ['tcp-response content', ruleset(2, TCP_RESPONSE_ACTIONS)],
  ['tcp-request inspect-delay', timeArgument],
  ['tcp-response inspect-delay', timeArgument],
  ['filter', filter],
];

const referencesOnly: ArgumentCheck = (p, w, lineNo) => scanReferences(p, w, 1, lineNo, false);
const referencesAndCondition: ArgumentCheck = (p, w, lineNo) => scanReferences(p, w, 1, lineNo, true);

/**
 * The check of a keyword without one of its own: a time for the timeout family, otherwise the
 * references its words carry. Free-text keywords (description, log-format, ...) may contain the
 * words 'if' and 'unless', so only the keywords that end with a condition have it checked.
 */
function defaultCheck(key: string): ArgumentCheck {
  if (key.startsWith('timeout ')) return timeArgument;
  const takesCondition = CONDITION_KEYWORDS.has(key) || CONDITION_FAMILY_KEYWORDS.has(key.replace(' ', '-'));
  return takesCondition ? referencesAndCondition : referencesOnly;
}

/** Every keyword of the proxy matrix with its check. */
const PROXY_ARGUMENTS: ReadonlyMap<string, ArgumentCheck> = (() => {
  const specific = new Map(SPECIFIC_CHECKS);
  const table = new Map<string, ArgumentCheck>();
  for (const key of PROXY_KEYWORDS.keys()) table.set(key, specific.get(key) ?? defaultCheck(key));
  return table;
})();

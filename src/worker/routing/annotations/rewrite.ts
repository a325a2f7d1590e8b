// Request rewriting: `path-rewrite` (a replacement path, or `regex replacement`, one rule per
// line, as `http-request replace-path`), `set-host` (the Host header sent to the backend), and
// `request-set-header` / `response-set-header` (`Name value` per line). Values become literal
// text: header values are written quoted with '%' doubled, so no sample fetch or variable of
// HAProxy's can be reached through them, and headers that frame the message are refused.
import { isIP } from 'node:net';
import type { HeaderSetting, PathRewrite } from '../model.js';
import { pcreProblems } from './pcre-engine.js';
import { parseRegex, wordProblem } from './pcre.js';
import { bad, isConditionWord, isHeaderName, logFormatLiteral, ok, quotedTextProblem, valueLines, type Parsed } from './values.js';

const MAX_RULES = 16;
const MAX_HEADERS = 32;
const MAX_REPLACEMENT = 1024;
const MAX_HEADER_VALUE = 1024;
/** Characters of a replacement path besides back-references: RFC 3986 path and query characters. */
const REPLACEMENT = /^[A-Za-z0-9\-._~!$&()*+,;=:@%/?]*$/;
/** Header names the ingress keeps for itself (any case): no tenant rule may set, add or remove one. */
export const RESERVED_PREFIX = 'x-haptic-';
/**
 * An empty header value as HAProxy 2.6 takes it: `set-header Name ""` has one argument too few
 * and fails the whole config, while an empty sample is an empty value.
 */
const EMPTY_VALUE = '%[str()]';
/** Headers that frame the message or the connection: setting them could desynchronize a server. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);

/** The rewrite rules of `path-rewrite`, one per line. */
export function parsePathRewrite(raw: string): Parsed<readonly PathRewrite[]> {
  const lines = valueLines(raw);
  if (lines.length === 0) return bad('is empty');
  if (lines.length > MAX_RULES) return bad(`has ${lines.length} rules, over the limit of ${MAX_RULES}`);
  // One HAProxy run for all the new patterns of the annotation; parseRegex then finds them cached.
  pcreProblems(lines.map((line) => line.split(/[ \t]+/)).filter((words) => words.length === 2).map((words) => words[0] as string));
  const rules: PathRewrite[] = [];
  for (const line of lines) {
    const words = line.split(/[ \t]+/);
    if (words.length > 2) return bad(`rule ${JSON.stringify(line)} has ${words.length} words; write a path, or a regular expression and its replacement`);
    const [first = '', second] = words;
    const regex = parseRegex(second === undefined ? '(.*)' : first);
    if (!regex.ok) return bad(`rule ${JSON.stringify(line)}: the regular expression ${regex.reason}`);
    const replacement = replacementProblem(second ?? first, regex.value.groups);
    if (replacement !== null) return bad(`rule ${JSON.stringify(line)}: the replacement ${replacement}`);
    rules.push(Object.freeze({ match: regex.value.pattern, replace: logFormatLiteral(second ?? first) }));
  }
  return ok(Object.freeze(rules));
}

function replacementProblem(text: string, groups: number): string | null {
  if (text.length > MAX_REPLACEMENT) return `is ${text.length} characters long, over the limit of ${MAX_REPLACEMENT}`;
  const word = wordProblem(text);
  if (word !== null) return word;
  const plain = text.replace(/\\(\d)/g, (_match, digit: string) => (Number(digit) >= 1 && Number(digit) <= groups ? '' : '\u0000'));
  if (plain.includes('\u0000')) return `refers to a group the regular expression does not have (${groups === 0 ? 'it has none' : `\\1 to \\${groups} exist`})`;
  if (!REPLACEMENT.test(plain)) return 'may hold only URL path characters and \\1 to \\9 back-references';
  return null;
}

/** `host` or `host:port`: a DNS name, an IPv4 address or a bracketed IPv6 address; lowercased. */
export function parseHostPort(raw: string): Parsed<string> {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(raw);
  if (match === null) return bad('must be a host name, optionally with :port');
  const host = (match[1] as string).toLowerCase();
  const port = match[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return bad(`has the port ${port}, which is not 1 to 65535`);
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  const validHost = host.startsWith('[') ? isIP(bare) === 6 : isIP(bare) === 4 || /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/.test(bare);
  if (!validHost) return bad(`has the host ${JSON.stringify(host)}, which is not a DNS name or IP address`);
  if (isConditionWord(host)) return bad(`has the host ${JSON.stringify(host)}, a word that opens a condition on a rule line`);
  return ok(port === undefined ? host : `${host}:${port}`);
}

/** `Name value` per line (the value may be wrapped in double quotes); a name set twice keeps its last value. */
export function parseHeaderSettings(raw: string): Parsed<readonly HeaderSetting[]> {
  const lines = valueLines(raw);
  if (lines.length === 0) return bad('is empty');
  if (lines.length > MAX_HEADERS) return bad(`sets ${lines.length} headers, over the limit of ${MAX_HEADERS}`);
  const settings = new Map<string, HeaderSetting>();
  for (const line of lines) {
    const space = line.search(/[ \t]/);
    const name = space < 0 ? line : line.slice(0, space);
    let value = space < 0 ? '' : line.slice(space).trim();
    if (!isHeaderName(name)) return bad(`line ${JSON.stringify(line)}: ${JSON.stringify(name)} is not a header name (letters, digits, '-', '_', '.')`);
    if (FRAMING_HEADERS.has(name.toLowerCase())) return bad(`line ${JSON.stringify(line)}: the ${name} header frames the message and may not be set`);
    if (name.toLowerCase().startsWith(RESERVED_PREFIX)) return bad(`line ${JSON.stringify(line)}: ${name} is reserved (${RESERVED_PREFIX}* headers belong to the ingress, e.g. its loop guard) and may not be set`);
    if (space < 0) return bad(`line ${JSON.stringify(line)} has no value; write "Name value" (or Name "" for an empty value)`);
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    const problem = quotedTextProblem(value, MAX_HEADER_VALUE);
    if (problem !== null) return bad(`line ${JSON.stringify(line)}: the value ${problem}`);
    settings.delete(name.toLowerCase());
    settings.set(name.toLowerCase(), Object.freeze({ name, value: value === '' ? EMPTY_VALUE : logFormatLiteral(value) }));
  }
  return ok(Object.freeze([...settings.values()]));
}

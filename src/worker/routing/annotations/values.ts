// The value types annotations share (booleans, integers, HAProxy times, status codes, names) and
// the two ways a value may enter a config line: as one bare word, or as literal text inside
// double quotes. Every parser returns a typed value or the reason it refused the text; nothing
// here throws. The character rules follow HAProxy's line parser: outside quotes a space, '#',
// a quote or a backslash escape changes the line; inside double quotes '$' expands a variable.

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

export function bad(reason: string): { readonly ok: false; readonly reason: string } {
  return { ok: false, reason };
}

/** Any control character, newline included (multi-line values are split before their lines are checked). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
const NON_ASCII = /[^\u0020-\u007e]/;

/** Go's strconv.ParseBool spellings, as the HAProxy Ingress Controller reads booleans. */
const TRUE = new Set(['true', 'True', 'TRUE', 't', 'T', '1']);
const FALSE = new Set(['false', 'False', 'FALSE', 'f', 'F', '0']);

export function parseBool(raw: string): Parsed<boolean> {
  if (TRUE.has(raw)) return ok(true);
  if (FALSE.has(raw)) return ok(false);
  return bad('must be true or false');
}

/** A decimal integer in [min, max]. */
export function parseInteger(raw: string, min: number, max: number): Parsed<number> {
  if (!/^\d{1,10}$/.test(raw)) return bad(`must be a whole number from ${min} to ${max}`);
  const value = Number(raw);
  if (value < min || value > max) return bad(`must be from ${min} to ${max}`);
  return ok(value);
}

const TIME_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, '': 1 };

/** Milliseconds in words, for messages: 86400000 is "24h". */
export function formatMs(ms: number): string {
  if (ms === 0) return '0s';
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * An HAProxy time (`<number>[ms|s|m|h|d]`, milliseconds without a unit) in [minMs, maxMs], as
 * milliseconds. Microseconds are refused: every time here is at least a millisecond.
 */
export function parseTime(raw: string, minMs: number, maxMs: number): Parsed<number> {
  const match = /^(\d{1,10})(ms|s|m|h|d)?$/.exec(raw);
  if (match === null) return bad('must be a time: a number with an optional unit ms, s, m, h or d (milliseconds without one)');
  const ms = Number(match[1]) * (TIME_UNITS[match[2] ?? ''] as number);
  if (ms < minMs || ms > maxMs) return bad(`must be from ${formatMs(minMs)} to ${formatMs(maxMs)}`);
  return ok(ms);
}

/** Redirect codes HAProxy's `redirect ... code` accepts. */
export const REDIRECT_CODES: readonly number[] = [301, 302, 303, 307, 308];

export function parseRedirectCode(raw: string): Parsed<number> {
  const code = Number(raw);
  return /^\d{3}$/.test(raw) && REDIRECT_CODES.includes(code) ? ok(code) : bad(`must be one of ${REDIRECT_CODES.join(', ')}`);
}

/** Error codes `http-request deny deny_status` accepts without an errorfile of our own (HAProxy 2.6). */
export const DENY_STATUS_CODES: readonly number[] = [400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504];

export function parseDenyStatus(raw: string): Parsed<number> {
  const code = Number(raw);
  return /^\d{3}$/.test(raw) && DENY_STATUS_CODES.includes(code) ? ok(code) : bad(`must be one of ${DENY_STATUS_CODES.join(', ')}`);
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isDnsLabel(value: string): boolean {
  return DNS_LABEL.test(value);
}

export function isDnsSubdomain(value: string): boolean {
  return DNS_SUBDOMAIN.test(value);
}

/** An HTTP header (or cookie) name: an RFC 7230 token without the characters HAProxy's line parser treats specially, nor a condition word. */
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * Words that open a rule's condition. HAProxy reads them by position, but the config check finds
 * a condition at the first such word of a rule line, quoted or not, and would fail the whole
 * render over one header named `if`; so no value may be one of them on its own.
 */
const CONDITION_WORDS = new Set(['if', 'unless']);

export function isConditionWord(value: string): boolean {
  return CONDITION_WORDS.has(value);
}

export function isHeaderName(value: string): boolean {
  return HEADER_NAME.test(value) && !isConditionWord(value);
}

/**
 * Why `text` cannot be literal text between double quotes on a config line, or null. Inside
 * double quotes HAProxy expands `$NAME`, ends the word at `"` and reads `\` as an escape; only
 * printable ASCII is allowed, so no character can end the line or hide in it.
 */
export function quotedTextProblem(text: string, max: number): string | null {
  if (text.length > max) return `is ${text.length} characters long, over the limit of ${max}`;
  if (CONTROL.test(text)) return 'contains a control character';
  if (NON_ASCII.test(text)) return 'contains a character outside printable ASCII';
  const refused = /["\\$]/.exec(text);
  if (refused !== null) return `contains ${JSON.stringify(refused[0])}, which is not allowed (it would change the config line)`;
  if (isConditionWord(text)) return `is ${JSON.stringify(text)}, a word that opens a condition on a rule line`;
  return null;
}

/** Literal text as an HAProxy log-format string (header values are formats): every '%' doubled. */
export function logFormatLiteral(text: string): string {
  return text.replaceAll('%', '%%');
}

/** The non-empty lines of a multi-line value, trimmed (`\r\n` and `\n` both end a line). */
export function valueLines(raw: string): string[] {
  return raw
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

// Text from cluster objects on its way into a log line, a warning or a rejection message. Object
// names and values are quoted JSON-style, and every message is passed through escapeLogText, so
// a name holding a newline or an ANSI escape (`\u001b[31m`) can neither forge a log line nor
// repaint a terminal. Pure string functions, no state.

/**
 * C0 and C1 control characters (ESC and the 8-bit CSI included), DEL, and the Unicode line
 * separators and bidirectional overrides that reorder or split what a terminal shows.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

function escapeChar(ch: string): string {
  return SHORT_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * A message with every unprintable character escaped as JSON would (`\n`, `\u001b`). Backslashes
 * are left alone, so values already quoted with `quote` are not escaped twice.
 */
export function escapeLogText(text: string): string {
  return plainAscii(text, false) ? text : text.replace(UNPRINTABLE, escapeChar);
}

/** Text of unknown origin as a printable name: JSON-style escapes, without the quotes. */
export function printable(value: unknown): string {
  if (typeof value !== 'string') return quote(value);
  if (plainAscii(value, true)) return value;
  return escapeLogText(value.replace(/\\/g, '\\\\'));
}

/**
 * Whether `text` is printable ASCII alone (space to `~`; with `noBackslash`, no backslash
 * either), which the escapes leave as it is: the common case, told without a regular expression.
 */
function plainAscii(text: string, noBackslash: boolean): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 32 || c > 126 || (noBackslash && c === 92)) return false;
  }
  return true;
}

/** A value as a JSON-style literal (`"a\nb"`, `42`, `null`), shortened past `max` characters. */
export function quote(value: unknown, max = 120): string {
  let text: string;
  if (typeof value === 'string') {
    const shown = value.length > max ? `${value.slice(0, max)}…` : value;
    text = JSON.stringify(shown);
    if (value.length > max) text += ` (${value.length} characters)`;
  } else if (value === undefined) {
    text = 'undefined';
  } else if (typeof value === 'object' && value !== null) {
    text = Array.isArray(value) ? `a list of ${value.length}` : 'a mapping';
  } else {
    text = String(value);
  }
  return escapeLogText(text);
}

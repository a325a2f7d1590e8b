// The line tokenizer and the small character and argument predicates every check shares.
// Words follow HAProxy's parse_line(): split on blanks, `#` starts a comment outside quotes,
// "double" and 'single' quotes group words, backslash escapes outside single quotes.
// Environment variables are left unexpanded. A line of words between spaces (nearly every rendered
// line) is split with indexOf once one regex test shows it holds nothing else.

const CHAR_SPACE = 32;
const CHAR_TAB = 9;
export const CHAR_HASH = 35;
export const CHAR_DQUOTE = 34;
export const CHAR_SQUOTE = 39;
export const CHAR_BACKSLASH = 92;

/** Fills `out` with the words of `line`; returns an error message, or null. */
export function tokenizeLine(line: string, out: string[]): string | null {
  if (!NOT_PLAIN.test(line)) return spaceSeparated(line, out);
  out.length = 0;
  const len = line.length;
  // Lines with tabs, CRs or a comment: words still sliced straight from the line. The first
  // quote or backslash sends the whole line to the character-by-character path below.
  let i = 0;
  let plain = true;
  while (i < len && plain) {
    let c = line.charCodeAt(i);
    while (c === CHAR_SPACE || c === CHAR_TAB || c === 13) c = line.charCodeAt(++i);
    if (i >= len || c === CHAR_HASH) return null;
    const start = i;
    while (i < len && c !== CHAR_SPACE && c !== CHAR_TAB && c !== CHAR_HASH && c !== 13) {
      if (c === CHAR_DQUOTE || c === CHAR_SQUOTE || c === CHAR_BACKSLASH) {
        plain = false;
        break;
      }
      c = line.charCodeAt(++i);
    }
    if (!plain) break;
    out.push(line.slice(start, i));
    if (c === CHAR_HASH) return null;
  }
  if (plain) return null;
  out.length = 0;
  i = 0;
  let word = '';
  let inWord = false;
  let quote = 0;
  while (i < len) {
    const c = line.charCodeAt(i);
    if (quote === 0 && (c === CHAR_SPACE || c === CHAR_TAB || c === 13)) {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    if (quote === 0 && c === CHAR_HASH) break;
    inWord = true;
    if (c === CHAR_BACKSLASH && quote !== CHAR_SQUOTE) {
      const n = line[i + 1];
      if (n === ' ' || n === '\\' || n === '#' || n === '"' || n === "'" || n === '$') {
        word += n;
        i += 2;
      } else if (n === 'r' || n === 'n' || n === 't') {
        word += n === 'r' ? '\r' : n === 'n' ? '\n' : '\t';
        i += 2;
      } else if (n === 'x' && isHex(line.charCodeAt(i + 2)) && isHex(line.charCodeAt(i + 3))) {
        word += String.fromCharCode(parseInt(line.slice(i + 2, i + 4), 16));
        i += 4;
      } else {
        word += '\\';
        i++;
      }
      continue;
    }
    if ((c === CHAR_DQUOTE || c === CHAR_SQUOTE) && (quote === 0 || quote === c)) {
      quote = quote === 0 ? c : 0;
      i++;
      continue;
    }
    word += line[i];
    i++;
  }
  if (quote !== 0) return `unmatched ${quote === CHAR_DQUOTE ? 'double' : 'single'} quote`;
  if (inWord) out.push(word);
  return null;
}

/** A character that makes a line more than words between spaces: a quote, backslash, comment, tab or CR. */
const NOT_PLAIN = /["'\\#\t\r]/;

/**
 * The words of a line that holds none of NOT_PLAIN's characters: the runs between spaces. They
 * overwrite the list's entries and the length is set once at the end: emptying the list first
 * (length 0) would drop its storage, and the pushes would allocate it again for every line.
 */
function spaceSeparated(line: string, out: string[]): null {
  const len = line.length;
  let count = 0;
  let i = 0;
  for (;;) {
    while (i < len && line.charCodeAt(i) === CHAR_SPACE) i++;
    if (i >= len) break;
    let end = line.indexOf(' ', i);
    if (end < 0) end = len;
    out[count++] = line.slice(i, end);
    i = end;
  }
  if (out.length !== count) out.length = count;
  return null;
}

export function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

export function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** HAProxy time: an integer with an optional unit (us, ms, s, m, h, d). */
export function isTime(s: string): boolean {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  if (i === 0) return false;
  const unit = s.slice(i);
  return unit === '' || unit === 'us' || unit === 'ms' || unit === 's' || unit === 'm' || unit === 'h' || unit === 'd';
}

/** HAProxy size: an integer with an optional k/m/g suffix. */
function isSize(s: string): boolean {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  if (i === 0) return false;
  const unit = s.slice(i).toLowerCase();
  return unit === '' || unit === 'k' || unit === 'm' || unit === 'g';
}

/** Environment variables (`"${MAXCONN}"`) are expanded by HAProxy at load time: not checkable here. */
export function isDynamic(s: string): boolean {
  return s.indexOf('${') >= 0;
}

export function isIntegerArg(s: string | undefined): boolean {
  return s !== undefined && (isDigits(s) || isDynamic(s));
}

export function isTimeArg(s: string | undefined): boolean {
  return s !== undefined && (isTime(s) || isDynamic(s));
}

export function isSizeArg(s: string | undefined): boolean {
  return s !== undefined && (isSize(s) || isDynamic(s));
}

/** Proxy and section names: HAProxy's invalid_char() rule. */
export function isValidName(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ok =
      (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95 || c === 46 || c === 58;
    if (!ok) return false;
  }
  return true;
}

/** Space, tab, or the CR of a CRLF line end: blanks between words. */
export function isBlank(c: number): boolean {
  return c === CHAR_SPACE || c === CHAR_TAB || c === 13;
}

/** Calls `fn` for each line of `text` with its 1-based number, without splitting the text. */
export function forEachLine(text: string, fn: (line: string, lineNo: number) => void): void {
  let pos = 0;
  let lineNo = 0;
  const len = text.length;
  while (pos < len) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = len;
    lineNo++;
    fn(text.slice(pos, end), lineNo);
    pos = end + 1;
  }
}

// Regular expressions from annotations, checked before they become one bare word of a config
// line that HAProxy compiles with PCRE2. A pattern must compile as a JavaScript RegExp too (the
// two dialects share what is allowed here), hold no character HAProxy's line parser reads
// specially (space, quotes, '#', escapes it rewrites), and have none of the shapes whose
// backtracking one request could make cost seconds of CPU (regex-cost.ts). Where the two
// dialects part (a range to a class escape, a back-reference past the last group, POSIX classes,
// quantifiers over PCRE2's 65535), the pattern is refused here; and last, HAProxy's own PCRE2
// compiles it (pcre-engine.ts), so the validator is never weaker than HAProxy.
import { pcreProblems } from './pcre-engine.js';
import { backtrackingProblem } from './regex-cost.js';
import { bad, ok, type Parsed } from './values.js';

export const MAX_REGEX = 512;
/** PCRE2's largest repeat count in `{n,m}`. */
const MAX_REPEAT = 65535;
const CLASS_ESCAPES = 'dDwWsS';

/** Letters and digits allowed after a backslash: escapes PCRE2 and JavaScript read alike, none of which HAProxy's parser rewrites. */
const SAFE_ESCAPES = /^[dDwWsSbB0-9]$/;
/** Punctuation that may be escaped to stand for itself. */
const ESCAPABLE_PUNCTUATION = '.^*+?()[]{}|/-:,=!<>&@%~';

/** Why `pattern` cannot be used as a PCRE word of the config, or null; `groups` is its capture count. */
export function parseRegex(pattern: string): Parsed<{ readonly pattern: string; readonly groups: number }> {
  if (pattern === '') return bad('is an empty regular expression');
  if (pattern.length > MAX_REGEX) return bad(`is ${pattern.length} characters long, over the limit of ${MAX_REGEX}`);
  const word = wordProblem(pattern);
  if (word !== null) return bad(word);
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    const next = pattern[i + 1] ?? '';
    if (!SAFE_ESCAPES.test(next) && !ESCAPABLE_PUNCTUATION.includes(next)) {
      return bad(`uses the escape \\${next}, which is not allowed (allowed: \\d \\w \\s \\b, their capitals, back-references and escaped punctuation)`);
    }
    i++;
  }
  if (/\(\?<[=!]/.test(pattern)) return bad('uses a lookbehind, which PCRE2 accepts only with a fixed length; it is not allowed');
  if (/(^|[^\\])\[\^?\]/.test(pattern)) return bad('opens a character class with "]", which PCRE2 and JavaScript read differently');
  let compiled: RegExp;
  try {
    compiled = new RegExp(pattern);
  } catch (error) {
    return bad(`is not a valid regular expression (${error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : String(error)})`);
  }
  const backtracking = backtrackingProblem(pattern);
  if (backtracking !== null) return bad(backtracking);
  const groups = (new RegExp(`${compiled.source}|`).exec('') as RegExpExecArray).length - 1;
  const divergence = dialectProblem(pattern, groups);
  if (divergence !== null) return bad(divergence);
  const engine = pcreProblems([pattern]).get(pattern) ?? null;
  if (engine !== null) return bad(`is refused by HAProxy's PCRE2 (${engine})`);
  return ok({ pattern, groups });
}

/**
 * What PCRE2 refuses (or reads otherwise) in a pattern JavaScript compiles, or null: `[\d-z]` and
 * `[a-\w]` (a range to a class escape), `\2` with fewer groups (JavaScript reads an octal
 * escape), `[[:alpha:]]` and `[[.a.]]` (POSIX classes and collating elements), `a{70000}`.
 */
export function dialectProblem(pattern: string, groups: number): string | null {
  let inClass = false;
  /** Whether the last member of the open class was a class escape such as \d. */
  let lastWasClassEscape = false;
  let classStart = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (inClass && CLASS_ESCAPES.includes(next)) {
        if (pattern[i - 1] === '-' && i - 1 > classStart && pattern[i - 2] !== '\\') return `has a range to the class escape \\${next} in a character class, which PCRE2 refuses`;
        lastWasClassEscape = true;
        i++;
        continue;
      }
      if (!inClass && /[1-9]/.test(next)) {
        const reference = Number(/^\d+/.exec(pattern.slice(i + 1))?.[0]);
        if (reference > groups) return `refers to group \\${reference}, but has ${groups === 0 ? 'no groups' : `only ${groups}`}`;
      }
      lastWasClassEscape = false;
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']' && i > classStart) {
        inClass = false;
      } else if (c === '[' && /[:.=]/.test(pattern[i + 1] ?? '')) {
        return 'has "[:", "[." or "[=" in a character class, which PCRE2 reads as a POSIX class; write the characters instead';
      } else if (c === '-' && lastWasClassEscape && pattern[i + 1] !== ']') {
        return 'has a range from a class escape (such as [\\d-z]) in a character class, which PCRE2 refuses';
      }
      lastWasClassEscape = false;
      continue;
    }
    if (c === '[') {
      if (/^\[\^?([:.=])[^\]]*\1\]/.test(pattern.slice(i))) return 'has a character class like [:alpha:] or [.a.], which PCRE2 reads as a POSIX class outside a class; write the characters instead';
      inClass = true;
      classStart = pattern[i + 1] === '^' ? i + 2 : i + 1;
      i = classStart - 1;
      lastWasClassEscape = false;
    } else if (c === '{') {
      const repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (repeat !== null && Math.max(Number(repeat[1]), Number(repeat[3] || 0)) > MAX_REPEAT) {
        return `repeats ${repeat[0]} times, over PCRE2's limit of ${MAX_REPEAT}`;
      }
    }
  }
  return null;
}

/**
 * Why `word` cannot be one bare word of a config line, or null: whitespace and quotes split or
 * open words, '#' starts a comment, control and non-ASCII characters have no place in it, and
 * `if` / `unless` / braces would read as a condition.
 */
export function wordProblem(word: string): string | null {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const refused = /[\s"'#\u0000-\u001f\u007f-\uffff]/.exec(word);
  if (refused !== null) return `contains ${JSON.stringify(refused[0])}, which is not allowed (spaces, quotes, '#', control and non-ASCII characters would change the config line)`;
  if (['if', 'unless', '{', '}', '!', '||'].includes(word)) return `is ${JSON.stringify(word)}, a word HAProxy reads as part of a condition`;
  return null;
}

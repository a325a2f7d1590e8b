// What makes a regular expression cost HAProxy seconds of CPU on one request. HAProxy matches a
// tenant's pattern (path-rewrite against the path, cors-allow-origin against the Origin header)
// with PCRE2, a backtracking engine, on input the client chooses, and sets no limit of its own
// below PCRE2's default. Measured on HAProxy 2.6 (PCRE2 10.42, JIT), one request with a fresh
// path of 2,000 to 6,000 `a`s and a `!` costs 2 to 7 s of one thread against `^/a*a*a*$`, and
// about 0.2 s against `^/(a|aa)+$` or `^/(.*a){12}$`. So, statically and conservatively:
// - no group holding a wide repetition is repeated again (`(a+)+`, `(x*){2,}`, `(.*a){12}`);
// - no alternation is repeated widely (`(a|aa)+`: write a class, `[ab]+`, where one will do);
// - at most MAX_WIDE wide repetitions in all, as three that can match the same text backtrack
//   polynomially (`a*a*a*`).
// A wide repetition is `*`, `+`, `{n,}` or `{n,m}` with m over WIDE_BOUND.

/** Wide repetitions one pattern may hold. */
export const MAX_WIDE = 2;
/** The largest upper bound of `{n,m}` that is not a wide repetition. */
export const WIDE_BOUND = 16;

interface Group {
  /** Whether the group (or one inside it) holds a wide repetition. */
  wide: boolean;
  /** Whether the group has a `|` of its own. */
  alternation: boolean;
}

interface Quantifier {
  /** Characters it takes, a lazy or possessive suffix included. */
  readonly length: number;
  /** Its upper bound (Infinity when unbounded). */
  readonly max: number;
}

/** Why `pattern` may backtrack for seconds on one request, or null. */
export function backtrackingProblem(pattern: string): string | null {
  const stack: Group[] = [];
  let inClass = false;
  let wideCount = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++;
    } else if (c === '(') {
      stack.push({ wide: false, alternation: false });
    } else if (c === '|') {
      const top = stack[stack.length - 1];
      if (top !== undefined) top.alternation = true;
    } else if (c === ')') {
      const group = stack.pop() ?? { wide: false, alternation: false };
      const q = quantifierAt(pattern, i + 1);
      if (q !== null) {
        if (group.wide && q.max > 1) return 'repeats a group that itself repeats without a small bound (like (a+)+ or (.*a){12}), which can backtrack for seconds on one request';
        if (group.alternation && isWide(q)) return 'repeats an alternation without a small bound (like (a|aa)+), which can backtrack for seconds on one request; a character class ([ab]+) matches the same without backtracking';
        if (isWide(q)) wideCount++;
        i += q.length;
      }
      const parent = stack[stack.length - 1];
      if (parent !== undefined && (group.wide || (q !== null && isWide(q)))) parent.wide = true;
    } else {
      const q = quantifierAt(pattern, i);
      if (q !== null) {
        if (isWide(q)) {
          wideCount++;
          const top = stack[stack.length - 1];
          if (top !== undefined) top.wide = true;
        }
        i += q.length - 1;
      }
    }
  }
  if (wideCount > MAX_WIDE) return `has more than ${MAX_WIDE} repetitions without a small bound (*, +, {n,} or {n,m} over ${WIDE_BOUND}); three that can match the same text (like a*a*a*) backtrack for seconds on one long request`;
  return null;
}

function isWide(q: Quantifier): boolean {
  return q.max > WIDE_BOUND;
}

/** The quantifier that starts at `at`, or null: `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, with a lazy `?` or possessive `+` after it. */
function quantifierAt(pattern: string, at: number): Quantifier | null {
  const c = pattern[at];
  let length: number;
  let max: number;
  if (c === '*' || c === '+') {
    length = 1;
    max = Infinity;
  } else if (c === '?') {
    length = 1;
    max = 1;
  } else if (c === '{') {
    const braces = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
    if (braces === null) return null;
    length = braces[0].length;
    max = braces[2] === undefined ? Number(braces[1]) : braces[3] === '' ? Infinity : Number(braces[3]);
  } else {
    return null;
  }
  const suffix = pattern[at + length];
  if (suffix === '?' || suffix === '+') length++;
  return { length, max };
}

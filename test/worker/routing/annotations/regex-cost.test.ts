import { describe, expect, it } from 'vitest';
import { parseRegex } from '../../../../src/worker/routing/annotations/pcre.js';
import { backtrackingProblem } from '../../../../src/worker/routing/annotations/regex-cost.js';
import { reason, value } from '../../../helpers/parsed.js';

describe('the backtracking cost of a regular expression', () => {
  it('refuses the shapes that cost HAProxy a fraction of a second to seconds on one request, naming the shape', () => {
    const cases: [string, string][] = [
      // 2 to 7 s of one HAProxy thread on a 2,000- to 6,000-character path (HAProxy 2.6, PCRE2 10.42 JIT).
      ['^/a*a*a*$', 'more than 2 repetitions without a small bound'],
      ['^/(.*)(.*)(.*)x$', 'more than 2 repetitions'],
      ['^/a{0,1000}a{0,1000}a{0,1000}$', 'more than 2 repetitions'],
      // About 0.2 s each (PCRE2's match limit).
      ['^/(a|aa)+$', 'repeats an alternation'],
      ['^/(a|a)*$', 'repeats an alternation'],
      ['^(?:\\w|\\d){2,}$', 'repeats an alternation'],
      ['^/(.*a){12}$', 'repeats a group that itself repeats'],
      ['^/(a{1,100}){1,100}$', 'repeats a group that itself repeats'],
      ['(a+)+$', 'repeats a group that itself repeats'],
      ['(x*){2,}', 'repeats a group that itself repeats'],
      ['((a)+b)*', 'repeats a group that itself repeats'],
      ['^/(\\w+\\d?)+$', 'repeats a group that itself repeats'],
    ];
    for (const [pattern, expected] of cases) {
      expect(backtrackingProblem(pattern), pattern).toContain(expected);
      expect(reason(parseRegex(pattern)), pattern).toContain(expected);
    }
  });

  it('accepts patterns with at most two wide repetitions, bounded repeats of groups and alternations that are not repeated widely', () => {
    for (const fine of [
      '^/api/(.*)$',
      '([^?]*)(\\?(.*))?',
      '^https://(.+\\.)?example\\.com(:\\d{1,5})?$',
      '^https://(www|shop)\\.example\\.com$',
      '^/(a|b){1,16}$',
      '^/v[0-9]+/(.*)$',
      '[a-z\\d.-]+',
      'a*+b*?',
      '[*+]{3}x\\*\\+\\*',
      '(a{2}){3}',
    ]) {
      expect(backtrackingProblem(fine), fine).toBeNull();
    }
    expect(value(parseRegex('^/api/(.*)$')).groups).toBe(1);
  });
});

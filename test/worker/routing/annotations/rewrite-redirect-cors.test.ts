import { describe, expect, it } from 'vitest';
import { parseCorsHeaders, parseCorsMaxAge, parseCorsMethods, parseCorsOrigin } from '../../../../src/worker/routing/annotations/cors.js';
import { parseRegex, wordProblem } from '../../../../src/worker/routing/annotations/pcre.js';
import { parsePort, parseRedirectTarget } from '../../../../src/worker/routing/annotations/redirect.js';
import { parseHeaderSettings, parseHostPort, parsePathRewrite } from '../../../../src/worker/routing/annotations/rewrite.js';
import { reason, value } from '../../../helpers/parsed.js';


describe('regular expressions', () => {
  it('accepts what PCRE2 and JavaScript read alike, and counts its groups', () => {
    expect(value(parseRegex('/foo/(.*)'))).toEqual({ pattern: '/foo/(.*)', groups: 1 });
    expect(value(parseRegex('([^?]*)(\\?(.*))?')).groups).toBe(3);
    expect(value(parseRegex('^https://(.+\\.)?example\\.com(:\\d{1,5})?$')).groups).toBe(2);
  });

  it('refuses words that change the config line, escapes HAProxy rewrites, and what PCRE2 reads differently', () => {
    const cases: [string, string][] = [
      ['/a b', 'contains " "'],
      ['/a"b', 'contains "\\""'],
      ["/a'b", 'contains "\'"'],
      ['/a#b', 'contains "#"'],
      ['/a\nb', 'contains "\\n"'],
      ['/a\\\\b', 'uses the escape \\\\'],
      ['/a\\$', 'uses the escape \\$'],
      ['/a\\x41', 'uses the escape \\x'],
      ['/a\\u0041', 'uses the escape \\u'],
      ['/(a', 'is not a valid regular expression'],
      ['(?<=a)b', 'lookbehind'],
      ['[^]', 'character class'],
      ['(a+)+$', 'repeats a group that itself repeats'],
      ['(x*){2,}', 'repeats a group that itself repeats'],
      ['if', 'part of a condition'],
      ['', 'empty regular expression'],
      ['a'.repeat(513), 'over the limit of 512'],
    ];
    for (const [input, expected] of cases) expect(reason(parseRegex(input)), input).toContain(expected);
    expect(wordProblem('/ok')).toBeNull();
  });
});

describe('path-rewrite', () => {
  it('takes a replacement path alone, or a regular expression and its replacement, one rule per line', () => {
    expect(value(parsePathRewrite('/'))).toEqual([{ match: '(.*)', replace: '/' }]);
    expect(value(parsePathRewrite('(.*) /foo\\1'))).toEqual([{ match: '(.*)', replace: '/foo\\1' }]);
    expect(value(parsePathRewrite('/foo/(.*) /\\1\n/bar/(.*) /baz/\\1\n'))).toEqual([
      { match: '/foo/(.*)', replace: '/\\1' },
      { match: '/bar/(.*)', replace: '/baz/\\1' },
    ]);
    // '%' reaches HAProxy's log-format as a literal.
    expect(value(parsePathRewrite('/a%20b'))).toEqual([{ match: '(.*)', replace: '/a%%20b' }]);
  });

  it('refuses hostile rules, naming the rule', () => {
    expect(reason(parsePathRewrite('/a /b /c'))).toContain('has 3 words');
    expect(reason(parsePathRewrite('/foo/(.*) /\\2'))).toContain('refers to a group the regular expression does not have (\\1 to \\1 exist)');
    expect(reason(parsePathRewrite('/x /\\1'))).toContain('(it has none)');
    expect(reason(parsePathRewrite('/x /"y'))).toContain('contains "\\""');
    expect(reason(parsePathRewrite('(.*) /a[b]'))).toContain('URL path characters');
    expect(reason(parsePathRewrite('(.*) /a\\b'))).toContain('URL path characters');
    expect(reason(parsePathRewrite(Array.from({ length: 17 }, () => '/').join('\n')))).toContain('over the limit of 16');
    expect(reason(parsePathRewrite('  '))).toBe('is empty');
  });
});

describe('headers and hosts', () => {
  it('parses Name value lines, unquoting a quoted value and keeping the last value of a name', () => {
    expect(value(parseHeaderSettings('Ingress-ID abcd123\nAnother-Header 12345'))).toEqual([
      { name: 'Ingress-ID', value: 'abcd123' },
      { name: 'Another-Header', value: '12345' },
    ]);
    expect(value(parseHeaderSettings('Cache-Control "no-store,no-cache,private"'))).toEqual([{ name: 'Cache-Control', value: 'no-store,no-cache,private' }]);
    // HAProxy 2.6 refuses `set-header X-Empty ""` (one argument too few): an empty sample is an empty value.
    expect(value(parseHeaderSettings('X-Empty ""'))).toEqual([{ name: 'X-Empty', value: '%[str()]' }]);
    expect(value(parseHeaderSettings('X-A 1\nx-a 2'))).toEqual([{ name: 'x-a', value: '2' }]);
    expect(value(parseHeaderSettings('X-Pct 100%[src]'))).toEqual([{ name: 'X-Pct', value: '100%%[src]' }]);
  });

  it('refuses hostile header lines and headers that frame the message', () => {
    const cases: [string, string][] = [
      ['X-A "b" unless TRUE', 'contains "\\""'],
      ['X-A ${HOME}', 'contains "$"'],
      ['X-A a\\"b', 'contains "\\\\"'],
      ['X-A é', 'printable ASCII'],
      ['X:A b', 'is not a header name'],
      ['X-A', 'has no value'],
      ['Content-Length 0', 'frames the message'],
      ['transfer-encoding chunked', 'frames the message'],
      ['', 'is empty'],
    ];
    for (const [input, expected] of cases) expect(reason(parseHeaderSettings(input)), input).toContain(expected);
  });

  it('takes host[:port] for set-host, lowercased', () => {
    expect(value(parseHostPort('Example.LOCAL'))).toBe('example.local');
    expect(value(parseHostPort('backend:8080'))).toBe('backend:8080');
    expect(value(parseHostPort('[2001:db8::1]:443'))).toBe('[2001:db8::1]:443');
    expect(value(parseHostPort('10.0.0.1'))).toBe('10.0.0.1');
    for (const hostile of ['a b', 'a"b', 'host:99999', 'host:', '-bad.example', 'a/b', '[zz]:80', 'x\nfrontend y']) expect(parseHostPort(hostile).ok, hostile).toBe(false);
  });
});

describe('redirects', () => {
  it('reads request-redirect as host[:port], with http unless https:// is given', () => {
    expect(value(parseRedirectTarget('example.com'))).toEqual({ scheme: 'http', authority: 'example.com' });
    expect(value(parseRedirectTarget('example.com:8888'))).toEqual({ scheme: 'http', authority: 'example.com:8888' });
    expect(value(parseRedirectTarget('https://Example.com'))).toEqual({ scheme: 'https', authority: 'example.com' });
    expect(reason(parseRedirectTarget('8888'))).toContain('port alone');
    expect(reason(parseRedirectTarget('https://example.com/path'))).toContain('may not have a path');
    expect(reason(parseRedirectTarget('example.com code 301 if TRUE'))).toContain('must be a host name');
    expect(reason(parseRedirectTarget('ftp://example.com'))).toContain('only http:// and https://');
    expect(value(parsePort('8443'))).toBe(8443);
    expect(reason(parsePort('0'))).toContain('1 to 65535');
  });
});

describe('CORS', () => {
  it('takes *, an exact origin, or a regular expression', () => {
    expect(value(parseCorsOrigin('*'))).toEqual({ match: 'any' });
    expect(value(parseCorsOrigin('https://example.com'))).toEqual({ match: 'exact', origin: 'https://example.com' });
    expect(value(parseCorsOrigin('^https://(.+\\.)?(example-1\\.com|example-2\\.com)(:\\d{1,5})?$'))).toEqual({
      match: 'regex',
      pattern: '^https://(.+\\.)?(example-1\\.com|example-2\\.com)(:\\d{1,5})?$',
    });
    expect(reason(parseCorsOrigin('https://a.com https://b.com'))).toContain('contains " "');
    expect(reason(parseCorsOrigin('-f'))).toContain('may not start with "-"');
    expect(reason(parseCorsOrigin('}'))).toContain('part of a condition');
  });

  it('normalizes methods and headers, and refuses unknown methods and bad header names', () => {
    expect(value(parseCorsMethods('get, POST,put'))).toBe('GET, POST, PUT');
    expect(value(parseCorsMethods('*'))).toBe('*');
    expect(reason(parseCorsMethods('GET, BREW'))).toContain('"BREW"');
    expect(value(parseCorsHeaders('X-Custom-Header,Upgrade-Insecure-Requests'))).toBe('X-Custom-Header, Upgrade-Insecure-Requests');
    expect(reason(parseCorsHeaders('X-A, "b"'))).toContain('not a header name');
    expect(value(parseCorsMaxAge('1m'))).toBe(60);
    expect(value(parseCorsMaxAge('1500ms'))).toBe(1);
    expect(reason(parseCorsMaxAge('2d'))).toContain('must be from 0s to 1d');
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkHash, MAX_BCRYPT_COST, MAX_SHA_CRYPT_ROUNDS } from '../../../../src/worker/routing/annotations/auth.js';
import { parseCorsOrigin } from '../../../../src/worker/routing/annotations/cors.js';
import { annotationValueProblem } from '../../../../src/worker/routing/annotations/guard-hook.js';
import { haproxyPcreEngine, PCRE_CACHE_ENTRIES, pcreProblems, setPcreEngine, type PcreEngine } from '../../../../src/worker/routing/annotations/pcre-engine.js';
import { parseRegex } from '../../../../src/worker/routing/annotations/pcre.js';
import { parseHeaderSettings, parsePathRewrite } from '../../../../src/worker/routing/annotations/rewrite.js';
import { ingress, rule, service } from '../../../helpers/cluster.js';
import { renderToDir } from '../../../helpers/e2e-render.js';
import { SKIP_HAPROXY } from '../../../helpers/haproxy-harness.js';
import { reason, value } from '../../../helpers/parsed.js';

/** A PCRE2 refusal JavaScript does not share: group names are at most 32 characters in PCRE2. */
const LONG_GROUP_NAME = `(?<${'n'.repeat(40)}>a)`;

/** An engine that records what it is asked and refuses the patterns in `refused`. */
function recordingEngine(refused: Record<string, string> = {}): PcreEngine & { calls: string[][] } {
  const calls: string[][] = [];
  const engine = (patterns: readonly string[]) => {
    calls.push([...patterns]);
    return new Map(patterns.map((p) => [p, refused[p] ?? null]));
  };
  return Object.assign(engine, { calls });
}

afterEach(() => {
  setPcreEngine(haproxyPcreEngine());
});

describe('regular expressions PCRE2 reads otherwise than JavaScript', () => {
  it('are refused by the JavaScript-side check alone, naming the divergence', () => {
    setPcreEngine(null);
    const cases: [string, string][] = [
      ['[\\d-z]', 'range from a class escape'],
      ['[^\\w-a]', 'range from a class escape'],
      ['[a-\\w]', 'range to the class escape \\w'],
      ['(a)\\2', 'refers to group \\2, but has only 1'],
      ['/x\\1', 'refers to group \\1, but has no groups'],
      ['[[:foo:]]', 'POSIX class'],
      ['[[:alpha:]]', 'POSIX class'],
      ['[[.a.]]', 'POSIX class'],
      ['[:alpha:]', 'POSIX class outside a class'],
      ['[=a=]', 'POSIX class outside a class'],
      ['a{70000}', "over PCRE2's limit of 65535"],
      ['a{1,70000}', "over PCRE2's limit of 65535"],
    ];
    for (const [pattern, expected] of cases) expect(reason(parseRegex(pattern)), pattern).toContain(expected);
    for (const fine of ['[:a]', 'x[:]', '[\\d-]', '[-\\d]', '[a-z\\d.-]+', '(a)(b)\\2', 'a{3,65535}', '^https://(.+\\.)?example\\.com$']) expect(value(parseRegex(fine)).pattern).toBe(fine);
  });

  it('are refused when HAProxy refuses them, with HAProxy reason, and each pattern is checked once', () => {
    const engine = recordingEngine({ '^/a(b)': 'some PCRE2 error' });
    setPcreEngine(engine);
    expect(reason(parseRegex('^/a(b)'))).toBe("is refused by HAProxy's PCRE2 (some PCRE2 error)");
    expect(reason(parseRegex('^/a(b)'))).toBe("is refused by HAProxy's PCRE2 (some PCRE2 error)");
    expect(value(parseRegex('^/ok')).pattern).toBe('^/ok');
    expect(value(parseRegex('^/ok')).pattern).toBe('^/ok');
    expect(engine.calls).toEqual([['^/a(b)'], ['^/ok']]);
  });

  it('send the new patterns of one path-rewrite to HAProxy in one run', () => {
    const engine = recordingEngine();
    setPcreEngine(engine);
    expect(value(parsePathRewrite('^/a/(.*) /\\1\n^/b/(.*) /b\\1\n/fixed'))).toHaveLength(3);
    expect(engine.calls[0]).toEqual(['^/a/(.*)', '^/b/(.*)']);
    expect(engine.calls.flat().filter((p) => p.startsWith('^/'))).toHaveLength(2);
  });

  it('of every Ingress of a render go to HAProxy in one run before the Ingresses are checked one by one', async () => {
    const engine = recordingEngine({ '^https://bad-7\\.example$': 'an error' });
    setPcreEngine(engine);
    const objects = Array.from({ length: 40 }, (_, i) => [
      ingress('shop', `front-${i}`, { rules: [rule(`h${i}.example.com`, { service: 'web' })] }, { annotations: { 'haproxy.org/cors-enable': 'true', 'haproxy.org/cors-allow-origin': i === 7 ? '^https://bad-7\\.example$' : `^https://o${i}\\.example$`, 'haproxy.org/path-rewrite': `^/p${i}/(.*) /\\1` } }),
    ]).flat();
    const dir = await mkdtemp(join(tmpdir(), 'haptic-prefetch-'));
    try {
      const rendered = await renderToDir(dir, [...objects, service('shop', 'web')]);
      expect(rendered.result.rejections.map((r) => r.name)).toEqual(['front-7']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const asked = engine.calls.filter((call) => call.some((p) => p.includes('example') || p.startsWith('^/p')));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toHaveLength(80);
  });

  it('keep a bounded number of verdicts, the least recently used going first', () => {
    const engine = recordingEngine();
    setPcreEngine(engine);
    pcreProblems(['^/first']);
    pcreProblems(Array.from({ length: PCRE_CACHE_ENTRIES }, (_, i) => `^/p${i}`));
    pcreProblems(['^/first']);
    expect(engine.calls.filter((c) => c.includes('^/first'))).toHaveLength(2);
  });

  it('reject only the Ingress that holds one, naming the annotation', () => {
    setPcreEngine(recordingEngine({ '^https://a(b)$': 'an error' }));
    const bad = ingress('shop', 'front', { rules: [rule('a.example.com', { service: 'web' })] }, { annotations: { 'haproxy.org/cors-allow-origin': '^https://a(b)$' } });
    expect(annotationValueProblem('haproxy.org/cors-allow-origin', '^https://a(b)$', bad, 'Ingress')).toBe(
      "cors-allow-origin is neither *, an origin (scheme://host[:port]) nor a usable regular expression: it is refused by HAProxy's PCRE2 (an error)",
    );
    expect(annotationValueProblem('haproxy.org/path-rewrite', '[\\d-z] /x', bad, 'Ingress')).toContain('path-rewrite rule "[\\\\d-z] /x": the regular expression has a range from a class escape');
  });

  it.skipIf(SKIP_HAPROXY)('go through the real HAProxy, which refuses what the JavaScript checks let pass', () => {
    setPcreEngine(haproxyPcreEngine());
    expect(new RegExp(LONG_GROUP_NAME).test('a')).toBe(true);
    expect(reason(parseCorsOrigin(LONG_GROUP_NAME))).toContain("refused by HAProxy's PCRE2 (subpattern name is too long (maximum 32 code units))");
    const verdicts = haproxyPcreEngine()(['^/fine$', LONG_GROUP_NAME, 'x{2}']);
    expect(Object.fromEntries(verdicts)).toEqual({ '^/fine$': null, [LONG_GROUP_NAME]: 'subpattern name is too long (maximum 32 code units)', 'x{2}': null });
  });

  it('count a pattern as compiling only after a run HAProxy passed, so a parse that stops early passes nothing', () => {
    // A stand-in for HAProxy that refuses the first pattern line of every config and stops there.
    const dir = mkdtempSync(join(tmpdir(), 'haptic-fake-haproxy-'));
    const fake = join(dir, 'haproxy');
    writeFileSync(fake, '#!/bin/sh\necho "[ALERT]    (1) : config : parsing [$3:5] : stopped here" >&2\nexit 1\n', { mode: 0o755 });
    try {
      expect([...haproxyPcreEngine(fake)(['^/a', '^/b', '^/c'])]).toEqual([
        ['^/a', 'stopped here'],
        ['^/b', 'stopped here'],
        ['^/c', 'stopped here'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fall back to the JavaScript checks when HAProxy cannot be run', () => {
    const missing = haproxyPcreEngine('/nonexistent/haproxy');
    expect(missing([LONG_GROUP_NAME]).size).toBe(0);
    setPcreEngine(missing);
    expect(value(parseRegex('^/x$')).pattern).toBe('^/x$');
    expect(reason(parseRegex('[\\d-z]'))).toContain('range from a class escape');
  });
});

describe('header settings', () => {
  it('refuse x-haptic-* headers in any case, naming the line', () => {
    for (const name of ['X-Haptic-Loop', 'x-haptic-loop', 'X-HAPTIC-Anything']) {
      expect(reason(parseHeaderSettings(`X-Fine 1\n${name} token`))).toBe(`line "${name} token": ${name} is reserved (x-haptic-* headers belong to the ingress, e.g. its loop guard) and may not be set`);
    }
    expect(value(parseHeaderSettings('X-Hapticx 1'))).toEqual([{ name: 'X-Hapticx', value: '1' }]);
  });

  it('write an empty value as an empty sample, the form HAProxy 2.6 accepts', () => {
    expect(value(parseHeaderSettings('X-Empty ""\nX-Full "a b"'))).toEqual([
      { name: 'X-Empty', value: '%[str()]' },
      { name: 'X-Full', value: 'a b' },
    ]);
  });
});

describe('basic-auth hash cost', () => {
  const SHA256_5000 = '$5$rounds=5000$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA';
  const SHA512_1000 = '$6$rounds=1000$saltsalt$LAV5VE5Y7w1d73x1mFNspYWUpazfmwv2SoepNXNKJ/otop/Zok96Hr8Q13LEv0DRY/x8v0/crpIjl8NJSAqXV/';
  const BCRYPT_05 = '$2b$05$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a';

  it('accepts SHA-crypt up to 5,000 rounds and bcrypt up to cost 5', () => {
    expect([MAX_SHA_CRYPT_ROUNDS, MAX_BCRYPT_COST]).toEqual([5000, 5]);
    expect(value(checkHash(SHA256_5000))).toContain('SHA-256');
    expect(value(checkHash(SHA512_1000))).toContain('SHA-512');
    expect(value(checkHash(BCRYPT_05))).toContain('bcrypt');
    expect(value(checkHash(BCRYPT_05.replace('$2b$', '$2y$')))).toContain('bcrypt');
  });

  it('refuses costlier hashes, and rounds or costs the format does not allow', () => {
    expect(reason(checkHash(SHA512_1000.replace('rounds=1000', 'rounds=999999999')))).toBe(
      'is a SHA-512-crypt ($6$) hash that has rounds=999999999, over the limit of 5000 (HAProxy hashes every login attempt; create it with e.g. `openssl passwd -6`)',
    );
    expect(reason(checkHash(SHA256_5000.replace('rounds=5000', 'rounds=5001')))).toContain('over the limit of 5000');
    expect(reason(checkHash(SHA256_5000.replace('rounds=5000', 'rounds=0999')))).toContain('write 1000 to 5000');
    expect(reason(checkHash(BCRYPT_05.replace('$05$', '$06$')))).toContain('bcrypt cost 6, over the limit of 5');
    expect(reason(checkHash(BCRYPT_05.replace('$05$', '$12$')))).toContain('bcrypt cost 12, over the limit of 5');
    expect(reason(checkHash(BCRYPT_05.replace('$05$', '$03$')))).toContain('write 04 to 05');
    expect(reason(checkHash('$7$CU..../....salt$hash'))).toContain('yescrypt or scrypt');
  });
});

import { describe, expect, it } from 'vitest';
import { normalizeSource, parseSourceList, sourceLines } from '../../../../src/worker/routing/annotations/access.js';
import { authProblem, checkHash, parseAuthType, parseRealm, parseSecretRef, usersOfSecret } from '../../../../src/worker/routing/annotations/auth.js';
import { logFormatLiteral, parseBool, parseDenyStatus, parseInteger, parseRedirectCode, parseTime, quotedTextProblem } from '../../../../src/worker/routing/annotations/values.js';
import type { KubeObject } from '../../../../src/worker/protocol.js';
import { reason, value } from '../../../helpers/parsed.js';


describe('value types', () => {
  it('reads booleans as the HAProxy Ingress Controller does, and nothing else', () => {
    expect(['true', 'True', '1', 't'].map((v) => value(parseBool(v)))).toEqual([true, true, true, true]);
    expect(['false', 'FALSE', '0', 'f'].map((v) => value(parseBool(v)))).toEqual([false, false, false, false]);
    for (const hostile of ['yes', 'true ', ' true', 'true\n', '"true"', '']) expect(reason(parseBool(hostile))).toBe('must be true or false');
  });

  it('reads HAProxy times into milliseconds within their bounds', () => {
    expect(['500', '500ms', '2s', '1m', '1h', '1d'].map((t) => value(parseTime(t, 1, 86_400_000)))).toEqual([500, 500, 2000, 60_000, 3_600_000, 86_400_000]);
    expect(reason(parseTime('2d', 1, 86_400_000))).toBe('must be from 1ms to 1d');
    expect(reason(parseTime('50ms', 100, 1000))).toBe('must be from 100ms to 1s');
    for (const hostile of ['1.5s', '-1s', '10us', '5 s', '5s\nfrontend x', '1e3', 's', '']) expect(reason(parseTime(hostile, 1, 1000))).toContain('must be a time');
  });

  it('takes whole numbers, redirect codes and deny codes only from their sets', () => {
    expect(value(parseInteger('30', 1, 100))).toBe(30);
    expect(reason(parseInteger('0', 1, 100))).toBe('must be from 1 to 100');
    expect(reason(parseInteger('+3', 1, 100))).toContain('whole number');
    expect([301, 302, 303, 307, 308].map((c) => value(parseRedirectCode(String(c))))).toEqual([301, 302, 303, 307, 308]);
    expect(reason(parseRedirectCode('300'))).toContain('must be one of 301');
    expect(value(parseDenyStatus('429'))).toBe(429);
    // HAProxy 2.6 refuses `deny_status 418` (no default error file for it).
    expect(reason(parseDenyStatus('418'))).toContain('must be one of 400');
    expect(reason(parseDenyStatus('200'))).toContain('must be one of');
  });

  it('refuses text that would end or change a quoted config word, and doubles % for log-format', () => {
    expect(quotedTextProblem('no-store, max-age=0', 100)).toBeNull();
    expect(quotedTextProblem('a"b', 100)).toContain('"\\""');
    expect(quotedTextProblem('${HOME}', 100)).toContain('"$"');
    expect(quotedTextProblem('a\\b', 100)).toContain('"\\\\"');
    expect(quotedTextProblem('a\nb', 100)).toContain('control character');
    expect(quotedTextProblem('é', 100)).toContain('printable ASCII');
    expect(quotedTextProblem('x'.repeat(101), 100)).toContain('over the limit of 100');
    expect(logFormatLiteral('100%[src]')).toBe('100%%[src]');
  });
});

describe('source lists (allow-list, deny-list)', () => {
  it('normalizes addresses and CIDR blocks: host bits cleared, IPv6 compressed, full-length prefixes dropped', () => {
    expect(value(parseSourceList('192.168.1.0/24, 192.168.2.100'))).toEqual(['192.168.1.0/24', '192.168.2.100']);
    expect(value(normalizeSource('10.1.2.3/8'))).toBe('10.0.0.0/8');
    expect(value(normalizeSource('10.1.2.3/32'))).toBe('10.1.2.3');
    expect(value(normalizeSource('2001:DB8:0:0:0:0:0:1'))).toBe('2001:db8::1');
    expect(value(normalizeSource('2001:db8::ffff:1/64'))).toBe('2001:db8::/64');
    expect(value(normalizeSource('::1/128'))).toBe('::1');
    expect(value(normalizeSource('0.0.0.0/0'))).toBe('0.0.0.0/0');
    expect(value(parseSourceList('10.0.0.1,10.0.0.1, 10.0.0.1/32'))).toEqual(['10.0.0.1']);
  });

  it('refuses the whole list for one bad entry, naming it', () => {
    const cases: [string, string][] = [
      ['10.0.0.0/8, not-an-ip', 'entry "not-an-ip" is not an IPv4 or IPv6 address'],
      ['10.0.0.0/33', 'prefix length that is not 0 to 32'],
      ['::1/129', 'prefix length that is not 0 to 128'],
      ['10.0.0.0/08', 'prefix length'],
      ['010.0.0.1', 'is not an IPv4 or IPv6 address'],
      ['fe80::1%eth0', 'has a zone ID'],
      ['10.0.0.1,', 'is empty (a stray comma?)'],
      ['10.0.0.1 10.0.0.2', 'is not an IPv4 or IPv6 address'],
      ['10.0.0.1\n  use_backend x', 'is not an IPv4'],
      ['10.0.0.1 }', 'is not an IPv4'],
      ['', 'is empty'],
      ['patterns/ips', 'pattern files are not supported'],
    ];
    for (const [input, expected] of cases) expect(reason(parseSourceList(input)), input).toContain(expected);
  });

  it('cuts long lists into acl lines of at most 32 patterns', () => {
    const list = Array.from({ length: 70 }, (_, i) => `10.0.${i}.0/24`);
    expect(sourceLines(value(parseSourceList(list.join(',')))).map((line) => line.length)).toEqual([32, 32, 6]);
  });
});

describe('basic auth', () => {
  const SHA512 = '$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1';
  const secret = (data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: 'shop' }, data });
  const b64 = (text: string): string => Buffer.from(text).toString('base64');

  it('accepts the crypt(3) formats HAProxy checks with, and refuses plain text and DES', () => {
    expect(value(checkHash(SHA512))).toContain('SHA-512');
    expect(value(checkHash('$1$salt$ez2vlPGdaLYkJam5pWs/Y1'))).toContain('MD5');
    expect(value(checkHash('$5$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA'))).toContain('SHA-256');
    expect(value(checkHash('$2b$05$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy'))).toContain('bcrypt');
    expect(reason(checkHash('$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7'))).toContain('yescrypt or scrypt hash, which costs too much');
    expect(reason(checkHash('secret'))).toContain('plain-text passwords are refused');
    expect(reason(checkHash('abJnggxhB/yWI'))).toContain('DES');
    expect(reason(checkHash('$9$x$y'))).toContain('not a crypt(3) hash in a supported format');
    expect(reason(checkHash(`${SHA512} insecure-password x`))).toContain('not a crypt(3) hash');
  });

  it('reads users from the Secret data, dropping one trailing newline and leaving out bad users', () => {
    const { users, problems } = usersOfSecret(secret({ bob: b64(`${SHA512}\n`), alice: b64('plain'), 'eve rm': b64(SHA512) }));
    expect(users).toEqual([{ name: 'bob', hash: SHA512 }]);
    expect(problems).toEqual([
      'the password of user alice is not a crypt(3) hash (plain-text passwords are refused); create it with e.g. `openssl passwd -6`; the user is left out',
      'user "eve rm" is not a valid user name (letters, digits, \'.\', \'_\', \'-\'); left out',
    ]);
  });

  it('parses the type, the Secret reference and the realm, refusing hostile values', () => {
    expect(value(parseAuthType('basic-auth'))).toBe('basic-auth');
    expect(reason(parseAuthType('basic'))).toContain('must be basic-auth');
    expect(value(parseSecretRef('users'))).toEqual({ namespace: undefined, name: 'users' });
    expect(value(parseSecretRef('shop/users'))).toEqual({ namespace: 'shop', name: 'users' });
    expect(reason(parseSecretRef('a/b/c'))).toContain('namespace/name');
    expect(reason(parseSecretRef('Shop/users'))).toContain('not a valid namespace');
    expect(reason(parseSecretRef('users x'))).toContain('not a valid Secret name');
    expect(value(parseRealm('Admin Area'))).toBe('Admin Area');
    expect(reason(parseRealm('a" unless TRUE #'))).toContain('would change the config line');
    expect(reason(parseRealm(' '))).toBe('is empty');
  });

  it('refuses auth settings that would serve the Ingress open or read another namespace', () => {
    const values = (entries: Record<string, string>): Map<string, string> => new Map(Object.entries(entries));
    expect(authProblem(values({ 'auth-type': 'basic-auth', 'auth-secret': 'users' }), 'shop')).toBeNull();
    expect(authProblem(values({ 'auth-type': 'basic-auth', 'auth-secret': 'shop/users' }), 'shop')).toBeNull();
    expect(authProblem(values({ 'auth-type': 'basic-auth', 'auth-secret': 'kube-system/admin' }), 'shop')).toContain('only Secrets of the Ingress\'s own namespace (shop)');
    expect(authProblem(values({ 'auth-type': 'basic-auth' }), 'shop')).toContain('needs auth-secret');
    expect(authProblem(values({ 'auth-secret': 'users' }), 'shop')).toContain('need auth-type: basic-auth');
    expect(authProblem(values({}), 'shop')).toBeNull();
  });
});

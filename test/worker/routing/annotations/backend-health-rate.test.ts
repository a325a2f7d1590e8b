import { describe, expect, it } from 'vitest';
import { parseCookieName, parseLoadBalance, parsePodMaxconn, parseServerProto, parseTimeout } from '../../../../src/worker/routing/annotations/backend-tuning.js';
import { parseCheckHttp, parseCheckInterval } from '../../../../src/worker/routing/annotations/health.js';
import { parseRateLimitPeriod, parseRateLimitRequests, parseRateLimitStatus } from '../../../../src/worker/routing/annotations/rate-limit.js';
import { reason, value } from '../../../helpers/parsed.js';


describe('load-balance', () => {
  it("takes HAProxy's algorithms with their arguments and options", () => {
    expect(value(parseLoadBalance('leastconn'))).toEqual({ algorithm: 'leastconn', options: [] });
    expect(value(parseLoadBalance('source'))).toEqual({ algorithm: 'source', options: [] });
    expect(value(parseLoadBalance('uri path-only whole len 10 depth 2'))).toEqual({ algorithm: 'uri', options: ['path-only', 'whole', 'len', '10', 'depth', '2'] });
    expect(value(parseLoadBalance('url_param userid check_post 64'))).toEqual({ algorithm: 'url_param', options: ['userid', 'check_post', '64'] });
    expect(value(parseLoadBalance('hdr(Host) use_domain_only'))).toEqual({ algorithm: 'hdr', argument: 'Host', options: ['use_domain_only'] });
    expect(value(parseLoadBalance('random(2)'))).toEqual({ algorithm: 'random', argument: '2', options: [] });
    expect(value(parseLoadBalance('rdp-cookie(mstshash)'))).toEqual({ algorithm: 'rdp-cookie', argument: 'mstshash', options: [] });
  });

  it('refuses unknown algorithms, stray arguments and sample expressions', () => {
    const cases: [string, string][] = [
      ['fastest', 'is not a balance algorithm'],
      ['hash req.cook(x)', 'hash takes a sample expression'],
      ['roundrobin extra', 'takes no arguments'],
      ['uri len', 'needs a number'],
      ['uri depth 2 depth 3', 'given twice'],
      ['uri whole\n  http-request deny', 'unknown option'],
      ['hdr', 'must be hdr(<header name>)'],
      ['hdr(a"b)', 'must be hdr(<header name>)'],
      ['random(0)', 'draws must be from 1 to 100'],
      ['url_param', 'must be url_param <name>'],
      ['', 'must be a balance algorithm'],
    ];
    for (const [input, expected] of cases) expect(reason(parseLoadBalance(input)), input).toContain(expected);
  });
});

describe('backend settings', () => {
  it('takes cookie names, timeouts, maxconn and h2 within their bounds', () => {
    expect(value(parseCookieName('SRVID'))).toBe('SRVID');
    for (const hostile of ['a b', 'a;b', 'a=b', '"a"', '']) expect(reason(parseCookieName(hostile)), hostile).toContain('cookie name');
    expect(value(parseTimeout('5s'))).toBe(5000);
    expect(reason(parseTimeout('25h'))).toContain('from 1ms to 1d');
    expect(value(parsePodMaxconn('30'))).toBe(30);
    expect(reason(parsePodMaxconn('0'))).toContain('from 1 to 1000000');
    expect(value(parseServerProto('h2'))).toBe('h2');
    expect(reason(parseServerProto('fcgi'))).toContain('must be h2');
  });

  it('takes rate limits: requests, a period of 100ms to 24h, a status HAProxy can deny with', () => {
    expect(value(parseRateLimitRequests('15'))).toBe(15);
    expect(reason(parseRateLimitRequests('0'))).toContain('from 1');
    expect(value(parseRateLimitPeriod('1m'))).toBe(60_000);
    expect(reason(parseRateLimitPeriod('10ms'))).toContain('from 100ms');
    expect(value(parseRateLimitStatus('429'))).toBe(429);
    expect(reason(parseRateLimitStatus('302'))).toContain('must be one of');
  });
});

describe('health checks', () => {
  it('reads check-http as [METHOD] path [version], OPTIONS when the method is left out as HAProxy does', () => {
    expect(value(parseCheckHttp('/health'))).toEqual({ method: 'OPTIONS', path: '/health' });
    expect(value(parseCheckHttp('HEAD /health'))).toEqual({ method: 'HEAD', path: '/health' });
    expect(value(parseCheckHttp('GET /health?full=1 HTTP/1.1'))).toEqual({ method: 'GET', path: '/health?full=1', version: 'HTTP/1.1' });
  });

  it('refuses hostile check requests', () => {
    const cases: [string, string][] = [
      ['GET /a b c d', 'must be [METHOD] path'],
      ['BREW /pot', 'has the method "BREW"'],
      ['GET health', 'is not a URL path'],
      ['GET /h#x', 'is not a URL path'],
      ['GET /h"x', 'is not a URL path'],
      ['GET /h HTTP/2', 'not HTTP/1.0 or HTTP/1.1'],
      ['GET /h HTTP/1.1\\r\\nHost:x', 'not HTTP/1.0 or HTTP/1.1'],
      ['', 'must be [METHOD] path'],
    ];
    for (const [input, expected] of cases) expect(reason(parseCheckHttp(input)), input).toContain(expected);
    expect(value(parseCheckInterval('500ms'))).toBe(500);
    expect(reason(parseCheckInterval('10ms'))).toContain('from 100ms');
  });
});

// Tenant values that JavaScript accepts and HAProxy does not, or that HAProxy pays for on every
// request, against a real HAProxy on loopback with echo backends: regular expressions PCRE2
// refuses, empty header values, costly basic-auth hashes. Each loses only its own object, and
// the rest of the cluster is served. With CI=true these tests always run; elsewhere they are
// skipped when HAProxy cannot be run.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/worker/protocol.js';
import { endpointSlice, ingress, rule, service } from '../helpers/cluster.js';
import { send } from '../helpers/e2e-client.js';
import { EchoFleet, type EchoServer } from '../helpers/e2e-echo.js';
import { renderToDir, withHaproxy } from '../helpers/e2e-render.js';
import { SKIP_HAPROXY, skipNotice } from '../helpers/haproxy-harness.js';

skipNotice('test/e2e/tenant-values.test.ts');

let root: string;
let counter = 0;
const echoes = new EchoFleet();
const out = (): string => join(root, `out-${++counter}`);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-tenant-values-'));
});
afterEach(async () => {
  await echoes.stopAll();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Ingress `namespace/name` routing `host` to Service `web` of its namespace, with `annotations`. */
function front(namespace: string, name: string, host: string, annotations: Record<string, string> = {}): KubeObject {
  return ingress(namespace, name, { rules: [rule(host, { service: 'web' })] }, { annotations });
}

function web(namespace: string, echo: EchoServer): KubeObject[] {
  return [service(namespace, 'web'), endpointSlice(namespace, 'web', [echo.host], { name: 'http', port: echo.port })];
}

describe.skipIf(SKIP_HAPROXY)('tenant values on a real HAProxy', () => {
  it('rejects only the Ingresses whose regular expressions PCRE2 refuses, and serves the others', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const rendered = await renderToDir(out(), [
      // PCRE2 caps group names at 32 characters; JavaScript compiles this one.
      front('cors', 'front', 'cors.example.test', { 'haproxy.org/cors-enable': 'true', 'haproxy.org/cors-allow-origin': `^https://(?<${'n'.repeat(40)}>a)$` }),
      front('range', 'front', 'range.example.test', { 'haproxy.org/path-rewrite': '^/([\\d-z]+) /\\1' }),
      front('backref', 'front', 'backref.example.test', { 'haproxy.org/path-rewrite': '^/(a)\\2 /b' }),
      front('good', 'front', 'good.example.test', { 'haproxy.org/path-rewrite': '^/old/(.*) /new/\\1' }),
      // Valid for PCRE2, but one request of 6,000 'a's costs HAProxy 7 s (a*a*a*) or 0.2 s ((a|aa)+).
      front('poly', 'front', 'poly.example.test', { 'haproxy.org/path-rewrite': '^/a*a*a*$ /x' }),
      front('alt', 'front', 'alt.example.test', { 'haproxy.org/cors-enable': 'true', 'haproxy.org/cors-allow-origin': '^(a|aa)+$' }),
      ...['cors', 'range', 'backref', 'good', 'poly', 'alt'].flatMap((ns) => web(ns, echo)),
    ]);
    const reasons = Object.fromEntries(rendered.result.rejections.map((r) => [r.namespace, r.reason]));
    expect(Object.keys(reasons).sort()).toEqual(['alt', 'backref', 'cors', 'poly', 'range']);
    expect(reasons.poly).toContain('has more than 2 repetitions without a small bound');
    expect(reasons.alt).toContain('repeats an alternation without a small bound');
    expect(reasons.cors).toContain("cors-allow-origin is neither *, an origin (scheme://host[:port]) nor a usable regular expression: it is refused by HAProxy's PCRE2 (subpattern name is too long");
    expect(reasons.range).toContain('path-rewrite rule "^/([\\\\d-z]+) /\\\\1": the regular expression has a range from a class escape');
    expect(reasons.backref).toContain('refers to group \\2, but has only 1');
    await withHaproxy(rendered, async () => {
      const reply = await send({ port: rendered.ports.http, host: 'good.example.test', path: '/old/x' });
      expect([reply.status, reply.echo?.url]).toEqual([200, '/new/x']);
      // A rejected Ingress keeps its hosts, which answer 503 without running its rules.
      expect((await send({ port: rendered.ports.http, host: 'range.example.test', path: '/a' })).status).toBe(503);
      const long = await send({ port: rendered.ports.http, host: 'poly.example.test', path: `/${'a'.repeat(6000)}!` });
      expect([long.status, long.echo]).toEqual([503, undefined]);
    });
  });

  it('sends an empty header value written Name "" to the backend and the client', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    const rendered = await renderToDir(out(), [
      front('shop', 'front', 'shop.example.test', { 'haproxy.org/request-set-header': 'X-Empty ""\nX-Full "a b"', 'haproxy.org/response-set-header': 'X-Reply-Empty ""' }),
      ...web('shop', echo),
    ]);
    expect(rendered.result.rejections).toEqual([]);
    await withHaproxy(rendered, async () => {
      const reply = await send({ port: rendered.ports.http, host: 'shop.example.test' });
      expect(reply.echo?.headers['x-empty']).toBe('');
      expect(reply.echo?.headers['x-full']).toBe('a b');
      expect(reply.headers['x-reply-empty']).toBe('');
    });
  });

  it('leaves out a basic-auth user whose hash costs too many rounds, and starts HAProxy at once with the others', async () => {
    const echo = await echoes.start('web', '127.0.0.2');
    // `secret` at 5,000 rounds; the same hash at 999,999,999 rounds would cost HAProxy minutes.
    const cheap = '$5$rounds=5000$saltsalt$0IyaXrmV7.sGNS6tirgqHLqX/G.FBvgkYA.lpPdS5sA';
    const users: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'users', namespace: 'shop' },
      stringData: { alice: cheap.replace('rounds=5000', 'rounds=999999999'), bob: cheap, carol: '$2b$12$abcdefghijklmnopqrstuuOQiyCxlgf/oeuTqixKmWdcYUh4Hjl0a' },
    };
    const rendered = await renderToDir(out(), [front('shop', 'front', 'shop.example.test', { 'haproxy.org/auth-type': 'basic-auth', 'haproxy.org/auth-secret': 'users' }), users, ...web('shop', echo)]);
    expect(rendered.result.warnings.join('\n')).toContain('the password of user alice is a SHA-256-crypt ($5$) hash that has rounds=999999999, over the limit of 5000');
    expect(rendered.result.warnings.join('\n')).toContain('the password of user carol is a bcrypt ($2a$, $2b$, $2y$) hash that has bcrypt cost 12, over the limit of 5');
    expect(rendered.result.haproxyConfig).not.toContain('rounds=999999999');
    const basic = (user: string): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${user}:secret`).toString('base64')}` });
    await withHaproxy(rendered, async () => {
      expect((await send({ port: rendered.ports.http, host: 'shop.example.test', headers: basic('bob') })).echo?.name).toBe('web');
      expect((await send({ port: rendered.ports.http, host: 'shop.example.test', headers: basic('alice') })).status).toBe(401);
    });
  });
});

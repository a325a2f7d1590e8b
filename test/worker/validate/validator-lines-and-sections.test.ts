// The validation phase on lines and sections: how lines are read, which sections and keywords exist,
// and which keywords a section of each kind accepts.
import { describe, expect, it } from 'vitest';
import { formatIssue, validateStructure } from '../../../src/worker/validate/validator.js';
import { PATHS, aux, withDefaults } from '../../helpers/validation.js';
import { expectOneError, lineOf, messages } from '../../helpers/validation-report.js';

describe("phase 'validation': lines and sections", () => {
  it('comments, blank lines, indentation, quotes and backslash escapes are read as HAProxy reads them', () => {
    const config = withDefaults(`
frontend fe   # trailing comment
\tbind :80
  # a comment line

  http-request set-header X-Note "a # b, not a comment"
  http-request set-header X-Other 'single # quoted'
  acl spaced path /a\\ b
  http-request deny if spaced
  default_backend be
backend be
  server s1 10.0.0.1:80
`);
    expect(messages(validateStructure(config, aux(), PATHS))).toEqual([]);
  });

  it('arguments taken from environment variables are not checked', () => {
    const config = `global
  maxconn "\${MAXCONN}"
defaults
  mode "\${MODE}"
  timeout client "\${CLIENT_TIMEOUT}"
backend be
  server s1 "\${APP_HOST}:\${APP_PORT}" weight "\${WEIGHT}"
`;
    expect(messages(validateStructure(config, aux(), PATHS))).toEqual([]);
  });

  it('negated anonymous ACLs and "or" in conditions are understood', () => {
    const config = withDefaults(`frontend fe
  bind :80
  acl api path_beg /api
  http-request redirect scheme https code 301 if !{ ssl_fc } api or { path /login }
  http-request deny if ! api || !{ src -f ${PATHS.mapsDir}/allow.acl }
  default_backend be
backend be
`);
    expect(messages(validateStructure(config, aux({ maps: { 'allow.acl': '10.0.0.0/8\n' } }), PATHS))).toEqual([]);
  });

  it('an unmatched quote is an error naming the line', () => {
    const config = withDefaults('frontend fe\n  bind :80\n  http-request set-header X "open\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, '"open', /unmatched double quote/);
  });

  it('an unknown section is an error naming the line', () => {
    const config = withDefaults('backends be\n  server s1 10.0.0.1:80\n');
    const report = validateStructure(config, aux(), PATHS);
    expect(report.errors[0]).toMatchObject({ phase: 'validation', file: 'haproxy.cfg', line: 6 });
    expect(report.errors[0]?.message).toMatch(/unknown section or keyword 'backends'/);
  });

  it('a keyword line before any section is an error', () => {
    const config = '  maxconn 100\nglobal\n  maxconn 100\n';
    expectOneError(validateStructure(config, aux(), PATHS), config, '  maxconn 100', /'maxconn' outside of any section/);
  });

  it('every section kind HAProxy knows is accepted with its own keywords', () => {
    const config = `global
  daemon
  master-worker
  nbthread 4
  user haproxy
  group haproxy
  pidfile /run/haproxy.pid
  h1-case-adjust content-type Content-Type
  tune.bufsize 32768
  tune.h2.max-concurrent-streams 100
  ssl-default-server-options ssl-min-ver TLSv1.2
defaults named-defaults
  mode http
  timeout connect 5s
resolvers dns
  nameserver ns1 10.0.0.53:53
  hold valid 10s
userlist admins
  user admin insecure-password secret
peers mesh
  peer local 127.0.0.1:10000
mailers alerts
  mailer smtp1 10.0.0.25:25
http-errors site-errors
  errorfile 404 /etc/haproxy/files/404.http
ring buffer
  size 32768
  format rfc5424
cache assets
  total-max-size 4
  max-age 60
program sidecar
  command /usr/bin/true
`;
    expect(messages(validateStructure(config, aux({ files: { '404.http': 'HTTP/1.0 404 Not Found\r\n\r\n' } }), PATHS))).toEqual([]);
  });

  it('an unknown keyword in a backend is an error naming keyword, section and line', () => {
    const config = withDefaults('backend be_x\n  server s1 10.0.0.1:80\n  foo bar\n');
    const issue = expectOneError(validateStructure(config, aux(), PATHS), config, 'foo bar', /unknown keyword 'foo'/);
    expect(formatIssue(issue)).toBe("haproxy.cfg:8: unknown keyword 'foo' in backend 'be_x'");
  });

  it('an unknown global keyword is an error, while tune.* and ssl-* families match by prefix', () => {
    const config = 'global\n  tune.http.maxhdr 128\n  ssl-default-bind-curves X25519\n  maxconnections 10\n';
    expectOneError(validateStructure(config, aux(), PATHS), config, 'maxconnections', /unknown keyword 'maxconnections' in 'global' section/);
  });

  it('a global keyword removed from HAProxy is an error', () => {
    const config = 'global\n  nbproc 2\n';
    expectOneError(validateStructure(config, aux(), PATHS), config, 'nbproc', /not supported any more/);
  });

  it.each([
    ['server', 'frontend fe\n  bind :80\n  server s1 10.0.0.1:80\n', 'server s1'],
    ['bind', 'backend be\n  bind :81\n', 'bind :81'],
    ['use_backend', 'backend be\n  use_backend other\nbackend other\n', 'use_backend other'],
    ['balance', 'frontend fe\n  bind :80\n  balance roundrobin\n', 'balance'],
    ['default-server', 'frontend fe\n  bind :80\n  default-server check\n', 'default-server'],
    ['timeout server', 'frontend fe\n  bind :80\n  timeout server 5s\n', 'timeout server'],
    ['bind', 'defaults\n  bind :82\n', 'bind :82'],
    ['server', 'defaults\n  server s1 10.0.0.1:80\n', 'server s1'],
  ])("'%s' in the wrong kind of section is an error", (keyword, body, needle) => {
    const config = `global\n  maxconn 10\n${body}`;
    const issue = expectOneError(validateStructure(config, aux(), PATHS), config, needle, /is not allowed in/);
    expect(issue.message).toContain(`'${keyword}'`);
  });

  it('ACLs and rules are allowed in a named defaults section but not an anonymous one', () => {
    const named = 'defaults web\n  mode http\n  acl local src 127.0.0.1\n  http-request deny if !local\n';
    expect(messages(validateStructure(named, aux(), PATHS))).toEqual([]);
    const anonymous = 'defaults\n  mode http\n  http-request deny\n';
    expectOneError(validateStructure(anonymous, aux(), PATHS), anonymous, 'http-request', /anonymous defaults section/);
  });

  it('a proxy inheriting from an unknown defaults section is an error', () => {
    const config = 'defaults base\n  mode http\nbackend be from based\n  server s1 10.0.0.1:80\n';
    expectOneError(validateStructure(config, aux(), PATHS), config, 'from based', /unknown defaults section 'based'/);
  });

  it('an unknown option, or `no` on an option that cannot be negated, is an error', () => {
    const config = withDefaults('backend be\n  option redispatch\n  no option redispatch\n  option redispach\n  no option httpchk\n');
    const report = validateStructure(config, aux(), PATHS);
    expect(messages(report)).toEqual([
      `haproxy.cfg:${lineOf(config, 'option redispach')}: unknown 'option' keyword 'redispach' in backend 'be'`,
      `haproxy.cfg:${lineOf(config, 'no option httpchk')}: 'no option httpchk' is not supported: 'option httpchk' cannot be negated`,
    ]);
  });

  it('unknown actions of http-request and tcp-request rules are errors', () => {
    const config = withDefaults(
      'frontend fe\n  bind :80\n  http-request set-var(txn.a) str(x)\n  http-request sett-header X y\n  tcp-request content acept\n  default_backend be\nbackend be\n',
    );
    const report = validateStructure(config, aux(), PATHS);
    expect(report.errors.map((e) => e.line)).toEqual([lineOf(config, 'sett-header'), lineOf(config, 'acept')]);
    expect(report.errors[0]?.message).toMatch(/unknown 'http-request' action 'sett-header'/);
  });

  it('a timeout without a valid time value is an error', () => {
    const config = withDefaults('backend be\n  timeout queue soon\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'timeout queue', /expects a time argument/);
  });

  it('a proxy name with characters HAProxy forbids is an error', () => {
    const config = withDefaults('backend be/default\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'backend be/default', /invalid backend name/);
  });

  it('a condition naming an ACL not declared earlier in the proxy is an error', () => {
    const config = withDefaults(`frontend fe
  bind :80
  http-request deny if is_admin
  acl is_admin path_beg /admin
  http-request deny if !is_admin || TRUE
  http-request deny if { src 10.0.0.0/8 } !is_admin
  default_backend be
backend be
  http-request deny if is_admin
`);
    const report = validateStructure(config, aux(), PATHS);
    expect(report.errors.map((e) => e.line)).toEqual([8, 14]);
    expect(report.errors[1]?.message).toBe("condition uses unknown ACL 'is_admin' in backend 'be'");
  });
});

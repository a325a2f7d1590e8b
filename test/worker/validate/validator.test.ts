import { describe, expect, it } from 'vitest';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import {
  MAX_ERRORS_PER_PHASE,
  checkAuxiliaryFiles,
  formatIssue,
  validateConfig,
  validateStructure,
  type ValidationIssue,
  type OutputPaths,
  type ValidationReport,
} from '../../../src/worker/validate/validator.js';
import { CERT, KEY, PATHS } from '../../helpers/validation.js';

// A CA certificate alone (CERT and KEY, a certificate with its key, come from helpers/validation.ts).
const CA_CERT = `-----BEGIN CERTIFICATE-----
MIIBfDCCASGgAwIBAgIUIovP/0lAZ+xbc5Yz3aSRhnu/m9swCgYIKoZIzj0EAwIw
EjEQMA4GA1UEAwwHdGVzdC1jYTAgFw0yNjExMjkyMzAyMTRaGA8yMTI2MTEwNTIz
MDIxNFowEjEQMA4GA1UEAwwHdGVzdC1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABDu4xtmC81KLWEY2G+Vcn/nnB8XO8jSw8c6lsSYshyRXWE1FZmZOS4g4aWk0
F57TbGq3eeBAXJfqC06GwXBNDSajUzBRMB0GA1UdDgQWBBStLg/Z2uV/AoCmkIIy
6h3ZWZKACzAfBgNVHSMEGDAWgBStLg/Z2uV/AoCmkIIy6h3ZWZKACzAPBgNVHRMB
Af8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQDujKnY4GjiojPyS7QtY6n5Po0y
xZh9oOb4tZ1L0MznOwIhAOl3p4udYB79EhyiGn/hqWdejWdTomy/9bNO6ilu8d0q
-----END CERTIFICATE-----
`;
const PEM = CERT + KEY;

/** One backend per service port, with fixed server slots, as the default template renders it. */
function backend(name: string, slots: number): string {
  const servers: string[] = [];
  for (let i = 1; i <= slots; i++) {
    servers.push(
      i <= 2
        ? `  server SRV_${i} 10.0.${i}.${(name.length % 200) + 1}:8080 weight 100`
        : `  server SRV_${i} 127.0.0.1:1 disabled`,
    );
  }
  return `backend ${name}
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  default-server check inter 2s fall 3 rise 2
${servers.join('\n')}
`;
}

/**
 * A realistic rendered configuration: HTTP, HTTPS and status frontends routing through host and
 * path maps to per-service backends. With p = real directories it passes `haproxy -c` of
 * HAProxy 2.6 (checked while writing these tests; the tests themselves do not need HAProxy).
 */
function realisticConfig(p: OutputPaths = PATHS, extraBackends: readonly string[] = []): string {
  return `# rendered by haptic-reconciler
global
  maxconn 2000
  log stdout format raw local0
  stats socket /tmp/haptic-validator-test.sock mode 600 level admin expose-fd listeners
  stats timeout 30s
  ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets
  ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384
  tune.ssl.default-dh-param 2048
  hard-stop-after 30s

defaults
  mode http
  log global
  option httplog
  option dontlognull
  option http-keep-alive
  no option http-server-close
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  timeout http-request 10s
  errorfile 503 ${p.filesDir}/503.http

frontend http
  bind :8080
  # Blocked sources are an ACL pattern file: one column.
  acl blocked src -f ${p.mapsDir}/blocked.acl
  acl acme path_beg /.well-known/acme-challenge/
  http-request deny deny_status 403 if blocked !acme
  http-request set-header X-Forwarded-Proto http
  http-request set-var(txn.host) req.hdr(host),field(1,:),lower
  use_backend %[var(txn.host),map(${p.mapsDir}/host.map,be_default_404)]
  default_backend be_default_404

frontend https
  bind :8443 ssl crt ${p.certsDir}/ alpn h2,http/1.1
  http-request set-header X-Forwarded-Proto "https"
  http-request set-var(txn.path) "path"
  use_backend %[base,map_beg(${p.mapsDir}/path-prefix.map)] if { base,map_beg(${p.mapsDir}/path-prefix.map) -m found }
  use_backend %[var(txn.host),map(${p.mapsDir}/host.map,be_default_404)]

frontend status
  bind 127.0.0.1:8404
  http-request return status 200 content-type text/plain string ok if { path /healthz }
  stats enable
  stats uri /stats
  stats refresh 10s

backend be_default_404
  http-request return status 404 content-type "text/plain" file ${p.filesDir}/404.txt

${backend('be_default_echo_80', 4)}
${backend('be_shop_web_8080', 4)}
${extraBackends.join('\n')}`;
}

function realisticAux(): AuxiliaryFiles {
  return {
    maps: {
      'host.map': '# host -> backend\necho.example.test be_default_echo_80\nshop.example.test be_shop_web_8080\n',
      'path-prefix.map': 'shop.example.test/api be_shop_web_8080\nshop.example.test/ be_shop_web_8080\n',
      'blocked.acl': '192.0.2.0/24\n198.51.100.7\n',
    },
    files: {
      '404.txt': 'not found\n',
      '503.http': 'HTTP/1.0 503 Service Unavailable\r\nCache-Control: no-cache\r\nContent-Type: text/plain\r\n\r\nno server\n',
    },
    certificates: { 'example.test.pem': PEM },
  };
}

function aux(partial: Partial<AuxiliaryFiles> = {}): AuxiliaryFiles {
  return { maps: {}, files: {}, certificates: {}, ...partial };
}

/** A config around `body`, with the defaults every proxy needs. */
function withDefaults(body: string): string {
  return `defaults\n  mode http\n  timeout connect 5s\n  timeout client 5s\n  timeout server 5s\n${body}`;
}

function lineOf(config: string, needle: string): number {
  const index = config.split('\n').findIndex((l) => l.includes(needle));
  if (index < 0) throw new Error(`no line contains ${needle}`);
  return index + 1;
}

function messages(report: ValidationReport): string[] {
  return report.errors.map(formatIssue);
}

/** The report has exactly one error, on the line containing `needle`, matching `pattern`. */
function expectOneError(report: ValidationReport, config: string, needle: string, pattern: RegExp): ValidationIssue {
  expect(messages(report)).toHaveLength(1);
  const issue = report.errors[0] as ValidationIssue;
  expect(issue.phase).toBe('validation');
  expect(issue.file).toBe('haproxy.cfg');
  expect(issue.line).toBe(lineOf(config, needle));
  expect(issue.message).toMatch(pattern);
  return issue;
}

describe('validateConfig on a realistic render', () => {
  it('a realistic config with frontends, backends, maps and certificates passes both phases', () => {
    const report = validateConfig(realisticConfig(), realisticAux(), PATHS);
    expect(messages(report)).toEqual([]);
    expect(report.warnings).toEqual([]);
  });

  it('validateConfig reports the errors of both phases, each naming its phase', () => {
    const files = realisticAux();
    const broken: AuxiliaryFiles = { ...files, maps: { ...files.maps, 'host.map': 'echo.example.test\n' } };
    const config = `${realisticConfig()}  bogus-keyword 1\n`;
    const report = validateConfig(config, broken, PATHS);
    expect(report.errors.map((e) => e.phase)).toEqual(['validation', 'auxiliary']);
    expect(messages(report)).toEqual([
      `haproxy.cfg:${lineOf(config, 'bogus-keyword')}: unknown keyword 'bogus-keyword' in backend 'be_shop_web_8080'`,
      "maps/host.map:1: map entry 'echo.example.test' has no value (expected '<key> <value>')",
    ]);
  });

  it('never throws, whatever the input', () => {
    const garbage = '\u0000\u0001"unterminated\n\\\n}{%[map(\n,map_beg(\nserver\nbind\n';
    expect(() => validateConfig(garbage, aux({ maps: { 'x.map': garbage }, certificates: { 'x.pem': garbage } }), PATHS)).not.toThrow();
    const report = validateConfig(garbage, aux(), PATHS);
    expect(report.errors.length).toBeGreaterThan(0);
  });

  it('validates a 10,000-backend config in linear time', () => {
    const backends: string[] = [];
    const hosts: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      backends.push(backend(`be_ns${i}_svc_80`, 5));
      hosts.push(`svc${i}.example.test be_ns${i}_svc_80`);
    }
    const files = realisticAux();
    const bigAux: AuxiliaryFiles = { ...files, maps: { ...files.maps, 'host.map': `${hosts.join('\n')}\n` } };
    const config = realisticConfig(PATHS, backends);
    expect(config.split('\n').length).toBeGreaterThan(100_000);
    const started = performance.now();
    const report = validateConfig(config, bigAux, PATHS);
    const elapsed = performance.now() - started;
    expect(messages(report)).toEqual([]);
    // A generous bound: the point is linear work, not a benchmark (typically well under 1 s).
    expect(elapsed).toBeLessThan(10_000);
  });
});

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

describe("phase 'validation': proxy names and references", () => {
  it('a use_backend naming a missing backend is an error naming the line', () => {
    const config = withDefaults('frontend fe\n  bind :80\n  use_backend be_missing if TRUE\n  default_backend be\nbackend be\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'be_missing', /use_backend in 'fe' names unknown backend 'be_missing'/);
  });

  it('a default_backend naming a frontend is an error', () => {
    const config = withDefaults('frontend fe\n  bind :80\n  default_backend other\nfrontend other\n  bind :81\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'default_backend other', /names frontend 'other'/);
  });

  it('a backend referenced before its declaration resolves', () => {
    const config = withDefaults('listen both\n  bind :80\n  use_backend later if TRUE\n  server s1 10.0.0.1:80\nbackend later\n');
    expect(messages(validateStructure(config, aux(), PATHS))).toEqual([]);
  });

  it('a frontend and a backend may share a name, but a listen clashes with both and duplicates clash', () => {
    const config = withDefaults(`frontend app
  bind :80
  default_backend app
backend app
  server s1 10.0.0.1:80
listen app
  bind :81
backend app
`);
    const report = validateStructure(config, aux(), PATHS);
    expect(messages(report)).toEqual([
      "haproxy.cfg:11: listen 'app' has the same name as frontend 'app' declared at line 6",
      "haproxy.cfg:13: backend 'app' has the same name as backend 'app' declared at line 9",
    ]);
  });

  it('duplicate named sections of other kinds are errors', () => {
    const config = 'cache assets\n  total-max-size 4\nresolvers dns\n  nameserver a 10.0.0.53:53\ncache assets\n';
    expect(messages(validateStructure(config, aux(), PATHS))).toEqual([
      "haproxy.cfg:5: cache section 'assets' has the same name as the one declared at line 1",
    ]);
  });

  it('a server naming an unknown resolvers section is an error', () => {
    const config = withDefaults('resolvers dns\n  nameserver a 10.0.0.53:53\nbackend be\n  server s1 app.example.test:80 resolvers dnz init-addr none\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'resolvers dnz', /unknown resolvers section 'dnz'/);
  });

  it("every value of a map routing use_backend must name a backend, reported with the map's line", () => {
    const config = withDefaults(`frontend fe
  bind :80
  use_backend %[req.hdr(host),lower,map_str(${PATHS.mapsDir}/host.map)]
backend be_a
backend be_b
`);
    const maps = { 'host.map': 'a.test be_a\n# comment\nb.test be_b\nc.test be_c\n' };
    const issue = expectOneError(validateStructure(config, aux({ maps }), PATHS), config, 'use_backend', /unknown backend 'be_c'/);
    expect(issue.message).toBe("use_backend routes through maps/host.map, whose line 4 ('c.test') names unknown backend 'be_c'");
  });

  it("a map converter's default value in use_backend must name a backend", () => {
    const config = withDefaults(`frontend fe
  bind :80
  use_backend %[base,map_beg(${PATHS.mapsDir}/paths.map,be_fallback)]
backend be_a
`);
    const maps = { 'paths.map': 'a.test/ be_a\n' };
    expectOneError(validateStructure(config, aux({ maps }), PATHS), config, 'use_backend', /names unknown backend 'be_fallback'/);
  });

  it('map values are not taken as backend names when another converter follows the map', () => {
    const config = withDefaults(`frontend fe
  bind :80
  use_backend be_%[req.hdr(host),map(${PATHS.mapsDir}/suffix.map,none)]
  use_backend %[req.hdr(host),map(${PATHS.mapsDir}/suffix.map),lower]
backend be_a
`);
    const maps = { 'suffix.map': 'a.test a\n' };
    expect(messages(validateStructure(config, aux({ maps }), PATHS))).toEqual([]);
  });
});

describe("phase 'validation': server and bind lines", () => {
  it.each([
    '10.0.0.1:8080',
    '10.0.0.1',
    '[2001:db8::1]:443',
    '2001:db8::1:443',
    'ipv6@[2001:db8::1]',
    '[2001:db8::1]',
    'ipv4@10.0.0.1:80',
    'app.default.svc.cluster.local:8080',
    'unix@/run/app.sock',
    '/run/app.sock',
    '10.0.0.1:+1000',
    '${BACKEND_ADDR}',
  ])('server address %s is well formed', (addr) => {
    const config = withDefaults(`backend be\n  server s1 ${addr} check\n`);
    expect(messages(validateStructure(config, aux(), PATHS))).toEqual([]);
  });

  it.each([
    ['10.0.0.1:', /missing port/],
    ['10.0.0.1:0', /invalid port '0'/],
    ['10.0.0.1:70000', /invalid port '70000'/],
    ['10.0.0.1:80-90', /port range not permitted/],
    ['10.0.0.1:http', /invalid port 'http'/],
    ['300.0.0.1:80', /invalid IPv4 address '300.0.0.1'/],
    [':80', /missing host/],
    ['fd@3', /file descriptor/],
    ['bad_host!:80', /invalid host name/],
    // Without brackets the last colon starts the port, as in HAProxy.
    ['2001:db8::1', /invalid IPv6 address '2001:db8:'/],
  ])('server address %s is an error', (addr, pattern) => {
    const config = withDefaults(`backend be\n  server s1 ${addr}\n`);
    expectOneError(validateStructure(config, aux(), PATHS), config, 'server s1', pattern);
  });

  it('a server line without an address is an error', () => {
    const config = withDefaults('backend be\n  server s1\n');
    expectOneError(validateStructure(config, aux(), PATHS), config, 'server s1', /expects <name> and <address>/);
  });

  it('duplicate server names within one backend are an error; the same name in two backends is not', () => {
    const config = withDefaults(`backend a
  server SRV_1 10.0.0.1:80
  server SRV_1 10.0.0.2:80
backend b
  server SRV_1 10.0.0.3:80
`);
    expectOneError(validateStructure(config, aux(), PATHS), config, '10.0.0.2', /another server named 'SRV_1' was already defined at line 7/);
  });

  it.each([
    ['weight', 'weight', /'weight' expects an argument/],
    ['weight abc', 'weight', /'weight' expects an integer argument \(got 'abc'\)/],
    ['weight 300', 'weight', /weight must be between 0 and 256/],
    ['inter 2 s', 's1', /unknown keyword 's'/],
    ['checks', 'checks', /unknown keyword 'checks'/],
    ['port 0', 'port', /invalid port '0'/],
  ])('server parameters "%s" are an error', (params, needle, pattern) => {
    const config = withDefaults(`backend be\n  server s1 10.0.0.1:80 check ${params}\n`);
    expectOneError(validateStructure(config, aux(), PATHS), config, needle, pattern);
  });

  it('known server parameters with their arguments pass', () => {
    const config = withDefaults(`resolvers dns
  nameserver ns 10.0.0.53:53
backend be
  default-server inter 3s fastinter 1s downinter 5s rise 2 fall 3 slowstart 30s maxconn 100 maxqueue 10
  server s1 10.0.0.1:443 ssl verify none sni str(app.test) alpn h2,http/1.1 check-ssl weight 10 backup
  server s2 app.test:80 resolvers dns resolve-prefer ipv4 init-addr last,libc,none send-proxy-v2 cookie s2 agent-check agent-port 9999
  server s3 10.0.0.3:80 source 10.0.0.100 usesrc clientip disabled on-marked-down shutdown-sessions observe layer7 error-limit 5
  server-template slot 1-10 app.test:8080 check resolvers dns init-addr none
`);
    expect(messages(validateStructure(config, aux(), PATHS))).toEqual([]);
  });

  it('a bind without a port, with an invalid port, or with an unknown parameter is an error', () => {
    const config = withDefaults('frontend fe\n  bind 10.0.0.1\n  bind :0\n  bind :443 ssl crt-lst /x\n  bind :8080-8090,[::]:80 v4v6\n  default_backend be\nbackend be\n');
    const report = validateStructure(config, aux(), PATHS);
    expect(report.errors.map((e) => [e.line, e.message])).toEqual([
      [7, "bind: missing port in '10.0.0.1'"],
      [8, "bind: invalid port '0' in ':0'"],
      [9, "bind: unknown keyword 'crt-lst'"],
      [9, "bind: unknown keyword '/x'"],
    ]);
  });

  it('two proxies binding the same address produce a warning', () => {
    const config = withDefaults('frontend a\n  bind :80\n  default_backend be\nfrontend b\n  bind :80\n  default_backend be\nbackend be\n');
    const report = validateStructure(config, aux(), PATHS);
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([`haproxy.cfg:10: bind address ':80' in frontend 'b' is also bound by 'a' at line 7`]);
  });
});

describe("phase 'validation': referenced auxiliary files", () => {
  it('a map converter naming a map the render does not produce is an error', () => {
    const config = withDefaults(`frontend fe
  bind :80
  http-request set-var(txn.b) base,map_beg(${PATHS.mapsDir}/paths.map)
  default_backend be
backend be
`);
    expectOneError(validateStructure(config, aux(), PATHS), config, 'map_beg', /map '\/etc\/haproxy\/maps\/paths.map' is not produced by the render \(no maps\/paths.map\)/);
  });

  it('an ACL pattern file given with -f must be produced', () => {
    const config = withDefaults(`frontend fe
  bind :80
  acl blocked src -f ${PATHS.mapsDir}/blocked.acl
  http-request deny if blocked
  default_backend be
backend be
`);
    expectOneError(validateStructure(config, aux(), PATHS), config, '-f', /pattern '\/etc\/haproxy\/maps\/blocked.acl' is not produced/);
    expect(messages(validateStructure(config, aux({ maps: { 'blocked.acl': '10.0.0.1\n' } }), PATHS))).toEqual([]);
  });

  it('a crt, crt-list or ca-file naming a missing file is an error', () => {
    const config = withDefaults(`frontend fe
  bind :443 ssl crt ${PATHS.certsDir}/site.pem
  bind :444 ssl crt-list ${PATHS.filesDir}/crt-list.txt
  bind :445 ssl crt ${PATHS.certsDir}/site.pem ca-file ${PATHS.certsDir}/ca.pem verify required
  default_backend be
backend be
`);
    const report = validateStructure(config, aux({ certificates: { 'site.pem': PEM } }), PATHS);
    expect(report.errors.map((e) => [e.line, e.message])).toEqual([
      [8, "crt-list '/etc/haproxy/files/crt-list.txt' is not produced by the render (no files/crt-list.txt)"],
      [9, "ca-file '/etc/haproxy/certs/ca.pem' is not produced by the render (no certs/ca.pem)"],
    ]);
  });

  it('crt naming the certificates directory is fine when at least one certificate is rendered', () => {
    const config = withDefaults(`frontend fe\n  bind :443 ssl crt ${PATHS.certsDir}\n  default_backend be\nbackend be\n`);
    expect(messages(validateStructure(config, aux({ certificates: { 'a.pem': PEM } }), PATHS))).toEqual([]);
    expectOneError(validateStructure(config, aux(), PATHS), config, 'crt', /no certificate was rendered/);
  });

  it('relative crt paths resolve against crt-base', () => {
    const config = withDefaults(`global\n  crt-base ${PATHS.certsDir}\nfrontend fe\n  bind :443 ssl crt site.pem\n  default_backend be\nbackend be\n`);
    expectOneError(validateStructure(config, aux(), PATHS), config, 'crt site.pem', /no certs\/site.pem/);
  });

  it('an errorfile naming a missing file or an unsupported status code is an error', () => {
    const config = withDefaults(`backend be\n  errorfile 503 ${PATHS.filesDir}/503.http\n  errorfile 418 ${PATHS.filesDir}/418.http\n`);
    const report = validateStructure(config, aux({ files: { '418.http': 'x' } }), PATHS);
    expect(report.errors.map((e) => [e.line, e.message])).toEqual([
      [7, "errorfile '/etc/haproxy/files/503.http' is not produced by the render (no files/503.http)"],
      [8, "errorfile: status code '418' not handled"],
    ]);
  });

  it('paths outside the rendered directories are warnings, once per path, not errors', () => {
    const config = withDefaults(`backend a
  errorfile 503 /usr/share/haproxy/503.http
backend b
  errorfile 503 /usr/share/haproxy/503.http
`);
    const report = validateStructure(config, aux(), PATHS);
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([
      "haproxy.cfg:7: errorfile '/usr/share/haproxy/503.http' lies outside the rendered directories and was not checked",
    ]);
  });

  it('errors are capped per phase and the rest counted in a warning', () => {
    const lines = Array.from({ length: MAX_ERRORS_PER_PHASE + 25 }, (_, i) => `  bogus${i} 1`).join('\n');
    const report = validateStructure(withDefaults(`backend be\n${lines}\n`), aux(), PATHS);
    expect(report.errors).toHaveLength(MAX_ERRORS_PER_PHASE);
    expect(report.warnings).toEqual([`validation: 25 further error(s) omitted after the first ${MAX_ERRORS_PER_PHASE}`]);
  });
});

describe("phase 'auxiliary'", () => {
  const noConfig = '';

  it('a map line with a key but no value is an error naming the map file and line', () => {
    const report = checkAuxiliaryFiles(aux({ maps: { 'host.map': 'a.test be_a\n\n  # note\nb.test\n' } }), noConfig, PATHS);
    expect(report.errors).toEqual([
      { phase: 'auxiliary', file: 'maps/host.map', line: 4, message: "map entry 'b.test' has no value (expected '<key> <value>')" },
    ]);
  });

  it('duplicate map keys are an error naming both lines', () => {
    const report = checkAuxiliaryFiles(aux({ maps: { 'host.map': 'a.test be_a\nb.test be_b\na.test be_c\n' } }), noConfig, PATHS);
    expect(messages(report)).toEqual(["maps/host.map:3: duplicate key 'a.test' (first defined at line 1)"]);
  });

  it('a map used only as an ACL pattern file (-f) may hold one column', () => {
    const config = `frontend fe\n  acl blocked src -f ${PATHS.mapsDir}/blocked.acl\n`;
    const report = checkAuxiliaryFiles(aux({ maps: { 'blocked.acl': '10.0.0.1\n10.0.0.2\n' } }), config, PATHS);
    expect(report.errors).toEqual([]);
  });

  it('a certificate without a private key is an error', () => {
    const report = checkAuxiliaryFiles(aux({ certificates: { 'a.pem': CERT } }), noConfig, PATHS);
    expect(messages(report)).toEqual(['certs/a.pem: no private key']);
    expect(report.errors[0]?.phase).toBe('auxiliary');
  });

  it('a private key without a certificate is an error', () => {
    const report = checkAuxiliaryFiles(aux({ certificates: { 'a.pem': KEY } }), noConfig, PATHS);
    expect(messages(report)).toEqual(['certs/a.pem: no certificate (expected a -----BEGIN CERTIFICATE----- block)']);
  });

  it('RSA and EC private key blocks are accepted, and a separate .key file completes a certificate', () => {
    const rsaLabelled = CERT + KEY.replace(/PRIVATE KEY/g, 'RSA PRIVATE KEY');
    const ecLabelled = CERT + KEY.replace(/PRIVATE KEY/g, 'EC PRIVATE KEY');
    const report = checkAuxiliaryFiles(
      aux({ certificates: { 'rsa.pem': rsaLabelled, 'ec.pem': ecLabelled, 'split.pem': CERT, 'split.pem.key': KEY } }),
      noConfig,
      PATHS,
    );
    expect(messages(report)).toEqual([]);
  });

  it('a PEM body that is not base64 is an error naming the line', () => {
    const corrupt = PEM.replace('MIGHAgEAMBMGByqGSM49', 'MIGHAgEAMBMG*yqGSM49');
    const report = checkAuxiliaryFiles(aux({ certificates: { 'a.pem': corrupt } }), noConfig, PATHS);
    expect(messages(report)).toEqual(["certs/a.pem:13: PEM block 'PRIVATE KEY' has invalid base64 data"]);
  });

  it('a PEM block with a mismatched or missing END line is an error', () => {
    const mismatched = CERT.replace('END CERTIFICATE', 'END PRIVATE KEY') + KEY;
    const truncated = CERT + KEY.split('\n').slice(0, 3).join('\n');
    const report = checkAuxiliaryFiles(aux({ certificates: { 'm.pem': mismatched, 't.pem': truncated } }), noConfig, PATHS);
    expect(messages(report)).toEqual([
      "certs/m.pem:11: PEM block 'CERTIFICATE' opened at line 1 ends with 'PRIVATE KEY'",
      "certs/t.pem:12: PEM block 'PRIVATE KEY' opened at line 12 has no END line",
    ]);
  });

  it('text that is not PEM at all is an error', () => {
    const report = checkAuxiliaryFiles(aux({ certificates: { 'a.pem': 'hello\n' } }), noConfig, PATHS);
    expect(messages(report)).toEqual(['certs/a.pem: not PEM data (no -----BEGIN ...----- block)']);
  });

  it('a CA bundle referenced only by ca-file needs no private key', () => {
    const config = `frontend fe\n  bind :443 ssl crt ${PATHS.certsDir}/site.pem ca-file ${PATHS.certsDir}/ca.pem verify required\n`;
    const report = checkAuxiliaryFiles(aux({ certificates: { 'site.pem': PEM, 'ca.pem': CA_CERT } }), config, PATHS);
    expect(messages(report)).toEqual([]);
  });

  it('a crt-list must reference produced certificates', () => {
    const config = `frontend fe\n  bind :443 ssl crt-list ${PATHS.filesDir}/certs.list\n`;
    const list = `# certificates by SNI
${PATHS.certsDir}/a.pem [alpn h2] a.test
${PATHS.certsDir}/b.pem b.test
`;
    const report = checkAuxiliaryFiles(aux({ files: { 'certs.list': list }, certificates: { 'a.pem': PEM } }), config, PATHS);
    expect(messages(report)).toEqual([
      "files/certs.list:3: references certificate '/etc/haproxy/certs/b.pem', which is not produced by the render",
    ]);
  });

  it('other files are not checked', () => {
    const report = checkAuxiliaryFiles(aux({ files: { 'anything.txt': 'no\tformat at all\n\n' } }), noConfig, PATHS);
    expect(report).toEqual({ errors: [], warnings: [] });
  });
});

describe('formatIssue', () => {
  it('formats an issue with a line as file:line: message', () => {
    expect(formatIssue({ phase: 'validation', file: 'haproxy.cfg', line: 12, message: "unknown keyword 'foo' in backend 'be_x'" })).toBe(
      "haproxy.cfg:12: unknown keyword 'foo' in backend 'be_x'",
    );
    expect(formatIssue({ phase: 'auxiliary', file: 'maps/host.map', line: 3, message: 'x' })).toBe('maps/host.map:3: x');
  });

  it('formats an issue without a line as file: message', () => {
    expect(formatIssue({ phase: 'auxiliary', file: 'certs/a.pem', message: 'no private key' })).toBe('certs/a.pem: no private key');
  });
});

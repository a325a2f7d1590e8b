// The validation phase on server and bind lines: addresses, ports, names and parameters.
import { describe, expect, it } from 'vitest';
import { validateStructure } from '../../../src/worker/validate/validator.js';
import { PATHS, aux, withDefaults } from '../../helpers/validation.js';
import { expectOneError, messages } from '../../helpers/validation-report.js';

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

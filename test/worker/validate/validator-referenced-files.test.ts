// The validation phase on the files a config names: maps, ACL pattern files, certificates and
// error files must be produced by the render; paths outside the rendered directories are warnings.
import { describe, expect, it } from 'vitest';
import { MAX_ERRORS_PER_PHASE, validateStructure } from '../../../src/worker/validate/validator.js';
import { PATHS, PEM, aux, withDefaults } from '../../helpers/validation.js';
import { expectOneError, messages } from '../../helpers/validation-report.js';

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

// The IncrementalValidator reuses the sections that did not change since its last configuration,
// and reports exactly what the pure validation functions report.
import { describe, expect, it } from 'vitest';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';
import { IncrementalValidator, MAX_ERRORS_PER_PHASE, checkAuxiliaryFiles, validateStructure, type OutputPaths } from '../../../src/worker/validate/validator.js';
import { backend, manyBackends, NO_AUX } from '../../helpers/incremental-validation.js';
import { CERT, KEY, OTHER_PATHS, PATHS } from '../../helpers/validation.js';

/** Both phases of `v` against the pure functions, on the same input. */
function expectSameReports(v: IncrementalValidator, config: string, aux: AuxiliaryFiles, paths: OutputPaths): void {
  expect(v.validateStructure(config, aux, paths)).toStrictEqual(validateStructure(config, aux, paths));
  expect(v.checkAuxiliaryFiles(aux, config, paths)).toStrictEqual(checkAuxiliaryFiles(aux, config, paths));
}

describe('IncrementalValidator reuses unchanged sections', () => {
  it('re-parses only the section that changed, with the same reports as the pure functions', () => {
    const v = new IncrementalValidator();
    const first = manyBackends(50);
    expectSameReports(v, first, NO_AUX, PATHS);
    expect(v.processedChunks).toBeGreaterThan(50);

    const second = first.replace('server s1 10.0.7.1:8080', 'server s1 10.0.7.99:8080');
    expect(v.validateStructure(second, NO_AUX, PATHS)).toStrictEqual(validateStructure(second, NO_AUX, PATHS));
    expect(v.processedChunks).toBe(1);
    expect(v.checkAuxiliaryFiles(NO_AUX, second, PATHS)).toStrictEqual(checkAuxiliaryFiles(NO_AUX, second, PATHS));
    expect(v.processedChunks).toBe(1);

    // The same text again, even as another string: nothing to parse.
    const again = `${second.slice(0, 10)}${second.slice(10)}`;
    expectSameReports(v, again, NO_AUX, PATHS);
    expect(v.processedChunks).toBe(0);
  });

  it('keeps reusing its sections after it lets go of the latest text, with the same reports', () => {
    const v = new IncrementalValidator();
    const first = manyBackends(30);
    expectSameReports(v, first, NO_AUX, PATHS);
    v.releaseText();
    // The same text: every section is found again, none parsed.
    expectSameReports(v, first, NO_AUX, PATHS);
    expect(v.processedChunks).toBe(0);
    v.releaseText();
    const second = first.replace('server s1 10.0.3.1:8080', 'server s1 10.0.3.77:8080');
    expect(v.validateStructure(second, NO_AUX, PATHS)).toStrictEqual(validateStructure(second, NO_AUX, PATHS));
    expect(v.processedChunks).toBe(1);
    expect(v.checkAuxiliaryFiles(NO_AUX, second, PATHS)).toStrictEqual(checkAuxiliaryFiles(NO_AUX, second, PATHS));
  });

  it('shifts the lines of reused sections when lines are inserted above them', () => {
    const v = new IncrementalValidator();
    const body = manyBackends(5, (i) => (i === 3 ? '300.0.0.1:80' : '10.0.0.1:80')) + 'backend be_1\n  server s1 10.0.0.1:80\n  server s1 10.0.0.2:80\n';
    expectSameReports(v, body, NO_AUX, PATHS);
    const shifted = `# a comment\n\n${body.replace('maxconn 100\n', 'maxconn 100\n  nbthread 2\n')}`;
    const report = v.validateStructure(shifted, NO_AUX, PATHS);
    expect(report).toStrictEqual(validateStructure(shifted, NO_AUX, PATHS));
    expect(v.processedChunks).toBe(2);
    // The duplicate server quotes the line of the first one, which moved too.
    const lines = shifted.split('\n');
    const first = lines.findIndex((l, i) => l.includes('server s1 10.0.0.1:80') && lines[i + 1]?.includes('server s1 10.0.0.2:80')) + 1;
    expect(report.errors.map((e) => e.message)).toContain(`another server named 's1' was already defined at line ${first} in backend 'be_1'`);
    const declared = lines.findIndex((l) => l === 'backend be_1') + 1;
    expect(report.errors.map((e) => e.message)).toContain(`backend 'be_1' has the same name as backend 'be_1' declared at line ${declared}`);
  });

  it('re-decides paths in unchanged sections when crt-base, the rendered files or the directories change', () => {
    const v = new IncrementalValidator();
    const config = (base: string) =>
      `global\n  crt-base ${base}\n  ca-base /etc/haproxy/certs\n\nfrontend https\n  bind :443 ssl crt site.pem ca-file ca.pem\n  default_backend be\n\n${backend('be')}`;
    const withCert: AuxiliaryFiles = { ...NO_AUX, certificates: { 'site.pem': CERT + KEY, 'ca.pem': CERT } };
    for (const [text, aux, paths] of [
      [config('/etc/haproxy/certs'), withCert, PATHS],
      [config('/etc/haproxy/certs'), NO_AUX, PATHS],
      [config('/elsewhere'), withCert, PATHS],
      [config('/etc/haproxy/certs'), withCert, OTHER_PATHS],
      [config('/etc/haproxy/certs'), withCert, PATHS],
    ] as const) {
      expectSameReports(v, text, aux, paths);
    }
  });

  it('checks map values against the backends of the new config, even when the map did not change', () => {
    const v = new IncrementalValidator();
    const aux: AuxiliaryFiles = { ...NO_AUX, maps: { 'host.map': 'a.test be_1\nb.test be_2\nc.test be_2\n' } };
    const frontend = 'frontend http\n  bind :80\n  use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map,be_1)]\n';
    const both = `${frontend}\n${backend('be_1')}\n${backend('be_2')}`;
    const one = `${frontend}\n${backend('be_1')}\n${backend('be_3')}`;
    for (const text of [both, one, both, one]) {
      const report = v.validateStructure(text, aux, PATHS);
      expect(report).toStrictEqual(validateStructure(text, aux, PATHS));
      expect(report.errors.length).toBe(text === one ? 2 : 0);
    }
  });

  it('keeps a section opener with an unmatched quote inside the previous section, as the pure pass does', () => {
    const v = new IncrementalValidator();
    const good = `${backend('be_a')}\n${backend('be_b')}\n${backend('be_c')}`;
    const broken = good.replace('backend be_b', 'backend "be_b');
    const quoted = good.replace('backend be_b', 'backend "be_b"');
    for (const text of [good, broken, quoted, broken, good]) expectSameReports(v, text, NO_AUX, PATHS);
    expect(validateStructure(broken, NO_AUX, PATHS).errors.map((e) => e.message)).toContain(
      "another server named 's1' was already defined at line 3 in backend 'be_a'",
    );
  });

  it('reports the same first errors and the same omitted count past the error cap', () => {
    const v = new IncrementalValidator();
    const bad = manyBackends(150, () => '999.0.0.1:80');
    const report = v.validateStructure(bad, NO_AUX, PATHS);
    expect(report.errors).toHaveLength(MAX_ERRORS_PER_PHASE);
    expect(report).toStrictEqual(validateStructure(bad, NO_AUX, PATHS));
    expect(report.warnings).toEqual([`validation: 50 further error(s) omitted after the first ${MAX_ERRORS_PER_PHASE}`]);
    const fewer = bad.replace(/999\.0\.0\.1:80/, '10.0.0.1:80');
    expect(v.validateStructure(fewer, NO_AUX, PATHS)).toStrictEqual(validateStructure(fewer, NO_AUX, PATHS));
  });

  it('handles CRLF line endings, indented openers and text before the first section', () => {
    const v = new IncrementalValidator();
    const text = `# preamble\r\nmaxconn 10\r\n  global\r\n  maxconn 5\r\n  backend be_a\r\n  server s1 10.0.0.1:80\r\nbackend be_b # comment\r\n  server s1 10.0.0.1:80\r\n  server s1 10.0.0.1:80`;
    expectSameReports(v, text, NO_AUX, PATHS);
    expectSameReports(v, text.replace('maxconn 10', 'maxconn ten'), NO_AUX, PATHS);
    expectSameReports(v, `${text}\r\n`, NO_AUX, PATHS);
    expectSameReports(v, '', NO_AUX, PATHS);
    expectSameReports(v, '\n\n', NO_AUX, PATHS);
  });

  it('never throws, and reports inputs that are not text like the pure functions', () => {
    const v = new IncrementalValidator();
    const garbage = '\u0000\u0001"unterminated\n\\\n}{%[map(\n,map_beg(\nserver\nbind\nbackend\n  server "x\n';
    const aux: AuxiliaryFiles = { maps: { 'x.map': garbage }, files: {}, certificates: { 'x.pem': garbage } };
    expectSameReports(v, garbage, aux, PATHS);
    const notText = 42 as unknown as string;
    expectSameReports(v, notText, aux, PATHS);
    const badAux = { maps: { 'x.map': 7 }, files: { y: null }, certificates: { z: {} } } as unknown as AuxiliaryFiles;
    expectSameReports(v, garbage, badAux, PATHS);
    const badPaths = { mapsDir: undefined } as unknown as OutputPaths;
    expectSameReports(v, garbage, aux, badPaths);
    expectSameReports(v, garbage, aux, PATHS);
  });
});

// The auxiliary phase: the maps, certificates and crt-lists the render produces.
import { describe, expect, it } from 'vitest';
import { checkAuxiliaryFiles } from '../../../src/worker/validate/validator.js';
import { CA_CERT, CERT, KEY, PATHS, PEM, aux } from '../../helpers/validation.js';
import { messages } from '../../helpers/validation-report.js';

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

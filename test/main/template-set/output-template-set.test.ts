import { X509Certificate, createPrivateKey } from 'node:crypto';
import { lstat, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CERTIFICATE_FILE, defaultCertificateFor, generateSelfSigned } from '../../../src/main/output/default-certificate.js';
import { INSTANCE_TOKEN_FILE, instanceTokenFor } from '../../../src/main/output/instance-token.js';
import { loadOutputTemplateSet } from '../../../src/main/template-set/output-template-set.js';

let root: string;
let n = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'haptic-default-cert-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
const dir = (): string => join(root, `out-${++n}`);

describe('the default certificate of an output directory', () => {
  it('is generated once, self-signed with a matching key, kept 0600, and reused on the next start', async () => {
    const out = dir();
    const first = await defaultCertificateFor(out);
    const certificate = new X509Certificate(first);
    expect(certificate.subject).toBe('CN=haptic-reconciler default certificate');
    expect(certificate.checkIssued(certificate)).toBe(true);
    expect(certificate.checkPrivateKey(createPrivateKey(first))).toBe(true);
    const file = join(out, DEFAULT_CERTIFICATE_FILE);
    expect((await lstat(file)).mode & 0o777).toBe(0o600);
    expect(await defaultCertificateFor(out)).toBe(first);
  });

  it('is replaced when the kept file is not a usable certificate and key', async () => {
    const out = dir();
    const first = await defaultCertificateFor(out);
    await writeFile(join(out, DEFAULT_CERTIFICATE_FILE), 'not a certificate');
    const second = await defaultCertificateFor(out);
    expect(second).not.toBe(first);
    expect(new X509Certificate(second).subject).toBe('CN=haptic-reconciler default certificate');
  });

  it('is replaced when it expires within 30 days', async () => {
    const out = dir();
    const first = await defaultCertificateFor(out);
    const validTo = Date.parse(new X509Certificate(first).validTo);
    const later = await defaultCertificateFor(out, { clock: { now: () => validTo - 86_400_000, monotonic: () => 0, setTimeout: () => 0, clearTimeout: () => undefined } });
    expect(later).not.toBe(first);
  });

  it('never reads or writes through a symlink planted at its path', async () => {
    const out = dir();
    const target = join(root, `elsewhere-${n}.pem`);
    const planted = await generateSelfSigned(Date.now(), 'CN=planted');
    await writeFile(target, planted);
    await defaultCertificateFor(out); // creates the directory
    await rm(join(out, DEFAULT_CERTIFICATE_FILE));
    await symlink(target, join(out, DEFAULT_CERTIFICATE_FILE));
    const pem = await defaultCertificateFor(out);
    expect(new X509Certificate(pem).subject).toBe('CN=haptic-reconciler default certificate');
    expect(await readFile(target, 'utf8')).toBe(planted);
    expect((await lstat(join(out, DEFAULT_CERTIFICATE_FILE))).isFile()).toBe(true);
  });

  it('reaches the template set as selfSignedCertificate, with the paths of the output directory', async () => {
    const out = dir();
    const set = await loadOutputTemplateSet(out, undefined, { set: ['httpPort=8080'] });
    expect(set.values).toMatchObject({ httpPort: 8080, mapsDir: join(out, 'maps'), certsDir: join(out, 'certs') });
    expect(set.values.selfSignedCertificate).toBe(await readFile(join(out, DEFAULT_CERTIFICATE_FILE), 'utf8'));
  });
});

describe('the loop-guard token of an output directory', () => {
  it('is 128 random bits in hex, made once, kept 0600, and reused on the next start', async () => {
    const out = dir();
    const token = await instanceTokenFor(out);
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect((await lstat(join(out, INSTANCE_TOKEN_FILE))).mode & 0o777).toBe(0o600);
    expect(await instanceTokenFor(out)).toBe(token);
    expect(await instanceTokenFor(dir())).not.toBe(token);
  });

  it('is replaced when the kept file is not a token, and never read or written through a symlink', async () => {
    const out = dir();
    await instanceTokenFor(out);
    await writeFile(join(out, INSTANCE_TOKEN_FILE), 'x }; http-request allow\n');
    expect(await instanceTokenFor(out)).toMatch(/^[0-9a-f]{32}$/);
    const target = join(root, `elsewhere-${n}.token`);
    await writeFile(target, `${'a'.repeat(32)}\n`);
    await rm(join(out, INSTANCE_TOKEN_FILE));
    await symlink(target, join(out, INSTANCE_TOKEN_FILE));
    expect(await instanceTokenFor(out)).not.toBe('a'.repeat(32));
    expect(await readFile(target, 'utf8')).toBe(`${'a'.repeat(32)}\n`);
    expect((await lstat(join(out, INSTANCE_TOKEN_FILE))).isFile()).toBe(true);
  });

  it('reaches the template set as loopGuardToken, which --set can pin or empty', async () => {
    const out = dir();
    const set = await loadOutputTemplateSet(out);
    expect(set.values.loopGuardToken).toBe((await readFile(join(out, INSTANCE_TOKEN_FILE), 'utf8')).trim());
    expect((await loadOutputTemplateSet(out, undefined, { set: ['loopGuardToken='] })).values.loopGuardToken).toBe('');
  });
});

describe('loading the template set for an output directory', () => {
  it('refuses a misspelled --set before it creates anything in the output directory', async () => {
    const out = dir();
    await expect(loadOutputTemplateSet(out, undefined, { set: ['httpport=1'] })).rejects.toThrow('--set httpport: no such value');
    await expect(lstat(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCertificatePair, reloadCertificates, type CertificatePair } from '../../../src/main/admission/certificate-files.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-cert-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the webhook certificate files', () => {
  it('names the flag and the file it cannot read', async () => {
    await expect(readCertificatePair(join(dir, 'missing.crt'), join(dir, 'missing.key'))).rejects.toThrow(/certificate \(--webhook-cert\) .*missing\.crt/);
  });

  it('hands a changed pair to the server, an unchanged one never, and keeps the old one when the new one does not load', async () => {
    const cert = join(dir, 'tls.crt');
    const key = join(dir, 'tls.key');
    await writeFile(cert, 'cert-1');
    await writeFile(key, 'key-1');
    const applied: CertificatePair[] = [];
    const apply = (pair: CertificatePair): void => {
      if (pair.cert === 'broken') throw new Error('does not load');
      applied.push(pair);
    };
    const reloader = reloadCertificates({ certFile: cert, keyFile: key, current: await readCertificatePair(cert, key), apply, clock: new FakeClock(), logger: silentLogger() });
    try {
      await reloader.check();
      expect(applied).toEqual([]);
      await writeFile(cert, 'cert-2');
      await writeFile(key, 'key-2');
      await reloader.check();
      expect(applied).toEqual([{ cert: 'cert-2', key: 'key-2' }]);
      await writeFile(cert, 'broken');
      await reloader.check();
      await writeFile(cert, 'cert-2');
      await reloader.check();
      expect(applied).toEqual([{ cert: 'cert-2', key: 'key-2' }]);
    } finally {
      reloader.stop();
    }
  });

  it('checks the files on its interval', async () => {
    const cert = join(dir, 'tls.crt');
    const key = join(dir, 'tls.key');
    await writeFile(cert, 'cert-1');
    await writeFile(key, 'key-1');
    const clock = new FakeClock();
    const applied: CertificatePair[] = [];
    const reloader = reloadCertificates({ certFile: cert, keyFile: key, current: { cert: 'old', key: 'old' }, apply: (p) => applied.push(p), clock, logger: silentLogger(), intervalMs: 1000 });
    try {
      expect(applied).toEqual([]);
      await clock.advance(1000);
      await eventually(() => applied.length === 1, 'the pair on disk applied at the first interval');
      expect(applied).toEqual([{ cert: 'cert-1', key: 'key-1' }]);
    } finally {
      reloader.stop();
    }
  });
});

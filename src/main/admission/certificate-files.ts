// The webhook's serving certificate as files (`--webhook-cert`, `--webhook-key`): read at start,
// then read again every `intervalMs`, and handed to the server when their text changed, so a
// certificate renewed in its Secret (cert-manager, or a rotation by hand) is served without a
// restart. A pair that does not load is logged and the previous one stays in service.
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { every, type Clock } from '../core/clock.js';

export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
}

/** Reads both files; an unreadable file is an Error naming the flag and the path. */
export async function readCertificatePair(certFile: string, keyFile: string): Promise<CertificatePair> {
  const read = (file: string, what: string): Promise<string> =>
    readFile(file, 'utf8').catch((error: unknown) => {
      throw new Error(`cannot read the webhook's ${what} ${file}: ${(error as Error).message}`);
    });
  const [cert, key] = await Promise.all([read(certFile, 'certificate (--webhook-cert)'), read(keyFile, 'key (--webhook-key)')]);
  return { cert, key };
}

export interface CertificateReloadOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** The pair in service now. */
  readonly current: CertificatePair;
  readonly apply: (pair: CertificatePair) => void;
  readonly clock: Clock;
  readonly logger: Logger;
  /** @default 60000 */
  readonly intervalMs?: number;
}

export interface CertificateReloader {
  /** Reads the files once, and applies a changed pair; resolves when done. */
  check(): Promise<void>;
  stop(): void;
}

/** Starts reloading every `intervalMs`. */
export function reloadCertificates(options: CertificateReloadOptions): CertificateReloader {
  let current = options.current;
  let running: Promise<void> | undefined;
  const check = (): Promise<void> => {
    running ??= readCertificatePair(options.certFile, options.keyFile)
      .then((pair) => {
        if (pair.cert === current.cert && pair.key === current.key) return;
        // A pair read while its files were being replaced may not match: apply throws, and
        // the next check, after the replacement, takes the pair.
        options.apply(pair);
        current = pair;
        options.logger.info({ cert: options.certFile }, 'the webhook serves its renewed certificate');
      })
      .catch((error: unknown) => {
        options.logger.warn({ err: error, cert: options.certFile }, 'the webhook certificate could not be reloaded; the previous one stays in service');
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const stop = every(options.clock, options.intervalMs ?? 60_000, () => void check(), { unref: true });
  return { check, stop };
}

// runController stops by itself when its source fails for good after start: it rejects with the
// source's error once everything it opened is closed (the HTTP endpoints among them), instead of
// serving /healthz with nothing behind it until a signal comes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runController } from '../../../src/main/controller/run-controller.js';
import { EXAMPLES_DIR } from '../../../src/main/core/paths.js';
import { StartupError } from '../../../src/main/core/errors.js';
import { ManifestSource } from '../../../src/main/sources/manifest/manifest-source.js';
import { silentLogger } from '../../helpers/loggers.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-controller-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('runController', () => {
  it('rejects with the error of a source that failed for good, and closes its endpoints, without being signalled', async () => {
    vi.spyOn(ManifestSource.prototype, 'run').mockRejectedValue(new StartupError('manifest directory vanished'));
    let metrics: string | undefined;
    const never = new AbortController();

    await expect(
      runController({ source: { manifests: EXAMPLES_DIR }, out: join(dir, 'out'), metricsAddr: '127.0.0.1:0', threads: 1, logger: silentLogger() }, never.signal, (c) => {
        metrics = c.metricsAddress;
      }),
    ).rejects.toThrow('manifest directory vanished');

    expect(metrics).toMatch(/^127\.0\.0\.1:\d+$/);
    await expect(fetch(`http://${metrics}/healthz`)).rejects.toThrow();
  }, 30_000);
});

import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { blockDirectory } from '../../../src/main/tools/soak/fault-injector.js';

describe('the soak output fault', () => {
  let scratch: string | undefined;
  afterEach(async () => {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  it('replaces the output directory with a file while a writer keeps filling it', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'haptic-block-'));
    const root = join(scratch, 'out');
    // A writer as busy as the soak's: it recreates the directory and writes into it between
    // every step of the injection, the race that made a recursive removal end in ENOTEMPTY.
    let writing = true;
    let n = 0;
    const writer = (): void => {
      if (!writing) return;
      try {
        mkdirSync(join(root, 'maps'), { recursive: true });
        for (let i = 0; i < 20; i++) writeFileSync(join(root, 'maps', `f${n++ % 200}.map`), 'x'.repeat(64));
      } catch {
        // The directory is now a file: the writer fails, as the soak's does.
      }
      setImmediate(writer);
    };
    writer();
    try {
      for (let round = 0; round < 10; round++) {
        await blockDirectory(root);
        expect((await stat(root)).isFile(), `round ${round}`).toBe(true);
        expect(await readFile(join(root), 'utf8')).toContain('output directory');
        await rm(root, { force: true });
      }
    } finally {
      writing = false;
    }
  });
});

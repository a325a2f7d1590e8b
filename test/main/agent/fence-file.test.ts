import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FenceFile, NO_FENCE } from '../../../src/main/agent/fence-file.js';

describe('FenceFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fence-file-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads no fence from a missing file, or from one whose slots are garbage', async () => {
    expect(new FenceFile(join(dir, 'absent')).load()).toEqual(NO_FENCE);
    await writeFile(join(dir, '.haptic-agent-fence'), 'x'.repeat(128));
    expect(new FenceFile(dir).load()).toEqual(NO_FENCE);
  });

  it('reads back the last fence saved, after the writer is gone, without a rename', async () => {
    const writer = new FenceFile(join(dir, 'made'));
    writer.load();
    for (let sequence = 1; sequence <= 5; sequence++) writer.save({ epoch: 2, sequence });
    // No close: a killed process does not close its files either.
    expect(new FenceFile(join(dir, 'made')).load()).toEqual({ epoch: 2, sequence: 5 });
    writer.close();
  });

  it('keeps the fence before when the slot being written is torn', async () => {
    const writer = new FenceFile(dir);
    writer.load();
    writer.save({ epoch: 1, sequence: 7 });
    writer.save({ epoch: 2, sequence: 1 });
    writer.close();
    const file = join(dir, '.haptic-agent-fence');
    const bytes = await readFile(file);
    // The second save went to the second slot: tear it.
    bytes.write('9', 64 + 3, 'latin1');
    await writeFile(file, bytes);
    const reader = new FenceFile(dir);
    expect(reader.load()).toEqual({ epoch: 1, sequence: 7 });
    // The next save overwrites the torn slot, not the one that holds.
    reader.save({ epoch: 2, sequence: 2 });
    reader.close();
    expect(new FenceFile(dir).load()).toEqual({ epoch: 2, sequence: 2 });
    expect((await readFile(file)).subarray(0, 64).toString('latin1')).toMatch(/^1 7 /);
  });
});

import { describe, expect, it } from 'vitest';
import type { DeployableRender } from '../../../src/main/deploy/deploy-target.js';
import { FileSync } from '../../../src/main/deploy/file-sync.js';
import { RuntimeRound } from '../../../src/main/deploy/runtime-round.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeDeployTarget } from '../../helpers/fake-deploy-target.js';
import { silentLogger } from '../../helpers/loggers.js';

function render(checksum: string): DeployableRender {
  return { renderId: checksum, checksum, haproxyConfig: `global # ${checksum}\n`, auxiliaryFiles: { maps: {}, files: {}, certificates: {} } };
}

/** A runtime change that answers after `ms` of the fake clock. */
function answerAfter(clock: FakeClock, ms: number): () => Promise<string> {
  return () => new Promise((resolve) => clock.setTimeout(() => resolve('answered'), ms));
}

describe('RuntimeRound', () => {
  it('holds the files of an instance that answered until the other instances have answered too', async () => {
    const clock = new FakeClock();
    const round = new RuntimeRound(clock, 250);
    const fast = new FakeDeployTarget({ clock, writeMs: 0 });
    const files = new FileSync({ target: fast, logger: silentLogger(), round });
    const first = files.runtime(answerAfter(clock, 2));
    const other = round.run(answerAfter(clock, 10));
    await clock.advance(2);
    await expect(first).resolves.toBe('answered');
    files.queue(render('a'));
    await clock.advance(5);
    expect(fast.writes).toEqual([]);
    await clock.advance(3);
    await expect(other).resolves.toBe('answered');
    await clock.advance(0);
    expect(fast.writes.map((w) => w.checksum)).toEqual(['a']);
  });

  it('holds them no longer than its limit behind an instance that does not answer', async () => {
    const clock = new FakeClock();
    const round = new RuntimeRound(clock, 250);
    const target = new FakeDeployTarget({ clock, writeMs: 0 });
    const files = new FileSync({ target, logger: silentLogger(), round });
    void round.run(() => new Promise<never>(() => undefined));
    files.queue(render('a'));
    await clock.advance(249);
    expect(target.writes).toEqual([]);
    await clock.advance(1);
    expect(target.writes.map((w) => w.checksum)).toEqual(['a']);
  });

  it('lets files through at once when no runtime change is in flight, and after a failed one', async () => {
    const clock = new FakeClock();
    const round = new RuntimeRound(clock, 250);
    const target = new FakeDeployTarget({ clock, writeMs: 0 });
    const files = new FileSync({ target, logger: silentLogger(), round });
    await expect(files.runtime(() => Promise.reject(new Error('unreachable')))).rejects.toThrow('unreachable');
    files.queue(render('a'));
    await clock.advance(0);
    expect(target.writes.map((w) => w.checksum)).toEqual(['a']);
  });
});

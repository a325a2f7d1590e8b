import { describe, expect, it } from 'vitest';
import type { DeployableRender } from '../../../src/main/deploy/deploy-target.js';
import { FileSync } from '../../../src/main/deploy/file-sync.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeDeployTarget } from '../../helpers/fake-deploy-target.js';
import { silentLogger } from '../../helpers/loggers.js';

function render(checksum: string): DeployableRender {
  return { renderId: checksum, checksum, haproxyConfig: `global # ${checksum}\n`, auxiliaryFiles: { maps: {}, files: {}, certificates: {} } };
}

function setUp(writeMs = 100): { clock: FakeClock; target: FakeDeployTarget; sync: FileSync; failed: string[]; queue: (checksum: string) => void } {
  const clock = new FakeClock();
  const target = new FakeDeployTarget({ clock, writeMs });
  const failed: string[] = [];
  const sync = new FileSync({ target, logger: silentLogger() });
  // Each write reports its failure to `failed`.
  const queue = (checksum: string): void => sync.queue(render(checksum), (error) => failed.push(`${checksum}: ${error}`));
  return { clock, target, sync, failed, queue };
}

describe('FileSync', () => {
  it('returns at once, writes in the order queued, and lets only the newest of the waiting renders through', async () => {
    const { clock, target, sync, queue } = setUp();
    queue('a');
    await clock.advance(0);
    // `a` is being written; `b` waits and `c` replaces it.
    queue('b');
    queue('c');
    expect(sync.behind).toBe(true);
    expect(target.writes.map((w) => w.checksum)).toEqual(['a']);
    await clock.advance(100);
    expect(target.onDisk).toBe('a');
    await clock.advance(100);
    expect(target.writes.map((w) => [w.checksum, w.endedAt! - clock.now()])).toEqual([
      ['a', -100],
      ['c', 0],
    ]);
    expect(target.onDisk).toBe('c');
    await sync.settled();
    expect(sync.behind).toBe(false);
  });

  it('writes a render that replaced a waiting one it patches as one patch of the render written before', async () => {
    const { clock, target, sync } = setUp();
    const a = render('a');
    // b = a with one edit, c = b with one more.
    const b = { ...render('b'), haproxyConfig: 'gXlobal # a\n', patch: { from: 'a', edits: { config: [{ at: 1, remove: 0, text: 'X' }] } } };
    const c = { ...render('c'), haproxyConfig: 'gXlobal # c\n', patch: { from: 'b', edits: { config: [{ at: 10, remove: 1, text: 'c' }] } } };
    sync.queue(a);
    await clock.advance(0);
    sync.queue(b);
    sync.queue(c);
    await clock.advance(200);
    await sync.settled();
    expect(target.written?.checksum).toBe('c');
    expect(target.written?.patch).toEqual({ from: 'a', edits: { config: [{ at: 1, remove: 0, text: 'X' }, { at: 9, remove: 1, text: 'c' }] } });
    expect(target.written?.haproxyConfig).toBe(c.haproxyConfig);
    expect(sync.behind).toBe(false);
  });

  it('writes a render whose patch is of another render than the waiting one as it is', async () => {
    const { clock, target, sync } = setUp();
    const c = { ...render('c'), patch: { from: 'x', edits: { config: [{ at: 0, remove: 0, text: 'c' }] } } };
    sync.queue(render('a'));
    await clock.advance(0);
    sync.queue({ ...render('b'), patch: { from: 'a', edits: {} } });
    sync.queue(c);
    await clock.advance(200);
    await sync.settled();
    expect(target.written).toBe(c);
  });

  it('settles only when every write queued before has ended', async () => {
    const { clock, target, sync, queue } = setUp();
    queue('a');
    let settled = false;
    const waiting = sync.settled().then(() => (settled = true));
    await clock.advance(50);
    queue('b');
    await clock.advance(50);
    expect(settled).toBe(false);
    await clock.advance(100);
    await waiting;
    expect(settled).toBe(true);
    expect(target.onDisk).toBe('b');
  });

  it('reports a failed write and stays behind until a later write or a reload puts the files in place', async () => {
    const { clock, target, sync, failed, queue } = setUp();
    target.failNextWrite();
    queue('a');
    await clock.advance(100);
    await sync.settled();
    expect(failed).toEqual(['a: ENOSPC: no space left on device']);
    expect(target.onDisk).toBeUndefined();
    expect(sync.behind).toBe(true);
    // A reload wrote the files of a newer render itself.
    sync.wrote(render('b'));
    expect(sync.behind).toBe(false);
    queue('c');
    await clock.advance(100);
    await sync.settled();
    expect(target.onDisk).toBe('c');
    expect(sync.behind).toBe(false);
  });

  it('is not brought up to date by a write of an older render than the newest queued', async () => {
    const { clock, sync, queue } = setUp();
    queue('a');
    await clock.advance(0);
    queue('b');
    await clock.advance(100);
    // `a` is on disk, `b` is still being written.
    expect(sync.behind).toBe(true);
    await clock.advance(100);
    expect(sync.behind).toBe(false);
  });
});

import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutputDirectory } from '../../../src/main/output/output-directory.js';
import type { AuxiliaryFiles } from '../../../src/worker/protocol.js';

let base: string;
let root: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'output-dir-'));
  root = join(base, 'out');
});

afterEach(async () => {
  await chmod(root, 0o755).catch(() => undefined);
  await rm(base, { recursive: true, force: true });
});

const aux = (maps: Record<string, string> = {}, files: Record<string, string> = {}, certificates: Record<string, string> = {}): AuxiliaryFiles => ({ maps, files, certificates });

describe('OutputDirectory', () => {
  it('writes the config and the auxiliary files in the layout the config names', async () => {
    const out = new OutputDirectory(root);
    const summary = await out.write('global\n', aux({ 'a.map': 'k v\n' }, { 'f.txt': 'x' }, { 'c.pem': 'PEM' }));
    expect(summary).toEqual({ written: 4, unchanged: 0, removed: 0 });
    expect(await readFile(join(root, 'haproxy.cfg'), 'utf8')).toBe('global\n');
    expect(await readFile(join(root, 'maps', 'a.map'), 'utf8')).toBe('k v\n');
    expect(await readFile(join(root, 'files', 'f.txt'), 'utf8')).toBe('x');
    expect(await readFile(join(root, 'certs', 'c.pem'), 'utf8')).toBe('PEM');
  });

  it('leaves no temp files behind', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n', aux({ 'a.map': 'k v\n' }));
    await out.write('global\n# 2\n', aux({ 'a.map': 'k w\n' }));
    const names = [...(await readdir(root)), ...(await readdir(join(root, 'maps')))];
    expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('writes private keys and certificates 0600, even over an older file with looser rights', async () => {
    await mkdir(join(root, 'certs'), { recursive: true });
    await writeFile(join(root, 'certs', 'c.pem'), 'old', { mode: 0o644 });
    await new OutputDirectory(root).write('global\n', aux({}, {}, { 'c.pem': 'KEY' }));
    expect((await stat(join(root, 'certs', 'c.pem'))).mode & 0o777).toBe(0o600);
  });

  it('removes files an earlier write left that the new render no longer has, from its record, config last', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n', aux({ 'a.map': '1', 'b.map': '2' }));
    const summary = await out.write('global\n', aux({ 'a.map': '1' }));
    expect(summary).toMatchObject({ removed: 1, unchanged: 2 });
    expect(await readdir(join(root, 'maps'))).toEqual(['a.map']);
  });

  it('removes stale files recorded by an earlier process, whatever their name, and leaves unrecorded files alone', async () => {
    await new OutputDirectory(root).write('global\n', aux({ constructor: '1', toString: '2', 'keep.map': '3' }));
    await writeFile(join(root, 'maps', 'operator-notes.txt'), 'mine');
    const summary = await new OutputDirectory(root).write('global\n', aux({ 'keep.map': '3' }));
    expect(summary.removed).toBe(2);
    expect((await readdir(join(root, 'maps'))).sort()).toEqual(['keep.map', 'operator-notes.txt']);
  });

  it('never follows a symlink inside the output directory: a linked maps/ is replaced by a real directory', async () => {
    const outside = join(base, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'precious'), 'do not touch');
    await mkdir(root);
    await symlink(outside, join(root, 'maps'));
    await new OutputDirectory(root).write('global\n', aux({ 'a.map': 'k v\n' }));
    expect((await lstat(join(root, 'maps'))).isDirectory()).toBe(true);
    expect(await readdir(outside)).toEqual(['precious']);
    expect(await readFile(join(outside, 'precious'), 'utf8')).toBe('do not touch');
  });

  it('replaces a symlinked file instead of writing through it', async () => {
    const target = join(base, 'target.txt');
    await writeFile(target, 'original');
    await mkdir(join(root, 'maps'), { recursive: true });
    await symlink(target, join(root, 'maps', 'a.map'));
    await new OutputDirectory(root).write('global\n', aux({ 'a.map': 'new' }));
    expect(await readFile(target, 'utf8')).toBe('original');
    expect((await lstat(join(root, 'maps', 'a.map'))).isFile()).toBe(true);
  });

  it('does not delete through a symlink planted where a recorded file was', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n', aux({ 'gone.map': '1' }));
    const target = join(base, 'victim.txt');
    await writeFile(target, 'keep');
    await rm(join(root, 'maps', 'gone.map'));
    await symlink(target, join(root, 'maps', 'gone.map'));
    await out.write('global\n', aux({}));
    expect(await readFile(target, 'utf8')).toBe('keep');
  });

  it('does not rewrite unchanged files', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n', aux({ 'a.map': '1' }));
    const before = await stat(join(root, 'maps', 'a.map'));
    const summary = await out.write('global\n# changed\n', aux({ 'a.map': '1' }));
    expect(summary).toEqual({ written: 1, unchanged: 1, removed: 0 });
    expect((await stat(join(root, 'maps', 'a.map'))).ino).toBe(before.ino);
  });

  it('takes the files a write says are unchanged since the last write as they are, and writes those it names', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n', aux({ 'a.map': 'k v\n', 'b.map': 'b\n' }), { id: 'w1' });
    // Only the config is named as changed: a.map is taken as the text already on disk.
    const summary = await out.write('global\n# 2\n', aux({ 'a.map': 'k v\n', 'b.map': 'b\n' }), { id: 'w2', changed: { from: 'w1', files: ['config'] } });
    expect(summary).toEqual({ written: 1, unchanged: 2, removed: 0 });
    expect(await readFile(join(root, 'haproxy.cfg'), 'utf8')).toBe('global\n# 2\n');
    await out.write('global\n# 2\n', aux({ 'a.map': 'k w\n', 'b.map': 'b\n' }), { id: 'w3', changed: { from: 'w2', files: ['maps/a.map'] } });
    expect(await readFile(join(root, 'maps', 'a.map'), 'utf8')).toBe('k w\n');
    // Changed again: written again. A file the hint calls unchanged but that is gone is put back.
    await rm(join(root, 'maps', 'b.map'));
    await out.write('global\n# 2\n', aux({ 'a.map': 'k u\n', 'b.map': 'b\n' }), { id: 'w4', changed: { from: 'w3', files: ['maps/a.map'] } });
    expect(await readFile(join(root, 'maps', 'a.map'), 'utf8')).toBe('k u\n');
    expect(await readFile(join(root, 'maps', 'b.map'), 'utf8')).toBe('b\n');
    // A write without a hint compares digests again, and writes what it cannot vouch for.
    expect(await out.write('global\n# 2\n', aux({ 'a.map': 'k u\n', 'b.map': 'b\n' }))).toEqual({ written: 2, unchanged: 1, removed: 0 });
  });

  it('compares every file when a write is a change of another write than the last one that succeeded', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n', aux({ 'a.map': 'k v\n' }), { id: 'w1' });
    await out.write('global\n', aux({ 'a.map': 'k x\n' }), { id: 'w2' });
    // "w1 but for the config" does not describe what is on disk (w2): the hint is ignored.
    const summary = await out.write('global\n# 3\n', aux({ 'a.map': 'k v\n' }), { id: 'w3', changed: { from: 'w1', files: ['config'] } });
    expect(summary).toEqual({ written: 2, unchanged: 0, removed: 0 });
    expect(await readFile(join(root, 'maps', 'a.map'), 'utf8')).toBe('k v\n');
    // A failed write is not the last one either (it wrote a.map before it failed).
    await expect(out.write('global\n# 4\n', aux({ 'a.map': 'k y\n', '../escape': 'x' }), { id: 'w4' })).rejects.toThrow(/not a plain file name/);
    await out.write('global\n# 5\n', aux({ 'a.map': 'k z\n' }), { id: 'w5', changed: { from: 'w4', files: ['config'] } });
    expect(await readFile(join(root, 'maps', 'a.map'), 'utf8')).toBe('k z\n');
  });

  it('refuses a file name with a path in it and leaves the previous output in place', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n# good\n', aux({ 'a.map': '1' }));
    await expect(out.write('global\n# bad\n', aux({ '../escape': 'x' }))).rejects.toThrow(/not a plain file name/);
    expect(await readFile(join(root, 'haproxy.cfg'), 'utf8')).toBe('global\n# good\n');
  });

  it('fails while the directory is not writable and succeeds once it is again', async () => {
    if (process.getuid?.() === 0) {
      // root ignores directory permissions; an unwritable path is simulated with a file in the way.
      await writeFile(join(base, 'blocked'), 'a file, not a directory');
      const blocked = new OutputDirectory(join(base, 'blocked', 'out'));
      await expect(blocked.write('global\n', aux())).rejects.toThrow();
      await rm(join(base, 'blocked'));
      await expect(blocked.write('global\n', aux())).resolves.toMatchObject({ written: 1 });
      return;
    }
    const out = new OutputDirectory(root);
    await out.write('global\n', aux());
    await chmod(root, 0o555);
    await expect(out.write('global\n# 2\n', aux())).rejects.toThrow();
    await chmod(root, 0o755);
    await expect(out.write('global\n# 2\n', aux())).resolves.toMatchObject({ written: 1 });
  });
});

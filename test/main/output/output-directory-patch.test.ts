import { execFileSync } from 'node:child_process';
import { lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutputDirectory } from '../../../src/main/output/output-directory.js';
import type { AuxiliaryFiles, TextEdit } from '../../../src/worker/protocol.js';
import { applyEdits } from '../../../src/worker/render/text-window.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'output-patch-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const aux = (files: Record<string, string> = {}): AuxiliaryFiles => ({ maps: {}, files, certificates: {} });
const config = (): Promise<string> => readFile(join(root, 'haproxy.cfg'), 'utf8');

describe('OutputDirectory writes given as edits', () => {
  it('leaves each file as a whole write of the edited text would, after any sequence of edit writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.tuple(fc.nat({ max: 200 }), fc.nat({ max: 20 }), fc.string({ maxLength: 30, unit: fc.constantFrom('a', 'b', '\n', ' ', '1') })), { maxLength: 4 }), { minLength: 1, maxLength: 6 }),
        async (rounds) => {
          const out = new OutputDirectory(join(root, `p${Math.random().toString(36).slice(2)}`));
          let text = 'global\n  maxconn 100\nbackend b\n  server s1 10.0.0.1:80\n'.repeat(4);
          let slots = 'b/s1 10.0.0.1\n';
          await out.write(text, aux({ 'server-slots.txt': slots }), { id: 'w0' });
          for (const [i, raw] of rounds.entries()) {
            const edits: TextEdit[] = [];
            let end = 0;
            for (const [at, remove, insert] of [...raw].sort((a, b) => a[0] - b[0])) {
              if (at < end || at > text.length) continue;
              edits.push({ at, remove: Math.min(remove, text.length - at), text: insert });
              end = at + Math.min(remove, text.length - at);
            }
            const slotEdits = [{ at: 0, remove: slots.length, text: `b/s1 10.0.0.${i}\n` }];
            text = applyEdits(text, edits) as string;
            slots = applyEdits(slots, slotEdits) as string;
            const files = ['config', 'files/server-slots.txt'];
            await out.write(text, aux({ 'server-slots.txt': slots }), { id: `w${i + 1}`, changed: { from: `w${i}`, files, edits: { config: edits, 'files/server-slots.txt': slotEdits } } });
            expect(await readFile(join(out.root, 'haproxy.cfg'), 'utf8')).toBe(text);
            expect(await readFile(join(out.root, 'files', 'server-slots.txt'), 'utf8')).toBe(slots);
          }
          // No temp file is left behind.
          expect((await readdir(out.root)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
        },
      ),
      { seed: 11, numRuns: 20 },
    );
  });

  it('writes the whole text when the file on disk is no longer the one it wrote', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n# 1\n', aux(), { id: 'w1' });
    await writeFile(join(root, 'haproxy.cfg'), 'tampered with\n');
    await out.write('global\n# 2\n', aux(), { id: 'w2', changed: { from: 'w1', files: ['config'], edits: { config: [{ at: 9, remove: 1, text: '2' }] } } });
    expect(await config()).toBe('global\n# 2\n');
  });

  it('writes the whole text when the text it last wrote was not all ASCII', async () => {
    const out = new OutputDirectory(root);
    await out.write('# é\nglobal\n', aux(), { id: 'w1' });
    await out.write('# é\nglobal\n# x\n', aux(), { id: 'w2', changed: { from: 'w1', files: ['config'], edits: { config: [{ at: 11, remove: 0, text: '# x\n' }] } } });
    expect(await config()).toBe('# é\nglobal\n# x\n');
    expect((await stat(join(root, 'haproxy.cfg'))).mode & 0o777).toBe(0o644);
  });
});

describe('OutputDirectory patch reads and its record', () => {
  const patchWrite = (out: OutputDirectory, from: string, id: string, digit: string): Promise<unknown> =>
    out.write(`global\n# ${digit}\n`, aux(), { id, changed: { from, files: ['config'], edits: { config: [{ at: 9, remove: 1, text: digit }] } } });

  it('never reads through a symlink put in place of the file it patches: the symlink is replaced and its target left alone', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n# 1\n', aux(), { id: 'w1' });
    const outside = join(root, '..', `outside-${Math.random().toString(36).slice(2)}`);
    // The same size as the config written, so only the symlink check can tell them apart.
    await writeFile(outside, 'GLOBAL\n# X\n');
    await rm(join(root, 'haproxy.cfg'));
    await symlink(outside, join(root, 'haproxy.cfg'));
    try {
      await patchWrite(out, 'w1', 'w2', '2');
      expect((await lstat(join(root, 'haproxy.cfg'))).isSymbolicLink()).toBe(false);
      expect(await config()).toBe('global\n# 2\n');
      expect(await readFile(outside, 'utf8')).toBe('GLOBAL\n# X\n');
    } finally {
      await rm(outside, { force: true });
    }
  });

  it('leaves the record file untouched by writes that record the same files, and rewrites it when they differ', async () => {
    const out = new OutputDirectory(root);
    const record = join(root, '.haptic-output.json');
    await out.write('global\n# 1\n', aux({ 'a.txt': 'a' }), { id: 'w1' });
    await patchWrite(out, 'w1', 'w2', '2');
    const before = await stat(record);
    await patchWrite(out, 'w2', 'w3', '3');
    expect((await stat(record)).ino).toBe(before.ino);
    expect(await config()).toBe('global\n# 3\n');
    await out.write('global\n# 4\n', aux({ 'b.txt': 'b' }), { id: 'w4' });
    expect((await stat(record)).ino).not.toBe(before.ino);
    expect(Object.keys(JSON.parse(await readFile(record, 'utf8')) as object).sort()).toEqual(['files/b.txt', 'haproxy.cfg']);
    // A new writer on the same directory still knows what the last one left: a.txt is gone, b.txt goes next.
    await new OutputDirectory(root).write('global\n', aux(), { id: 'w5' });
    expect((await readdir(join(root, 'files'))).filter((name) => !name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('OutputDirectory patches beside a FIFO', () => {
  it('writes the whole text, without waiting for a writer, when a FIFO stands where the patched file was', async () => {
    const out = new OutputDirectory(root);
    await out.write('global\n# 1\n', aux(), { id: 'w1' });
    await rm(join(root, 'haproxy.cfg'));
    execFileSync('mkfifo', [join(root, 'haproxy.cfg')]);
    await out.write('global\n# 2\n', aux(), { id: 'w2', changed: { from: 'w1', files: ['config'], edits: { config: [{ at: 9, remove: 1, text: '2' }] } } });
    expect((await lstat(join(root, 'haproxy.cfg'))).isFile()).toBe(true);
    expect(await config()).toBe('global\n# 2\n');
  });
});

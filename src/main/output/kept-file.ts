// Small files an output directory keeps across renders (the default certificate, the loop-guard
// token): read back only when they are regular files of a sane size, and replaced atomically
// through an exclusive, 0600 temp file, so a symlink planted at either name is never followed.
import { randomBytes } from 'node:crypto';
import { lstat, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The file's text, or undefined when it is missing, not a regular file, or larger than `maxBytes`. */
export async function readKeptFile(file: string, maxBytes: number): Promise<string | undefined> {
  try {
    const stats = await lstat(file);
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Writes `text` to a temp file beside `file` (exclusive create, 0600) and renames it over `file`. */
export async function writeKeptFile(file: string, text: string): Promise<void> {
  const temp = join(dirname(file), `${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

// OutputDirectory: writes renders into an output directory in the layout their config names
// (haproxy.cfg, maps/, files/, certs/), safely: every file goes to a fresh temp file (created
// exclusively, so an existing symlink is never followed) and is renamed into place, auxiliary
// files first and the config last, so HAProxy never reads a config whose files are missing.
// Stale files are removed from a record of what this writer wrote, never matched by name; keys
// and certificates are written 0600. Unchanged files (by digest) are not rewritten; a write that
// says which files changed since the last one (a WriteHint) digests only those. Digests run on the
// thread pool (WebCrypto), the text is encoded once: a write costs the main thread little. A file
// the hint gives as edits of the text last written (all ASCII, so characters are bytes) is
// written from the file on disk, read on the thread pool, with the edited byte ranges replaced:
// the main thread encodes only the edits, never the whole text (the temp file and rename as ever).
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuxiliaryFiles, OutputPaths, TextEdit } from '../../worker/protocol.js';
import { checkedEdits } from '../../worker/render/text-window.js';
import { sha256Off } from '../core/digest.js';

/** The files of one output directory, as the config refers to them: its OutputPaths and the config file. */
export interface OutputFiles extends OutputPaths {
  readonly configFile: string;
}

export function outputPathsIn(root: string): OutputFiles {
  return { configFile: join(root, 'haproxy.cfg'), mapsDir: join(root, 'maps'), filesDir: join(root, 'files'), certsDir: join(root, 'certs') };
}

export interface WriteSummary {
  readonly written: number;
  readonly unchanged: number;
  readonly removed: number;
}

/** What a write knows of itself: the files that changed since the write named `from`. */
export interface WriteHint {
  /** Names this write, for the next one's `from`. */
  readonly id: string;
  /**
   * This write is write `from` but for these files (`config`, `maps/<name>`, `files/<name>`,
   * `certificates/<name>`, as in RenderPatch.edits): the others are the same text. Ignored unless
   * `from` is the last write that succeeded here.
   */
  readonly changed?: {
    readonly from: string;
    readonly files: readonly string[];
    /** Of the changed files, by the same IDs: edits of their text in write `from` (RenderPatch.edits). */
    readonly edits?: Readonly<Record<string, readonly TextEdit[]>>;
  };
}

/** What this writer knows of a file it wrote: its size in bytes, and whether its text was all ASCII (offsets in characters are then offsets in bytes). */
interface Layout {
  readonly bytes: number;
  readonly ascii: boolean;
}

/** The record of what was written: path relative to the root → sha256 of its text. */
type OutputRecord = Record<string, string>;

const RECORD_FILE = '.haptic-output.json';
/** The record's digest of a file written as changed, unhashed: it equals no digest, not even its own. */
const CHANGED = 'changed';
/** A file name HAProxy can be pointed at: no directories, no hidden files, nothing to escape. */
const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;
const KINDS = [
  { kind: 'maps', dir: 'maps', mode: 0o644 },
  { kind: 'files', dir: 'files', mode: 0o644 },
  { kind: 'certificates', dir: 'certs', mode: 0o600 },
] as const;

export class OutputDirectory {
  readonly root: string;
  readonly paths: OutputFiles;
  /** What the last write left in place; loaded from disk on first use. */
  #record: OutputRecord | undefined;
  /** Serialises writes: two renders never interleave their renames. */
  #queue: Promise<unknown> = Promise.resolve();
  /** The hint id of the last write that succeeded. */
  #lastId: string | undefined;
  /** The record's text as this writer last wrote it. */
  #recordText: string | undefined;
  /** By path relative to the root, the layout of each file as this writer last wrote it. */
  readonly #layouts = new Map<string, Layout>();

  constructor(root: string) {
    this.root = root;
    this.paths = outputPathsIn(root);
  }

  /** Writes a render (see the header). Rejects, leaving every earlier file in place, on I/O errors. */
  write(haproxyConfig: string, aux: AuxiliaryFiles, hint?: WriteHint): Promise<WriteSummary> {
    const run = this.#queue.then(() => this.#write(haproxyConfig, aux, hint));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #write(haproxyConfig: string, aux: AuxiliaryFiles, hint: WriteHint | undefined): Promise<WriteSummary> {
    await realDirectory(this.root, true);
    const lastId = this.#lastId;
    this.#lastId = undefined;
    const previous = this.#record ?? (await this.#loadRecord());
    const next: OutputRecord = {};
    // With a hint that describes what is on disk, the files it does not name are the text last written.
    const changed = hint?.changed !== undefined && hint.changed.from === lastId && this.#record !== undefined ? new Set(hint.changed.files) : undefined;
    let written = 0;
    let unchanged = 0;
    const place = async (id: string, dir: string, name: string, text: string, mode: number): Promise<void> => {
      const relativePath = dir === '' ? name : `${dir}/${name}`;
      const was = previous[relativePath];
      const same = changed !== undefined && !changed.has(id) && was !== undefined;
      // Named as changed: written without a digest (CHANGED), so a write without a hint writes it again.
      const isChanged = changed?.has(id) === true;
      const edits = isChanged ? hint?.changed?.edits?.[id] : undefined;
      const layout = this.#layouts.get(relativePath);
      this.#layouts.delete(relativePath);
      if (edits !== undefined && layout?.ascii === true) {
        next[relativePath] = CHANGED;
        const patched = await patchAtomically(join(this.root, dir), name, edits, layout, mode);
        if (patched !== undefined) {
          this.#layouts.set(relativePath, patched);
          written++;
          return;
        }
      }
      const bytes = same ? undefined : Buffer.from(text, 'utf8');
      const digest = bytes === undefined ? (was as string) : isChanged ? CHANGED : await sha256Off(bytes);
      next[relativePath] = digest;
      if ((same || (digest !== CHANGED && was === digest)) && (await isRegularFile(join(this.root, relativePath)))) {
        if (layout !== undefined) this.#layouts.set(relativePath, layout);
        unchanged++;
        return;
      }
      const buffer = bytes ?? Buffer.from(text, 'utf8');
      await writeAtomically(join(this.root, dir), name, buffer, mode);
      this.#layouts.set(relativePath, { bytes: buffer.length, ascii: buffer.length === text.length });
      written++;
    };
    for (const { kind, dir, mode } of KINDS) {
      const files = aux[kind];
      const names = Object.keys(files);
      if (names.length > 0) await realDirectory(join(this.root, dir), false);
      for (const name of names) {
        if (!SAFE_NAME.test(name)) throw new Error(`refusing to write ${dir}/${JSON.stringify(name)}: not a plain file name`);
        await place(`${kind}/${name}`, dir, name, files[name] as string, mode);
      }
    }
    await place('config', '', 'haproxy.cfg', haproxyConfig, 0o644);
    // Only now, with the new config in place, may files the old one used go.
    let removed = 0;
    for (const relativePath of Object.keys(previous)) {
      if (Object.hasOwn(next, relativePath)) continue;
      try {
        await unlink(join(this.root, relativePath));
        removed++;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    // A record that says what the one on disk says is not written again (a runtime change's files
    // keep their entries: the same write after write).
    const recordText = `${JSON.stringify(next)}\n`;
    if (recordText !== this.#recordText) {
      await writeAtomically(this.root, RECORD_FILE, recordText, 0o644);
      this.#recordText = recordText;
    }
    this.#record = next;
    this.#lastId = hint?.id;
    return { written, unchanged, removed };
  }

  async #loadRecord(): Promise<OutputRecord> {
    try {
      const parsed: unknown = JSON.parse(await readFile(join(this.root, RECORD_FILE), 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
      const record: OutputRecord = {};
      for (const [path, digest] of Object.entries(parsed)) {
        // Only paths this writer could have written: a tampered record cannot name ../ or a symlink target.
        const [dir, name, extra] = path.split('/');
        const safe = path === 'haproxy.cfg' || (extra === undefined && name !== undefined && SAFE_NAME.test(name) && KINDS.some((k) => k.dir === dir));
        if (safe && typeof digest === 'string') record[path] = digest;
      }
      return record;
    } catch {
      return {};
    }
  }
}

/** Makes `path` a real directory: a symlink (or a file) in its place is removed, never followed. */
async function realDirectory(path: string, isRoot: boolean): Promise<void> {
  let stats;
  try {
    stats = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await mkdir(path, { recursive: isRoot, mode: 0o755 });
    return;
  }
  // The root itself is the operator's choice, symlink or not, and never removed; directories
  // inside it are ours.
  if (stats.isDirectory() || (isRoot && stats.isSymbolicLink())) return;
  if (isRoot) throw new Error(`output directory ${path} exists and is not a directory`);
  await unlink(path);
  await mkdir(path, { mode: 0o755 });
}

async function isRegularFile(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * The file `name`, whose text was all ASCII and `layout.bytes` long, with `edits` (character
 * offsets into that text) applied, written as writeAtomically writes: the kept byte ranges come
 * from the file on disk, read on the thread pool. Undefined, writing nothing, when the file is no
 * longer the size it was written with or an edit is out of range: the caller writes it whole.
 */
async function patchAtomically(dir: string, name: string, edits: readonly TextEdit[], layout: Layout, mode: number): Promise<Layout | undefined> {
  const old = await readKept(join(dir, name), layout.bytes);
  if (old === undefined) return undefined;
  const ordered = checkedEdits(edits, old.length);
  if (ordered === undefined) return undefined;
  const pieces: Buffer[] = [];
  let at = 0;
  let ascii = true;
  for (const edit of ordered) {
    const text = Buffer.from(edit.text, 'utf8');
    if (text.length !== edit.text.length) ascii = false;
    pieces.push(old.subarray(at, edit.at), text);
    at = edit.at + edit.remove;
  }
  pieces.push(old.subarray(at));
  await writeAtomically(dir, name, pieces, mode);
  return { bytes: pieces.reduce((n, piece) => n + piece.length, 0), ascii };
}

/**
 * The file at `path` when it is a regular file of `bytes` bytes (a symlink is never followed),
 * read with as few reads as the kernel allows: into one buffer of the size it was written with,
 * not in readFile's fixed chunks, each of which costs the main thread a callback. Undefined otherwise.
 */
async function readKept(path: string, bytes: number): Promise<Buffer | undefined> {
  let handle: FileHandle;
  try {
    // Non-blocking, so that a FIFO put in its place cannot hold a thread of the pool.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size !== bytes) return undefined;
    const buffer = Buffer.allocUnsafe(bytes);
    let filled = 0;
    while (filled < bytes) {
      const { bytesRead } = await handle.read(buffer, filled, bytes - filled, filled);
      if (bytesRead === 0) return undefined;
      filled += bytesRead;
    }
    return buffer;
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Temp file (exclusive create: never through a symlink), flushed, then renamed over `name`. */
async function writeAtomically(dir: string, name: string, text: string | Buffer | readonly Buffer[], mode: number): Promise<void> {
  const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  let complete = false;
  try {
    if (Array.isArray(text)) await writeAll(handle, text as readonly Buffer[]);
    else await handle.writeFile(text as string | Buffer);
    await handle.chmod(mode);
    await handle.sync();
    complete = true;
  } finally {
    await handle.close();
    if (!complete) await unlink(temp).catch(() => undefined);
  }
  try {
    await rename(temp, join(dir, name));
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** Writes `pieces` in order with writev, again from where a short write stopped. */
async function writeAll(handle: FileHandle, pieces: readonly Buffer[]): Promise<void> {
  let rest = pieces.filter((piece) => piece.length > 0);
  while (rest.length > 0) {
    // Linux takes at most 1,024 buffers per writev.
    const batch = rest.slice(0, 1_024);
    let { bytesWritten } = await handle.writev(batch);
    const next: Buffer[] = [];
    for (const piece of rest) {
      if (bytesWritten >= piece.length) bytesWritten -= piece.length;
      else {
        next.push(bytesWritten === 0 ? piece : piece.subarray(bytesWritten));
        bytesWritten = 0;
      }
    }
    rest = next;
  }
}

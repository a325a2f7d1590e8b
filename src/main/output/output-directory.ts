// OutputDirectory: writes renders into an output directory in the layout their config names
// (haproxy.cfg, maps/, files/, certs/), safely: every file goes to a fresh temp file (created
// exclusively, so an existing symlink is never followed) and is renamed into place, auxiliary
// files first and the config last, so HAProxy never reads a config whose files are missing.
// Stale files are removed from a record of what this writer wrote, never matched by name; keys
// and certificates are written 0600. Unchanged files (by digest) are not rewritten; a write that
// says which files changed since the last one (a WriteHint) digests only those. Digests run on the
// thread pool (WebCrypto), the text is encoded once: a write costs the main thread little.
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuxiliaryFiles, OutputPaths } from '../../worker/protocol.js';
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
  readonly changed?: { readonly from: string; readonly files: readonly string[] };
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
      const bytes = same || changed?.has(id) === true ? undefined : Buffer.from(text, 'utf8');
      const digest = bytes === undefined ? (same ? (was as string) : CHANGED) : await sha256Off(bytes);
      next[relativePath] = digest;
      if ((same || (digest !== CHANGED && was === digest)) && (await isRegularFile(join(this.root, relativePath)))) {
        unchanged++;
        return;
      }
      await writeAtomically(join(this.root, dir), name, bytes ?? text, mode);
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
    await writeAtomically(this.root, RECORD_FILE, `${JSON.stringify(next)}\n`, 0o644);
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

/** Temp file (exclusive create: never through a symlink), flushed, then renamed over `name`. */
async function writeAtomically(dir: string, name: string, text: string | Buffer, mode: number): Promise<void> {
  const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  let complete = false;
  try {
    await handle.writeFile(text);
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

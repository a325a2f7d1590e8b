// AgentStore: what an agent keeps in its `--dir` across restarts: the highest (epoch, sequence) it
// accepted (FenceFile, saved before HAProxy takes an apply, so a restarted agent still fences a
// deposed leader), the checksum of the last render whose files are all written, and the digest of
// every file as the leader sent it. The render's files themselves are the output directory's (written
// by OutputDirectory, as the agent's HAProxy loads them); the state naming a render is saved only
// after its files are in place, so `load` finds the last render fully written. `load` reads its
// files back, and any file missing or unreadable makes the render unknown (a full sync).
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_KINDS, recordPath, type FileKind } from './agent-protocol.js';
import { FenceFile, highest, safeCount, type Fence } from './fence-file.js';
import { sha256 as digestOf } from '../../worker/render/sha256.js';

/** A render as the agent holds it: texts as written under its `--dir`, digests of the leader's texts. */
export interface HeldRender {
  readonly checksum: string;
  /** haproxy.cfg as the leader sent it: the base a config patch applies to. */
  readonly source: string;
  readonly config: string;
  readonly files: Readonly<Record<FileKind, Readonly<Record<string, string>>>>;
  /** `recordPath` → sha256 of the leader's text. */
  readonly digests: Readonly<Record<string, string>>;
}

export interface StoredAgent {
  readonly fence: Fence;
  readonly render: HeldRender | undefined;
}

const STATE_FILE = '.haptic-agent.json';
const SOURCE_FILE = '.haptic-leader.cfg';
const DIRS: Record<FileKind, string> = { maps: 'maps', files: 'files', certificates: 'certs' };

export function sha256(text: string): string {
  return digestOf(text, 'hex');
}

export class AgentStore {
  readonly #dir: string;
  readonly #fence: FenceFile;
  /** Digest of the source config on disk: it is rewritten only when it changed. */
  #sourceDigest: string | undefined;

  constructor(dir: string) {
    this.#dir = dir;
    this.#fence = new FenceFile(dir);
  }

  /** The stored state; a missing or damaged state file is a fresh agent. */
  async load(): Promise<StoredAgent> {
    const stored = this.#fence.load();
    let parsed: { epoch?: unknown; sequence?: unknown; checksum?: unknown; digests?: unknown };
    try {
      parsed = JSON.parse(await readFile(join(this.#dir, STATE_FILE), 'utf8')) as typeof parsed;
    } catch {
      return { fence: stored, render: undefined };
    }
    // A state file from before the fence file had its own fence: the higher one holds.
    const fence = highest(stored, { epoch: safeCount(parsed.epoch), sequence: safeCount(parsed.sequence) });
    if (typeof parsed.checksum !== 'string' || typeof parsed.digests !== 'object' || parsed.digests === null) return { fence, render: undefined };
    return { fence, render: await this.#readRender(parsed.checksum, parsed.digests as Record<string, unknown>) };
  }

  /** Records the fence: once it returns, a restarted agent reads it (see fence-file.ts). Throws on I/O errors. */
  saveFence(fence: Fence): void {
    this.#fence.save(fence);
  }

  /** Closes the fence file (the agent stops). */
  close(): void {
    this.#fence.close();
  }

  /** Records the render whose files are all in place (undefined: none known). */
  async save(render: HeldRender | undefined): Promise<void> {
    const sourceDigest = render?.digests['haproxy.cfg'];
    if (render !== undefined && sourceDigest !== this.#sourceDigest) {
      await this.#replace(SOURCE_FILE, render.source);
      this.#sourceDigest = sourceDigest;
    }
    const state = { checksum: render?.checksum ?? null, digests: render?.digests ?? {} };
    await this.#replace(STATE_FILE, `${JSON.stringify(state)}\n`);
  }

  async #replace(name: string, text: string): Promise<void> {
    const file = join(this.#dir, name);
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, text, { mode: 0o600, flag: 'wx' });
    await rename(temp, file);
  }

  async #readRender(checksum: string, digests: Record<string, unknown>): Promise<HeldRender | undefined> {
    try {
      const files: Record<FileKind, Record<string, string>> = { maps: {}, files: {}, certificates: {} };
      const kept: Record<string, string> = {};
      for (const [path, digest] of Object.entries(digests)) {
        if (typeof digest !== 'string') return undefined;
        kept[path] = digest;
        if (path === 'haproxy.cfg') continue;
        const [dir, name, extra] = path.split('/');
        const kind = FILE_KINDS.find((k) => DIRS[k] === dir);
        if (kind === undefined || name === undefined || extra !== undefined || recordPath(kind, name) !== path) return undefined;
        files[kind][name] = await readFile(join(this.#dir, DIRS[kind], name), 'utf8');
      }
      const source = await readFile(join(this.#dir, SOURCE_FILE), 'utf8');
      if (kept['haproxy.cfg'] === undefined || sha256(source) !== kept['haproxy.cfg']) return undefined;
      this.#sourceDigest = kept['haproxy.cfg'];
      const config = await readFile(join(this.#dir, 'haproxy.cfg'), 'utf8');
      return { checksum, source, config, files, digests: kept };
    } catch {
      return undefined;
    }
  }
}

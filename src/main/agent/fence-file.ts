// FenceFile: the highest (epoch, sequence) an agent accepted, in a small file of its own in
// `--dir`, written before HAProxy takes an apply, so before the agent answers it (the render's
// files and state may follow behind the answer, see agent.ts). So a restarted agent still refuses every (epoch, sequence) at
// or below one it acknowledged, whatever files it had written by then.
//
// Written synchronously: a few dozen bytes through four system calls on the agent's own thread,
// instead of four trips through the thread pool while the apply waits (the thread pool is shared
// with the render's file writes).
//
// Durability: written to a temporary file and renamed over the old one, WITHOUT fsync. A reader
// sees the old fence or the new one, never a torn one; and the page cache outlives the agent
// process, so an agent killed right after answering (SIGKILL, OOM, a container restart: `--dir` is
// the Pod's emptyDir, which a container restart keeps) reads the fence it acknowledged. Only a
// crash of the whole machine before the kernel writes back can lose the last fences; that machine's
// HAProxy then lost its runtime state too, and the successor leader's epoch is above any fence it
// lost. An fsync per apply would put a disk flush into every endpoint change's latency.
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface Fence {
  readonly epoch: number;
  readonly sequence: number;
}

export const NO_FENCE: Fence = { epoch: 0, sequence: 0 };

const FENCE_FILE = '.haptic-agent-fence.json';

/** True when (epoch, sequence) is above `fence`: the only applies an agent takes. */
export function above(next: Fence, fence: Fence): boolean {
  return next.epoch > fence.epoch || (next.epoch === fence.epoch && next.sequence > fence.sequence);
}

/** The higher of two fences. */
export function highest(a: Fence, b: Fence): Fence {
  return above(a, b) ? a : b;
}

export class FenceFile {
  readonly #file: string;
  /** The first save makes `--dir` if it is not there yet. */
  #dirMade = false;

  constructor(dir: string) {
    this.#file = join(dir, FENCE_FILE);
  }

  /** The stored fence; a missing or damaged file is no fence. */
  async load(): Promise<Fence> {
    try {
      const parsed = JSON.parse(await readFile(this.#file, 'utf8')) as { epoch?: unknown; sequence?: unknown };
      return { epoch: safeCount(parsed.epoch), sequence: safeCount(parsed.sequence) };
    } catch {
      return NO_FENCE;
    }
  }

  /** Replaces the stored fence (see the header for what survives what); throws on I/O errors, leaving the old one. */
  save(fence: Fence): void {
    if (!this.#dirMade) {
      mkdirSync(dirname(this.#file), { recursive: true });
      this.#dirMade = true;
    }
    const temp = `${this.#file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(temp, `${JSON.stringify({ epoch: fence.epoch, sequence: fence.sequence })}\n`, { mode: 0o600, flag: 'wx' });
      renameSync(temp, this.#file);
    } catch (error) {
      try {
        unlinkSync(temp);
      } catch {
        // Never created, or already renamed.
      }
      throw error;
    }
  }
}

export function safeCount(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

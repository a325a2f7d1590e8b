// FenceFile: the highest (epoch, sequence) an agent accepted, in a small file of its own in
// `--dir`, written before HAProxy takes an apply, so before the agent answers it (the render's
// files and state may follow behind the answer, see agent.ts). So a restarted agent still refuses
// every (epoch, sequence) at or below one it acknowledged, whatever files it had written by then.
//
// The file holds two fixed-size slots, each a fence with its own check digest; a save overwrites
// the older slot in place (one positional write on a descriptor kept open), and a load takes the
// highest slot whose check holds. A write+rename costs 1 to 4 ms per apply on ext4 (a rename over
// a file makes ext4 start writing the new one back); this costs one system call.
//
// Durability: no fsync. The page cache outlives the agent process, so an agent killed right after
// answering (SIGKILL, OOM, a container restart: `--dir` is the Pod's emptyDir, which a container
// restart keeps) reads the fence it acknowledged. Only a crash of the whole machine before the
// kernel writes back can lose the last fences (or tear the slot being written: its check fails and
// the other slot, the fence before, holds); that machine's HAProxy lost its runtime state too, and
// a successor leader's epoch is above any fence it lost. An fsync per apply would put a disk flush
// into every endpoint change's latency.
import { closeSync, constants, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sha256 } from '../../worker/render/sha256.js';

export interface Fence {
  readonly epoch: number;
  readonly sequence: number;
}

export const NO_FENCE: Fence = { epoch: 0, sequence: 0 };

const FENCE_FILE = '.haptic-agent-fence';
/** Bytes per slot: `<epoch> <sequence> <check>`, space-padded, then a newline. */
const SLOT = 64;

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
  #fd: number | undefined;
  /** The slot the next save overwrites (the one not holding the highest fence); undefined until read. */
  #next: 0 | 1 | undefined;

  constructor(dir: string) {
    this.#file = join(dir, FENCE_FILE);
  }

  /** The stored fence; a missing file, or slots that fail their checks, is no fence. */
  load(): Fence {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.#file);
    } catch {
      this.#next = 0;
      return NO_FENCE;
    }
    const first = parseSlot(bytes.subarray(0, SLOT));
    const second = parseSlot(bytes.subarray(SLOT, 2 * SLOT));
    if (first === undefined && second === undefined) {
      this.#next = 0;
      return NO_FENCE;
    }
    if (second === undefined || (first !== undefined && !above(second, first))) {
      this.#next = 1;
      return first as Fence;
    }
    this.#next = 0;
    return second;
  }

  /** Stores `fence` (see the header for what survives what); throws on I/O errors, leaving the stored fence as it was. */
  save(fence: Fence): void {
    if (this.#next === undefined) this.load();
    if (this.#fd === undefined) {
      mkdirSync(dirname(this.#file), { recursive: true });
      this.#fd = openSync(this.#file, constants.O_RDWR | constants.O_CREAT, 0o600);
    }
    const slot = this.#next as 0 | 1;
    const record = Buffer.from(`${fence.epoch} ${fence.sequence} ${check(fence.epoch, fence.sequence)}`.padEnd(SLOT - 1, ' ') + '\n', 'latin1');
    const written = writeSync(this.#fd, record, 0, SLOT, slot * SLOT);
    if (written !== SLOT) throw new Error(`${this.#file}: wrote ${written} of ${SLOT} bytes`);
    this.#next = slot === 0 ? 1 : 0;
  }

  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}

function check(epoch: number, sequence: number): string {
  return sha256(`fence ${epoch} ${sequence}`, 'hex').slice(0, 16);
}

function parseSlot(bytes: Buffer): Fence | undefined {
  if (bytes.length !== SLOT) return undefined;
  const match = /^(\d{1,16}) (\d{1,16}) ([0-9a-f]{16}) *\n$/.exec(bytes.toString('latin1'));
  if (match === null) return undefined;
  const epoch = Number(match[1]);
  const sequence = Number(match[2]);
  if (!Number.isSafeInteger(epoch) || !Number.isSafeInteger(sequence) || check(epoch, sequence) !== match[3]) return undefined;
  return { epoch, sequence };
}

export function safeCount(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

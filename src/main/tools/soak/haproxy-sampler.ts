// HaproxySampler: what HAProxy's processes hold, polled once per sample period during a soak with
// `--haproxy`. The master CLI's `show proc` lists the master, the current workers and the old
// workers still draining; each one's resident memory comes from /proc/<pid>/status (VmRSS). A
// poll that fails (HAProxy killed and restarting) leaves no sample for that period.
import { readFile } from 'node:fs/promises';
import { every, type Clock } from '../../core/clock.js';
import type { ProcSnapshot } from '../../haproxy/show-proc.js';
import { round } from '../loadtest/units.js';

export interface HaproxySample {
  /** Current workers plus old workers still draining. */
  readonly workers: number;
  readonly oldWorkers: number;
  /** Resident memory of the master and every worker, summed. */
  readonly rssMb: number;
  readonly masterPid: number;
}

export interface HaproxySamplerOptions {
  readonly clock: Clock;
  readonly periodMs: number;
  readonly showProc: (signal: AbortSignal) => Promise<ProcSnapshot>;
  /** @default reads /proc/<pid>/status */
  readonly readStatus?: (pid: number) => Promise<string>;
}

/** VmRSS of a /proc/<pid>/status text, in kB; undefined when the line is missing. */
export function vmRssKb(status: string): number | undefined {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match === null ? undefined : Number(match[1]);
}

/** One sample from a `show proc` snapshot; processes gone before their status was read count 0. */
export async function haproxySample(snapshot: ProcSnapshot, readStatus: (pid: number) => Promise<string>): Promise<HaproxySample> {
  const pids = [snapshot.master.pid, ...snapshot.workers.map((w) => w.pid), ...snapshot.oldWorkers.map((w) => w.pid)];
  const kb = await Promise.all(pids.map(async (pid) => vmRssKb(await readStatus(pid).catch(() => '')) ?? 0));
  return {
    workers: snapshot.workers.length + snapshot.oldWorkers.length,
    oldWorkers: snapshot.oldWorkers.length,
    rssMb: round(kb.reduce((sum, k) => sum + k, 0) / 1024, 1),
    masterPid: snapshot.master.pid,
  };
}

export class HaproxySampler {
  /** The latest poll's sample; null when the latest poll failed or none finished yet. */
  latest: HaproxySample | null = null;
  peakRssMb = 0;
  peakWorkers = 0;
  readonly #options: HaproxySamplerOptions;
  readonly #abort = new AbortController();
  #polling: Promise<void> = Promise.resolve();
  #stopTimer: (() => void) | undefined;

  constructor(options: HaproxySamplerOptions) {
    this.#options = options;
  }

  start(): void {
    this.#poll();
    this.#stopTimer = every(this.#options.clock, this.#options.periodMs, () => this.#poll());
  }

  async stop(): Promise<void> {
    this.#stopTimer?.();
    this.#stopTimer = undefined;
    this.#abort.abort();
    await this.#polling;
  }

  #poll(): void {
    // One poll at a time: a slow answer skips a beat rather than piling up.
    this.#polling = this.#polling.then(async () => {
      if (this.#abort.signal.aborted) return;
      const readStatus = this.#options.readStatus ?? ((pid: number) => readFile(`/proc/${pid}/status`, 'utf8'));
      try {
        const sample = await haproxySample(await this.#options.showProc(this.#abort.signal), readStatus);
        this.latest = sample;
        this.peakRssMb = Math.max(this.peakRssMb, sample.rssMb);
        this.peakWorkers = Math.max(this.peakWorkers, sample.workers);
      } catch {
        this.latest = null;
      }
    });
  }
}

// FileSync: the files that serve now, written behind a runtime change instead of in front of the
// next one. HAProxy already runs the change (the Runtime API said so); its files only have to say
// the same before anything reads them again: a reload (which `settled()` first), a restart of the
// worker, a controller restart. One queue per target, so writes keep their order: one write at a
// time, behind it at most one waiting, and a newer render replaces the one waiting (only the
// newest files matter; the writer skips what did not change). A failed write is logged and told
// to its `failed` callback: the next write or reload writes the whole render again, and the drift
// monitor's forced reload rewrites them if nothing else comes (see `behind`). A render that
// replaces a waiting one it patches is written with the two patches chained (patch-chain.ts): a
// patch of what the target last wrote, so the write stays a patch instead of a whole one.
import type { Logger } from 'pino';
import { messageOf } from '../core/errors.js';
import type { DeployableRender, DeployTarget } from './deploy-target.js';
import { chainPatches } from './patch-chain.js';
import type { RuntimeRound } from './runtime-round.js';

export interface FileSyncOptions {
  readonly target: Pick<DeployTarget, 'writeFiles'>;
  readonly logger: Logger;
  /** Writes wait for the runtime changes in flight on the other instances (a fleet's Deployer). */
  readonly round?: RuntimeRound;
}

interface Write {
  readonly render: DeployableRender;
  /** What is sent: `render`, or `render` with its patch chained onto the patch of the write it replaced. */
  readonly sent: DeployableRender;
  readonly failed: ((error: string) => void) | undefined;
}

export class FileSync {
  readonly #target: Pick<DeployTarget, 'writeFiles'>;
  readonly #logger: Logger;
  readonly #round: RuntimeRound | undefined;
  /** Settles when the write in flight (and the one waiting) has ended; undefined while idle. */
  #running: Promise<void> | undefined;
  #waiting: Write | undefined;
  /** The newest render queued, and whether its files are on disk. */
  #newest: DeployableRender | undefined;
  #written = true;

  constructor(options: FileSyncOptions) {
    this.#target = options.target;
    this.#logger = options.logger;
    this.#round = options.round;
  }

  /** True while the newest render queued is not on disk (waiting, being written, or its write failed). */
  get behind(): boolean {
    return !this.#written;
  }

  /** Queues the serving files of `render` and returns at once; `failed` hears why its write failed (not called when a newer render replaced it). */
  queue(render: DeployableRender, failed?: (error: string) => void): void {
    this.#newest = render;
    this.#written = false;
    this.#waiting = { render, sent: chained(this.#waiting?.sent, render), failed };
    this.#running ??= this.#drain();
  }

  /** Runs a runtime change whose files this queue writes behind it, in the round (when given). */
  runtime<T>(apply: () => Promise<T>): Promise<T> {
    return this.#round === undefined ? apply() : this.#round.run(apply);
  }

  /** Resolves when every write queued so far has ended, failed or not. Never rejects. */
  async settled(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /**
   * The files of `render` were written another way (a reload wrote them): a failed write of an
   * older render no longer leaves the disk behind. Call it only after `settled()`.
   */
  wrote(render: DeployableRender): void {
    this.#newest = render;
    this.#written = true;
  }

  async #drain(): Promise<void> {
    // The first write starts in a later task: the step that queued it ends first.
    await Promise.resolve();
    try {
      for (;;) {
        // Behind the other instances' answers to the runtime change in flight (see runtime-round.ts).
        await this.#round?.quiet();
        const write = this.#take();
        if (write === undefined) break;
        try {
          await this.#target.writeFiles(write.sent, 'serving');
          if (this.#newest === write.render) this.#written = true;
        } catch (error) {
          const message = messageOf(error);
          this.#logger.error({ renderId: write.render.renderId, err: message }, 'writing the files of a runtime change failed; the next write or reload writes them again');
          write.failed?.(message);
        }
      }
    } finally {
      this.#running = undefined;
    }
  }

  #take(): Write | undefined {
    const write = this.#waiting;
    this.#waiting = undefined;
    return write;
  }
}

/** `render`, with its patch chained onto `replaced`'s when it patches that render (else as it is). */
function chained(replaced: DeployableRender | undefined, render: DeployableRender): DeployableRender {
  if (replaced?.patch === undefined || render.patch === undefined) return render;
  const patch = chainPatches(replaced.patch, replaced.renderId, render.patch);
  return patch === undefined ? render : { ...render, patch };
}

// SharedDiffs: one config diff, and one runtime view, per (deployed, newest) pair for all the
// instances of a Deployer. Every instance gets the same renders; those that run the same base (the
// same checksum: a render, or a runtime view of one, whose checksum names its content) would each
// compute the same diff on the main thread before the runtime change goes out, one after the
// other, and after a mixed change the same view (indexing both configs). The Deployer names the
// newest render (`rendered`); only pairs to it are kept, one per base, and dropped when a newer
// render comes. A pair to any other render (a revert, a render planned late) is computed for its
// caller alone. A diff kept is frozen: every instance reads the same object (renders and views are
// never changed once made).
import { diffDeployed, type ConfigDiff, type DiffOptions, type DiffShare } from './patch-diff.js';
import type { DeployableRender } from './deploy-target.js';
import type { RuntimeOp } from './runtime-ops.js';
import { applyRuntimeView } from './runtime-view.js';

/** Bases kept for the newest render; past this a pair is computed without being kept. */
const MAX_BASES = 64;

interface Kept {
  readonly diff: ConfigDiff;
  view?: DeployableRender;
}

export class SharedDiffs implements DiffShare {
  readonly #options: DiffOptions;
  /** The checksum of the newest render; pairs to it are kept. */
  #latest: string | undefined;
  /** The diffs to the newest render (and the views after their operations), by the base's checksum. */
  readonly #kept = new Map<string, Kept>();

  constructor(options: DiffOptions = {}) {
    this.#options = options;
  }

  /** The newest render is `checksum`: the pairs to an older one go. */
  rendered(checksum: string): void {
    if (checksum === this.#latest) return;
    this.#latest = checksum;
    this.#kept.clear();
  }

  /** Forgets everything (the end of a term). */
  clear(): void {
    this.#latest = undefined;
    this.#kept.clear();
  }

  /** The diff from `deployed` to `next`: computed once per base when `next` is the newest render. */
  of(deployed: DeployableRender, next: DeployableRender): ConfigDiff {
    if (next.checksum !== this.#latest) return diffDeployed(deployed, next, this.#options);
    const kept = this.#kept.get(deployed.checksum);
    if (kept !== undefined) return kept.diff;
    const diff = frozen(diffDeployed(deployed, next, this.#options));
    if (this.#kept.size < MAX_BASES) this.#kept.set(deployed.checksum, { diff });
    return diff;
  }

  /** `applyRuntimeView`: computed once per base when `ops` are those of the kept diff to the newest render. */
  viewOf(running: DeployableRender, next: DeployableRender, ops: readonly RuntimeOp[]): DeployableRender {
    const kept = next.checksum === this.#latest ? this.#kept.get(running.checksum) : undefined;
    if (kept === undefined || kept.diff.runtimeOps !== ops) return applyRuntimeView(running, next, ops, this.#options);
    kept.view ??= applyRuntimeView(running, next, ops, this.#options);
    return kept.view;
  }
}

/** `diff`, its lists and its operations frozen (an operation's own lists are read-only by type). */
function frozen(diff: ConfigDiff): ConfigDiff {
  for (const op of diff.runtimeOps) Object.freeze(op);
  Object.freeze(diff.runtimeOps);
  Object.freeze(diff.reasons);
  return Object.freeze(diff);
}

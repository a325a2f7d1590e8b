// SharedDiffs: one config diff per (deployed, newest) pair for all the instances of a Deployer.
// Every instance gets the same renders; those that run the same base (the same checksum: a
// render, or a runtime view of one, whose checksum names its content) would each compute the same
// diff on the main thread before the runtime change goes out, one after the other. The Deployer
// names the newest render (`rendered`); only pairs to it are kept, one per base, and dropped when a
// newer render comes. A pair to any other render (a revert, a render planned late) is computed for
// its caller alone. A diff kept is frozen: every instance reads the same object.
import { diffDeployed, type ConfigDiff, type DiffOptions, type DiffSource } from './patch-diff.js';
import type { DeployableRender } from './deploy-target.js';

/** Bases kept for the newest render; past this a pair is computed without being kept. */
const MAX_BASES = 64;

export class SharedDiffs {
  readonly #compute: DiffSource;
  /** The checksum of the newest render; pairs to it are kept. */
  #latest: string | undefined;
  /** The diffs to the newest render, by the base's checksum. */
  readonly #diffs = new Map<string, ConfigDiff>();

  /** @param compute the diff of one pair. @default diffDeployed with `options` */
  constructor(options: DiffOptions = {}, compute?: DiffSource) {
    this.#compute = compute ?? ((deployed, next) => diffDeployed(deployed, next, options));
  }

  /** The newest render is `checksum`: the pairs to an older one go. */
  rendered(checksum: string): void {
    if (checksum === this.#latest) return;
    this.#latest = checksum;
    this.#diffs.clear();
  }

  /** Forgets everything (the end of a term). */
  clear(): void {
    this.#latest = undefined;
    this.#diffs.clear();
  }

  /** The diff from `deployed` to `next`: computed once per base when `next` is the newest render. */
  of(deployed: DeployableRender, next: DeployableRender): ConfigDiff {
    if (next.checksum !== this.#latest) return this.#compute(deployed, next);
    const kept = this.#diffs.get(deployed.checksum);
    if (kept !== undefined) return kept;
    const diff = frozen(this.#compute(deployed, next));
    if (this.#diffs.size < MAX_BASES) this.#diffs.set(deployed.checksum, diff);
    return diff;
  }
}

/** `diff`, its lists and its operations frozen (an operation's own lists are read-only by type). */
function frozen(diff: ConfigDiff): ConfigDiff {
  for (const op of diff.runtimeOps) Object.freeze(op);
  Object.freeze(diff.runtimeOps);
  Object.freeze(diff.reasons);
  return Object.freeze(diff);
}

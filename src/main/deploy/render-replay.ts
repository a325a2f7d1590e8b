// RenderReplay: what an instance that joins the fleet during a term must be told to catch up:
// the term's renders and verdicts from the newest render the gate did not refuse onwards, in
// order. Fed to a fresh InstanceDeployer they give it a full sync of the newest deployable render
// under the same rules as the others: a refused render is never sent, and while the gate is
// latched the last good render is what it gets. Bounded: older entries are long superseded, and
// each render holds a whole config.
import type { DeployerInput } from './instance-deployer.js';

/** Entries kept at most; the oldest go first (a refusal streak that long leaves nothing sendable). */
const MAX_ENTRIES = 64;

export class RenderReplay {
  #entries: DeployerInput[] = [];

  /** Records a term event (drift triggers are not replayed: a joining instance gets a full sync anyway). */
  record(event: DeployerInput): void {
    if (event.type === 'drift.prevention.triggered') return;
    this.#entries.push(event);
    if (event.type === 'rendergate.completed' && !event.refused) {
      // Everything before this render is superseded by a render that may be deployed.
      const at = this.#entries.findIndex((e) => e.type === 'template.rendered' && e.renderId === event.renderId);
      if (at > 0) this.#entries = this.#entries.slice(at);
    }
    if (this.#entries.length > MAX_ENTRIES) this.#entries.splice(0, this.#entries.length - MAX_ENTRIES);
  }

  /** The events to replay, oldest first. */
  events(): readonly DeployerInput[] {
    return [...this.#entries];
  }

  clear(): void {
    this.#entries = [];
  }
}

// Leader election behind one interface. Every replica watches and keeps its stores; only the
// leader runs the leader-only components (Coordinator, gate, deployer, output). An elector
// campaigns until its signal aborts and tells the engine when leadership starts and ends; the
// engine turns that into `leader.became` / `leader.lost` and a term AbortSignal.

export interface LeadershipCallbacks {
  /** This replica leads from now on, until `onLostLeadership`. */
  onBecameLeader(): void;
  /** Leadership ended: a renewal failed past the deadline, another replica took over, or stop. */
  onLostLeadership(reason: string): void;
}

export interface Elector {
  /** This replica's identity in the election (and in `leader.*` events). */
  readonly identity: string;
  /**
   * Campaigns until `signal` aborts. A clean stop while leading calls `onLostLeadership` and
   * releases leadership (a Lease's holder is cleared) before the promise resolves.
   */
  run(callbacks: LeadershipCallbacks, signal: AbortSignal): Promise<void>;
  /**
   * The epoch of the current term, stamped on fleet applies: it must grow with every term across
   * replicas (a Lease's leaseTransitions). Without it the epoch is 0: one replica, one epoch.
   */
  epoch?(): number;
}

/** One replica, always the leader: the default without `--leader-elect`. */
export class SingleReplicaElector implements Elector {
  constructor(readonly identity: string = 'single-replica') {}

  async run(callbacks: LeadershipCallbacks, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    callbacks.onBecameLeader();
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    callbacks.onLostLeadership('stopping');
  }
}

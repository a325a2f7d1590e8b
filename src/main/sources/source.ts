// The contract between where objects come from (a manifest directory, a Kubernetes API server,
// a synthetic generator) and the watchers that put them into the stores. A source lists every
// watched resource, says when each initial list is complete, then reports changes until its
// signal aborts. Sources never touch stores or the bus: watchers do (see watchers.ts).
import type { KubeObject, StoreDefinition } from '../../worker/protocol.js';

/** What a source reports to; implemented by the watchers. Resources are named by store. */
export interface SourceSink {
  /** An object was added or changed. The sink may keep it: the source must not mutate it later. */
  upsert(resource: string, object: KubeObject): void;
  /** The object with this `namespace/name` key (`name` when cluster-scoped) is gone. */
  delete(resource: string, key: string): void;
  /** The resource's initial list has been reported in full. Called once per resource. */
  synced(resource: string): void;
  /**
   * Something the source recovered from or routed around without changing what it reported:
   * a manifest that does not parse, a watch that dropped and is being restarted.
   */
  problem(resource: string | undefined, message: string): void;
}

export interface Source {
  /** For logs and errors: `manifests`, `kubernetes`, `synthetic`. */
  readonly kind: string;
  /**
   * Lists, then watches, every resource in `resources` until `signal` aborts, reporting to `sink`.
   * Resolves once everything the source opened is closed. Rejects only when the source cannot
   * work at all (a directory that does not exist, a kubeconfig that cannot be read).
   */
  run(resources: readonly StoreDefinition[], sink: SourceSink, signal: AbortSignal): Promise<void>;
}

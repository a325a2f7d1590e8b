// PodFleet: keeps the Deployer's instance set equal to the Pods of the `haproxy-pods` store that
// are targets (see haproxy-pods.ts): at the start of every term, and after every change of that
// store (`resource.index.updated`, which never triggers a render). A new target gets its
// AgentTarget from the fleet's factory and, through Deployer.setTargets, a full sync; a Pod that
// is gone, terminating or no longer Running is dropped and gets no more applies.
// Subscribes (in start, leader-only): resource.index.updated (haproxy-pods only)
import type { Logger } from 'pino';
import type { EventBus } from '../bus/event-bus.js';
import { deferred } from '../core/async.js';
import type { DeployTarget } from '../deploy/deploy-target.js';
import type { FleetMember } from '../deploy/deployer.js';
import type { ControllerEvent } from '../events/events.js';
import type { KubeObject } from '../../worker/protocol.js';
import type { AgentEndpoint } from './agent-client.js';
import { HAPROXY_PODS_STORE, podTarget } from './haproxy-pods.js';

/** Instances deployed to at most; Pods beyond it (by id order) wait and are logged. */
export const MAX_POD_TARGETS = 1024;

export interface PodFleetOptions {
  readonly bus: EventBus<ControllerEvent>;
  /** The Pods of the `haproxy-pods` store now. */
  readonly pods: () => Iterable<KubeObject>;
  readonly deployer: { setTargets(members: readonly FleetMember[]): void };
  /** The agents' port (`--agent-port`). */
  readonly agentPort: number;
  readonly createTarget: (endpoint: AgentEndpoint) => DeployTarget;
  readonly logger: Logger;
}

export class PodFleet {
  readonly #options: PodFleetOptions;
  readonly #logger: Logger;
  /** The target of every id deployed to, kept while its Pod stays a target. */
  readonly #targets = new Map<string, DeployTarget>();
  #ready = deferred<void>();

  constructor(options: PodFleetOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'pod-fleet' });
  }

  /** The ids deployed to (`namespace/name@podIP`), in order. */
  get targetIds(): readonly string[] {
    return [...this.#targets.keys()];
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  async start(term: AbortSignal): Promise<void> {
    // A sync reads the whole store: a pods update supersedes anything queued, other stores' updates are noise.
    const isPods = (event: ControllerEvent): boolean => event.type === 'resource.index.updated' && event.resourceTypeName === HAPROXY_PODS_STORE;
    const inbox = this.#options.bus.subscribe('pod-fleet', {
      types: ['resource.index.updated'],
      leaderOnly: true,
      bufferSize: 16,
      merge: (last, incoming) => (isPods(incoming) ? 'replace' : isPods(last) ? 'discard' : 'replace'),
    });
    try {
      this.sync();
      this.#ready.resolve();
      for (;;) {
        const event = await inbox.next(term);
        if (event === undefined) break;
        if (isPods(event)) this.sync();
      }
    } finally {
      inbox.close();
      this.#ready = deferred<void>();
    }
  }

  /** Makes the Deployer's instances the Pods that are targets now. */
  sync(): void {
    const wanted = new Map<string, AgentEndpoint>();
    for (const pod of this.#options.pods()) {
      const target = podTarget(pod, this.#options.agentPort);
      if (target !== undefined) wanted.set(target.id, target.endpoint);
    }
    const ids = [...wanted.keys()].sort();
    if (ids.length > MAX_POD_TARGETS) this.#logger.warn({ pods: ids.length, limit: MAX_POD_TARGETS }, 'more HAProxy pods than the fleet limit; the rest wait');
    const kept = new Set(ids.slice(0, MAX_POD_TARGETS));
    const removed = [...this.#targets.keys()].filter((id) => !kept.has(id));
    for (const id of removed) this.#targets.delete(id);
    const added: string[] = [];
    for (const id of kept) {
      if (this.#targets.has(id)) continue;
      this.#targets.set(id, this.#options.createTarget(wanted.get(id) as AgentEndpoint));
      added.push(id);
    }
    if (added.length === 0 && removed.length === 0) return;
    this.#logger.info({ added, removed, instances: this.#targets.size }, 'HAProxy pods changed');
    this.#options.deployer.setTargets([...this.#targets].map(([id, target]) => ({ id, target })));
  }
}

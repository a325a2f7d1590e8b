// Fleet discovery for `run --haproxy-pods`: the `haproxy-pods` store added to the watched
// resources (with its own check), and the PodFleet that turns its Pods into the Deployer's
// instances. Only with a Kubernetes source: a manifest directory has no Pods that run.
import type { Logger } from 'pino';
import type { TemplateSetSource } from '../../worker/protocol.js';
import type { Deployer } from '../deploy/deployer.js';
import type { Engine } from '../engine.js';
import type { AgentEndpoint } from '../fleet/agent-client.js';
import type { AgentTarget } from '../fleet/agent-target.js';
import type { FleetOptions } from '../fleet/fleet-targets.js';
import { checkHaproxyPod, HAPROXY_PODS_STORE, haproxyPodsDefinition } from '../fleet/haproxy-pods.js';
import { PodFleet } from '../fleet/pod-fleet.js';
import type { StoreCheck } from '../sources/watcher.js';

type Pods = NonNullable<FleetOptions['pods']>;

/** The template set with the `haproxy-pods` store watched too, and that store's check. */
export function withHaproxyPods(templateSet: TemplateSetSource, pods: Pods): { templateSet: TemplateSetSource; storeChecks: Record<string, StoreCheck> } {
  if (templateSet.stores.some((store) => store.name === HAPROXY_PODS_STORE)) {
    throw new TypeError(`--haproxy-pods: the template set already watches a store named ${HAPROXY_PODS_STORE}; rename it`);
  }
  const definition = haproxyPodsDefinition(pods.selector, pods.namespace);
  return { templateSet: { ...templateSet, stores: [...templateSet.stores, definition] }, storeChecks: { [HAPROXY_PODS_STORE]: checkHaproxyPod } };
}

/** Adds the PodFleet that keeps `deployer`'s instances equal to the target Pods (before the deployer starts). */
export function attachPodFleet(engine: Engine, deployer: Deployer, pods: Pods, createTarget: (endpoint: AgentEndpoint) => AgentTarget, logger: Logger): PodFleet {
  const fleet = new PodFleet({
    bus: engine.bus,
    pods: () => engine.stores.store(HAPROXY_PODS_STORE).list(),
    deployer,
    agentPort: pods.port,
    createTarget,
    logger,
  });
  engine.addLeaderComponent(fleet);
  return fleet;
}

// Kubernetes-native feedback for `run`: the leader-only components that write Ingress status
// addresses (`--publish-service` / `--publish-address`), Gateway API status (when the template
// set watches Gateways) and Events on rejected objects, against the API server the controller
// watches. Assembled only with a Kubernetes source.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Engine } from '../engine.js';
import { KubeEventRecorder } from '../kube-events/event-recorder.js';
import { kubeEventApi } from '../kube-events/kube-event-api.js';
import { IngressStatus } from '../status/ingress-status.js';
import { kubeIngressStatusApi } from '../status/ingress-status-api.js';
import { GatewayStatus } from '../status/gateway-status.js';
import { kubeGatewayStatusApi } from '../status/gateway-status-api.js';
import { parsePublishAddresses, parseServiceRef } from '../status/load-balancer-addresses.js';

export interface FeedbackOptions {
  /** `NS/NAME`: publish that Service's addresses in the status of the served Ingresses. */
  readonly publishService?: string;
  /** `A[,B…]`: publish these IPs or host names instead. */
  readonly publishAddress?: string;
  /** Ingress status writes per second. @default 20 */
  readonly statusWritesPerSecond?: number;
  /**
   * Clear the published addresses when the controller stops for good. @default true
   * A replica cannot tell whether it is the last one: with leader election the leader clears when
   * it releases the Lease on SIGTERM, and a replica that remains and takes over sees the cleared
   * status in its store and publishes again (within its re-check interval, 5 s). During a rolling
   * update the addresses can so be missing for a few seconds.
   */
  readonly updateStatusOnShutdown?: boolean;
  /** Write Kubernetes Events for rejected objects. @default true */
  readonly events?: boolean;
  /** The template values `gatewayControllerName` and `bindAddress`, for Gateway API status. */
  readonly gateway?: { readonly controllerName?: string; readonly bindAddress?: string };
}

type Attached = { status?: IngressStatus; gatewayStatus?: GatewayStatus; events?: KubeEventRecorder };

/** Throws a TypeError naming the flag when the options are contradictory or malformed. */
export function checkFeedbackOptions(options: FeedbackOptions): void {
  if (options.publishService !== undefined && options.publishAddress !== undefined) throw new TypeError('--publish-service and --publish-address exclude each other');
  if (options.publishService !== undefined) parseServiceRef(options.publishService);
  if (options.publishAddress !== undefined) parsePublishAddresses(options.publishAddress);
}

/** The feedback components, added to the engine as leader components. */
export function attachFeedback(engine: Engine, kubeConfig: KubeConfig, options: FeedbackOptions, identity: string): Attached {
  checkFeedbackOptions(options);
  const { bus, stores, clock, logger } = engine;
  const attached: Attached = {};
  const publish =
    options.publishService !== undefined
      ? { service: parseServiceRef(options.publishService), kubeConfig }
      : options.publishAddress !== undefined
        ? { addresses: parsePublishAddresses(options.publishAddress) }
        : undefined;
  if (publish !== undefined) {
    attached.status = new IngressStatus({
      bus,
      stores,
      api: kubeIngressStatusApi(kubeConfig),
      publish,
      clock,
      logger,
      stopping: () => engine.stopping,
      ...(options.statusWritesPerSecond === undefined ? {} : { writesPerSecond: options.statusWritesPerSecond }),
      ...(options.updateStatusOnShutdown === undefined ? {} : { updateStatusOnShutdown: options.updateStatusOnShutdown }),
    });
    engine.addLeaderComponent(attached.status);
  }
  if (stores.has('gateways')) {
    attached.gatewayStatus = new GatewayStatus({
      bus,
      stores,
      api: kubeGatewayStatusApi(kubeConfig),
      clock,
      logger,
      ...(options.gateway?.controllerName === undefined ? {} : { controllerName: options.gateway.controllerName }),
      ...(options.gateway?.bindAddress === undefined ? {} : { bindAddress: options.gateway.bindAddress }),
      ...(options.publishAddress === undefined ? {} : { publishedAddresses: parsePublishAddresses(options.publishAddress) }),
      ...(options.statusWritesPerSecond === undefined ? {} : { writesPerSecond: options.statusWritesPerSecond }),
      ...(options.updateStatusOnShutdown === undefined ? {} : { updateStatusOnShutdown: options.updateStatusOnShutdown }),
      stopping: () => engine.stopping,
    });
    engine.addLeaderComponent(attached.gatewayStatus);
  }
  if (options.events ?? true) {
    attached.events = new KubeEventRecorder({ bus, stores, api: kubeEventApi(kubeConfig), clock, logger, identity });
    engine.addLeaderComponent(attached.events);
  }
  return attached;
}

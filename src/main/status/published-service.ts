// PublishedService: follows the `--publish-service NS/NAME` Service through the Kubernetes
// source's ResourceInformer (list, watch, relist, backoff), restricted to that one name. It is
// no store: nothing it sees reaches the stores or the bus, so a change of the Service never
// triggers a render; it only hands the Service's addresses to the status writer. While the Service
// does not exist it warns, at most once a minute, and reports no addresses (no status is written).
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject, StoreDefinition } from '../../worker/protocol.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { BackoffOptions } from '../sources/kubernetes/backoff.js';
import { ResourceInformer } from '../sources/kubernetes/resource-informer.js';
import { resourceLocation } from '../sources/kubernetes/resource-paths.js';
import type { SourceSink } from '../sources/source.js';
import { serviceAddresses, type LoadBalancerIngress } from './load-balancer-addresses.js';

/** A missing Service is warned about again after this long. */
export const MISSING_SERVICE_WARNING_MS = 60_000;

export interface PublishedServiceOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The Service's addresses, or undefined while it does not exist. Called on every change. */
  readonly onAddresses: (addresses: readonly LoadBalancerIngress[] | undefined) => void;
  readonly backoff?: BackoffOptions;
}

export class PublishedService {
  readonly #options: PublishedServiceOptions;
  readonly #logger: Logger;
  #service: KubeObject | undefined;
  #synced = false;
  #warnTimer: TimerHandle | undefined;
  /** Warnings given about the missing Service. */
  missingWarnings = 0;

  constructor(options: PublishedServiceOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'publish-service', service: `${options.namespace}/${options.name}` });
  }

  /** Watches the Service until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { namespace, name } = this.#options;
    const definition: StoreDefinition = { name: 'publish-service', apiVersion: 'v1', kind: 'Service', indexBy: [], fieldSelector: `metadata.name=${name}` };
    const informer = new ResourceInformer({
      kubeConfig: this.#options.kubeConfig,
      definition,
      location: resourceLocation(definition, namespace),
      sink: this.#sink(),
      clock: this.#options.clock,
      logger: this.#logger,
      ...(this.#options.backoff === undefined ? {} : { backoff: this.#options.backoff }),
    });
    try {
      await informer.run(signal);
    } finally {
      this.#options.clock.clearTimeout(this.#warnTimer);
      this.#warnTimer = undefined;
    }
  }

  #sink(): SourceSink {
    const { name } = this.#options;
    return {
      upsert: (_resource, object) => {
        if (object.metadata.name !== name) return;
        this.#service = object;
        this.#options.onAddresses(serviceAddresses(object));
      },
      delete: (_resource, key) => {
        if (key !== `${this.#options.namespace}/${name}` && key !== name) return;
        this.#service = undefined;
        this.#options.onAddresses(undefined);
        if (this.#synced) this.#warnMissing();
      },
      synced: () => {
        this.#synced = true;
        if (this.#service === undefined) {
          this.#options.onAddresses(undefined);
          this.#warnMissing();
        }
      },
      problem: (_resource, message) => this.#logger.warn(message),
    };
  }

  /** Warns now, unless it did less than a minute ago; the timer warns again while it is missing. */
  #warnMissing(): void {
    if (this.#warnTimer !== undefined) return;
    this.missingWarnings++;
    this.#logger.warn('the --publish-service Service does not exist; no Ingress status is written until it does');
    this.#warnTimer = this.#options.clock.setTimeout(
      () => {
        this.#warnTimer = undefined;
        if (this.#service === undefined) this.#warnMissing();
      },
      MISSING_SERVICE_WARNING_MS,
      { unref: true },
    );
  }
}

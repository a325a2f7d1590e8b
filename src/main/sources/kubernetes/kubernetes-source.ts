// KubernetesSource: a Kubernetes API server as a Source. One ResourceInformer per watched
// resource lists it, reports `synced` once the first list is in, then watches it, turning adds
// and updates into upserts and deletes (relist deletes included) into deletes by `ns/name`.
// Lost watches, 410 Gone and failing lists are recovered with a capped, jittered backoff and
// reported to the sink as problems; nothing of that ends `run`, which resolves once the signal
// aborted and every request it opened is closed.
import type { KubeConfig } from '@kubernetes/client-node';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { StoreDefinition } from '../../../worker/protocol.js';
import { systemClock, type Clock } from '../../core/clock.js';
import { defaultLogger } from '../../core/logger.js';
import type { Source, SourceSink } from '../source.js';
import type { BackoffOptions } from './backoff.js';
import { ResourceInformer } from './resource-informer.js';
import { resourceLocation } from './resource-paths.js';

export interface KubernetesSourceOptions {
  /** From `loadKubeConfig(path)` or `loadKubeConfig('in-cluster')`. */
  readonly kubeConfig: KubeConfig;
  /**
   * Watch namespaced resources in this namespace only (the list and watch paths are namespaced,
   * so RBAC in that namespace suffices). Cluster-scoped resources ignore it. @default all
   */
  readonly namespace?: string;
  /** @default systemClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Reconnect pacing. @default 100 ms doubling to 30 s, 20 % jitter */
  readonly backoff?: BackoffOptions;
  /** Objects per LIST page. @default 500 */
  readonly pageSize?: number;
}

export class KubernetesSource implements Source {
  readonly kind = 'kubernetes';
  readonly #options: KubernetesSourceOptions;
  readonly #logger: Logger;

  constructor(options: KubernetesSourceOptions) {
    if (options.namespace !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(options.namespace)) {
      throw new TypeError(`namespace must be a DNS label, got ${JSON.stringify(options.namespace)}`);
    }
    this.#options = options;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'kubernetes-source' });
  }

  async run(resources: readonly StoreDefinition[], sink: SourceSink, signal: AbortSignal): Promise<void> {
    const { kubeConfig, namespace } = this.#options;
    const cluster = kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    // Resolved before anything is opened: a definition no server could serve fails `run` at once.
    const informers = resources.map(
      (definition) =>
        new ResourceInformer({
          kubeConfig,
          definition,
          location: resourceLocation(definition, definition.namespace ?? namespace),
          sink,
          clock: this.#options.clock ?? systemClock,
          logger: this.#logger,
          ...(this.#options.backoff === undefined ? {} : { backoff: this.#options.backoff }),
          ...(this.#options.pageSize === undefined ? {} : { pageSize: this.#options.pageSize }),
        }),
    );
    if (signal.aborted) return;
    this.#logger.info({ server: cluster.server, namespace: namespace ?? '(all)', resources: resources.map((r) => r.name) }, 'watching the API server');
    // One listener on the caller's signal. The informers listen on this one, a few each (run,
    // retry timers, requests in flight): that grows with the watched resources and is no leak,
    // so Node's listener-leak warning (at 11) is switched off for it.
    const stop = new AbortController();
    setMaxListeners(0, stop.signal);
    const onAbort = (): void => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.all(informers.map((informer) => informer.run(stop.signal)));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/** The Source for `run --kubeconfig FILE` / `--in-cluster`. */
export function kubernetesSource(options: KubernetesSourceOptions): KubernetesSource {
  return new KubernetesSource(options);
}

// IngressStatus (leader only): publishes load-balancer addresses in the status of the Ingresses
// each render serves (template.rendered's `servedIngresses`), through an IngressStatusWriter.
// The addresses are fixed (`--publish-address`) or follow a Service (`--publish-service`, see
// published-service.ts). Ingress changes that trigger no render (status written by another
// replica) are picked up from the store's change log. When the controller stops for good (`updateStatusOnShutdown`, and the
// engine is stopping rather than handing leadership over), it clears the addresses it published,
// within a short deadline. It never delays a render or a deploy: it only reads rendered events.
// Subscribes (in start, leader-only): template.rendered
// Publishes: nothing (writes Ingress status on the API server)
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { EventBus } from '../bus/event-bus.js';
import { deferred, type Deferred } from '../core/async.js';
import { every, type Clock } from '../core/clock.js';
import type { ControllerEvent } from '../events/events.js';
import type { StoreProvider } from '../stores/store-provider.js';
import type { IngressStatusApi } from './ingress-status-api.js';
import { IngressStatusWriter, type StatusWriterStats } from './ingress-status-writer.js';
import type { LoadBalancerIngress } from './load-balancer-addresses.js';
import { PublishedService } from './published-service.js';

export type PublishedAddresses =
  | { readonly addresses: readonly LoadBalancerIngress[] }
  | { readonly service: { readonly namespace: string; readonly name: string }; readonly kubeConfig: KubeConfig };

export interface IngressStatusOptions {
  readonly bus: EventBus<ControllerEvent>;
  readonly stores: StoreProvider;
  readonly api: IngressStatusApi;
  readonly publish: PublishedAddresses;
  readonly clock: Clock;
  readonly logger: Logger;
  /** @default 20 */
  readonly writesPerSecond?: number;
  /** Clear the published addresses when the controller stops for good. @default true */
  readonly updateStatusOnShutdown?: boolean;
  /** Whether the controller is stopping (not merely losing leadership). @default never */
  readonly stopping?: () => boolean;
  /** The store of Ingresses. @default 'ingresses' */
  readonly ingressStore?: string;
  /** Most time spent clearing on shutdown. @default 3000 */
  readonly shutdownClearMs?: number;
  /** How often Ingress changes in the store (status written by another replica) are looked at between renders. @default 5000 */
  readonly recheckMs?: number;
}

export class IngressStatus {
  readonly #options: IngressStatusOptions;
  readonly #logger: Logger;
  #ready: Deferred<void> = deferred<void>();
  #writer: IngressStatusWriter | undefined;
  /** Totals of the terms that ended (each term has a writer of its own). */
  #ended = { writes: 0, failures: 0, forbidden: 0 };
  #cleared = 0;

  constructor(options: IngressStatusOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'ingress-status' });
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  /** Totals over every term; `queued` is the current term's. */
  get stats(): StatusWriterStats & { readonly cleared: number } {
    const current = this.#writer?.stats ?? { writes: 0, failures: 0, forbidden: 0, queued: 0 };
    return {
      writes: this.#ended.writes + current.writes,
      failures: this.#ended.failures + current.failures,
      forbidden: this.#ended.forbidden + current.forbidden,
      queued: current.queued,
      cleared: this.#cleared,
    };
  }

  async start(term: AbortSignal): Promise<void> {
    const { bus, stores, clock } = this.#options;
    const storeName = this.#options.ingressStore ?? 'ingresses';
    const ingresses = () => (stores.has(storeName) ? stores.store(storeName) : undefined);
    const writer = new IngressStatusWriter({
      api: this.#options.api,
      lookup: (key) => ingresses()?.get(key),
      keys: () => ingresses()?.keys() ?? [],
      clock,
      logger: this.#logger,
      ...(this.#options.writesPerSecond === undefined ? {} : { writesPerSecond: this.#options.writesPerSecond }),
    });
    this.#writer = writer;
    const subscription = bus.subscribe('ingress-status', { types: ['template.rendered'], leaderOnly: true, bufferSize: 4, merge: () => 'replace' });
    const running: Promise<void>[] = [writer.run(term)];
    const publish = this.#options.publish;
    if ('addresses' in publish) {
      writer.setAddresses(publish.addresses);
    } else {
      const service = new PublishedService({ kubeConfig: publish.kubeConfig, ...publish.service, clock, logger: this.#logger, onAddresses: (a) => writer.setAddresses(a) });
      running.push(service.run(term));
    }
    // Status changes reach the store without a render (see watcher.ts); they are looked at after
    // each render and every few seconds, through the store's change log: O(changes).
    let seen = stores.version;
    const recheck = (): void => {
      const changes = stores.changesSince(seen);
      seen = changes.toVersion;
      if (changes.kind === 'full') writer.recheck(ingresses()?.keys() ?? []);
      else writer.recheck(changes.changes.filter((change) => change.store === storeName).map((change) => change.key));
    };
    const stopTicking = every(clock, this.#options.recheckMs ?? 5000, recheck, { unref: true });
    this.#ready.resolve();
    try {
      for (;;) {
        const render = await subscription.next(term);
        if (render === undefined) break;
        if (render.servedIngresses !== undefined) writer.setServed(render.servedIngresses);
        recheck();
      }
    } finally {
      stopTicking();
      subscription.close();
      this.#ready = deferred<void>();
      await Promise.allSettled(running);
      if ((this.#options.updateStatusOnShutdown ?? true) && (this.#options.stopping?.() ?? false)) await this.#clear(writer);
      const { writes, failures, forbidden } = writer.stats;
      this.#ended = { writes: this.#ended.writes + writes, failures: this.#ended.failures + failures, forbidden: this.#ended.forbidden + forbidden };
      this.#writer = undefined;
    }
  }

  async #clear(writer: IngressStatusWriter): Promise<void> {
    const deadline = new AbortController();
    const timer = this.#options.clock.setTimeout(() => deadline.abort(new Error('shutdown deadline')), this.#options.shutdownClearMs ?? 3000, { unref: true });
    try {
      this.#cleared = await writer.clearAll(deadline.signal);
      this.#logger.info({ cleared: this.#cleared, timedOut: deadline.signal.aborted }, 'stopping: published Ingress addresses cleared');
    } finally {
      this.#options.clock.clearTimeout(timer);
    }
  }
}

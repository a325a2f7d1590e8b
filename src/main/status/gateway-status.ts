// GatewayStatus (leader only): writes the Gateway API status of each render (template.rendered's
// `gatewayStatus`) through a GatewayStatusWriter, and marks Gateways Programmed once a deployment
// of a render that programmed them succeeded (deployment.completed; in a fleet, once no reachable
// instance is behind it). Changes of these objects
// that trigger no render (status written by another controller or replica, see watcher.ts) are
// picked up from the store's change log. It never delays a render or a deploy: it only reads
// events. When the controller stops for good (`updateStatusOnShutdown`, and the engine is stopping
// rather than handing leadership over), its Gateways become Programmed=False, Pending, without
// addresses, within a short deadline; a replica that takes over programs them again.
// Subscribes (in start, leader-only): template.rendered, deployment.completed
// Publishes: nothing (writes status on the API server)
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { KubeObject, Rejection } from '../../worker/protocol.js';
import type { EventBus } from '../bus/event-bus.js';
import { deferred, type Deferred } from '../core/async.js';
import { every, type Clock } from '../core/clock.js';
import type { ControllerEvent, EventOf } from '../events/events.js';
import type { StoreProvider } from '../stores/store-provider.js';
import type { GatewayAddress } from './gateway-status-body.js';
import type { GatewayStatusApi, GatewayStatusKind } from './gateway-status-api.js';
import { GatewayStatusWriter } from './gateway-status-writer.js';
import type { LoadBalancerIngress } from './load-balancer-addresses.js';
import type { StatusWriterStats } from './paced-status-writer.js';

export interface GatewayStatusOptions {
  readonly bus: EventBus<ControllerEvent>;
  readonly stores: StoreProvider;
  readonly api: GatewayStatusApi;
  readonly clock: Clock;
  readonly logger: Logger;
  /** @default 'haptic-reconciler.io/gateway-controller' */
  readonly controllerName?: string;
  /** Where listeners bind when a Gateway names no address (the template value `bindAddress`). @default '*' */
  readonly bindAddress?: string;
  /** Addresses published for a wildcard bind (`--publish-address`). */
  readonly publishedAddresses?: readonly LoadBalancerIngress[];
  /** @default 20 */
  readonly writesPerSecond?: number;
  /** How often changes in the store are looked at between renders. @default 5000 */
  readonly recheckMs?: number;
  /** Withdraw Programmed when the controller stops for good. @default true */
  readonly updateStatusOnShutdown?: boolean;
  /** Whether the controller is stopping (not merely losing leadership). @default never */
  readonly stopping?: () => boolean;
  /** Most time spent withdrawing on shutdown. @default 3000 */
  readonly shutdownMs?: number;
}

/** The stores of the kinds whose status is written. */
const STORES: Readonly<Record<GatewayStatusKind, string>> = { GatewayClass: 'gatewayclasses', Gateway: 'gateways', HTTPRoute: 'httproutes' };
const WILDCARD = new Set(['', '*', '0.0.0.0', '::']);

export class GatewayStatus {
  readonly #options: GatewayStatusOptions;
  readonly #logger: Logger;
  #ready: Deferred<void> = deferred<void>();
  #writer: GatewayStatusWriter | undefined;
  #ended = { writes: 0, failures: 0, forbidden: 0 };
  /** Gateways set to Programmed=False when the controller stopped for good. */
  withdrawn = 0;

  constructor(options: GatewayStatusOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'gateway-status' });
  }

  whenReady(): Promise<void> {
    return this.#ready.promise;
  }

  /** Totals over every term; `queued` is the current term's. */
  get stats(): StatusWriterStats {
    const current = this.#writer?.stats ?? { writes: 0, failures: 0, forbidden: 0, queued: 0 };
    return { writes: this.#ended.writes + current.writes, failures: this.#ended.failures + current.failures, forbidden: this.#ended.forbidden + current.forbidden, queued: current.queued };
  }

  async start(term: AbortSignal): Promise<void> {
    const { bus, stores, clock } = this.#options;
    const storeOf = (kind: GatewayStatusKind) => (stores.has(STORES[kind]) ? stores.store(STORES[kind]) : undefined);
    const writer = new GatewayStatusWriter({
      api: this.#options.api,
      lookup: (kind, key) => storeOf(kind)?.get(key),
      routeKeys: () => storeOf('HTTPRoute')?.keys() ?? [],
      controllerName: this.#options.controllerName ?? 'haptic-reconciler.io/gateway-controller',
      addresses: gatewayAddresses(this.#options.bindAddress ?? '*', this.#options.publishedAddresses ?? []),
      clock,
      logger: this.#logger,
      ...(this.#options.writesPerSecond === undefined ? {} : { writesPerSecond: this.#options.writesPerSecond }),
    });
    this.#writer = writer;
    const subscription = bus.subscribe('gateway-status', {
      types: ['template.rendered', 'deployment.completed'],
      leaderOnly: true,
      bufferSize: 64,
      merge: (last, incoming) => (last.type === 'template.rendered' && incoming.type === 'template.rendered' ? 'replace' : 'append'),
    });
    const running = writer.run(term);
    const kinds = Object.entries(STORES) as [GatewayStatusKind, string][];
    let seen = stores.version;
    const recheck = (): void => {
      const changes = stores.changesSince(seen);
      seen = changes.toVersion;
      for (const [kind, store] of kinds) {
        if (changes.kind === 'full') writer.recheck(kind, storeOf(kind)?.keys() ?? []);
        else writer.recheck(kind, changes.changes.filter((change) => change.store === store).map((change) => change.key));
      }
    };
    const stopTicking = every(clock, this.#options.recheckMs ?? 5000, recheck, { unref: true });
    this.#ready.resolve();
    try {
      for (;;) {
        const event = await subscription.next(term);
        if (event === undefined) break;
        if (event.type === 'template.rendered') {
          recheck();
          writer.setReport(event.gatewayStatus, event.checksum, rejectedRoutes(event.rejections));
        } else if (event.type === 'deployment.completed' && fleetServes(event)) {
          writer.deployed(event.checksum);
        }
      }
    } finally {
      stopTicking();
      subscription.close();
      this.#ready = deferred<void>();
      await running.catch(() => undefined);
      if ((this.#options.updateStatusOnShutdown ?? true) && (this.#options.stopping?.() ?? false)) await this.#withdraw(writer);
      const { writes, failures, forbidden } = writer.stats;
      this.#ended = { writes: this.#ended.writes + writes, failures: this.#ended.failures + failures, forbidden: this.#ended.forbidden + forbidden };
      this.#writer = undefined;
    }
  }

  async #withdraw(writer: GatewayStatusWriter): Promise<void> {
    const { clock } = this.#options;
    const deadline = new AbortController();
    const timer = clock.setTimeout(() => deadline.abort(new Error('shutdown deadline')), this.#options.shutdownMs ?? 3000, { unref: true });
    try {
      this.withdrawn = await writer.withdraw(deadline.signal);
      this.#logger.info({ gateways: this.withdrawn, timedOut: deadline.signal.aborted }, 'stopping: Gateways no longer Programmed');
    } finally {
      clock.clearTimeout(timer);
    }
  }
}

/**
 * Whether a deployment means the render of its checksum is served: it succeeded and, in a fleet,
 * no reachable instance is behind it any more (every instance in sync runs that render).
 */
export function fleetServes(event: Pick<EventOf<'deployment.completed'>, 'outcome' | 'fleet'>): boolean {
  if (event.outcome !== 'success') return false;
  return event.fleet === undefined || (event.fleet.behind === 0 && event.fleet.in_sync > 0);
}

/** The HTTPRoutes a render's object checks rejected as a whole, by `namespace/name`, with the reason. */
export function rejectedRoutes(rejections: readonly Rejection[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of rejections ?? []) if (r.kind === 'HTTPRoute' && (r.scope === 'object' || r.wholeObject === true) && !out.has(`${r.namespace}/${r.name}`)) out.set(`${r.namespace}/${r.name}`, r.reason);
  return out;
}

/**
 * The addresses of a programmed Gateway: its requested IPAddress, else the bind address when it
 * is one address, else the published addresses (a wildcard bind answers wherever it is reached).
 */
export function gatewayAddresses(bindAddress: string, published: readonly LoadBalancerIngress[]): (gateway: KubeObject) => GatewayAddress[] {
  const fallback: GatewayAddress[] =
    !WILDCARD.has(bindAddress) && isIP(bindAddress) !== 0
      ? [{ type: 'IPAddress', value: bindAddress }]
      : published.map((a) => (a.ip !== undefined ? { type: 'IPAddress' as const, value: a.ip } : { type: 'Hostname' as const, value: a.hostname ?? '' })).filter((a) => a.value !== '');
  return (gateway) => {
    const requested = ((gateway.spec as { addresses?: unknown } | undefined)?.addresses ?? []) as { type?: unknown; value?: unknown }[];
    const ip = Array.isArray(requested) ? requested.find((a) => (a.type ?? 'IPAddress') === 'IPAddress' && typeof a.value === 'string') : undefined;
    return ip === undefined ? fallback : [{ type: 'IPAddress', value: ip.value as string }];
  };
}

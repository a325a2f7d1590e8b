// IngressStatusWriter: keeps `status.loadBalancer.ingress` of the served Ingresses equal to the
// published addresses, and clears it for the Ingresses it stops serving. It writes only what
// differs from what the Ingress holds (as listed, or as this writer last wrote it), one Ingress at
// a time, through the paced loop every status writer shares (paced-status-writer.ts: a token
// bucket, one 403 warning naming the permission, retries with backoff), so a new leader at 10,000
// Ingresses converges at the bucket's rate. Nothing here ever waits for or blocks a render.
import type { Logger } from 'pino';
import type { KubeObject } from '../../worker/protocol.js';
import type { Clock } from '../core/clock.js';
import { TokenBucket } from '../core/token-bucket.js';
import type { BackoffOptions } from '../sources/kubernetes/backoff.js';
import type { IngressStatusApi } from './ingress-status-api.js';
import { addressesText, ingressStatusAddresses, type LoadBalancerIngress } from './load-balancer-addresses.js';
import { PacedStatusWriter, type StatusWriterStats } from './paced-status-writer.js';

export type { StatusWriterStats } from './paced-status-writer.js';

export interface IngressStatusWriterOptions {
  readonly api: IngressStatusApi;
  /** The Ingress as the store holds it, or undefined once it is gone. */
  readonly lookup: (key: string) => KubeObject | undefined;
  /** Every Ingress key the store holds (read once per term, to clear stale addresses). */
  readonly keys: () => Iterable<string>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** @default 20 */
  readonly writesPerSecond?: number;
  /** Retry pacing of failed writes. @default 500 ms doubling to 30 s */
  readonly backoff?: BackoffOptions;
}

export class IngressStatusWriter {
  readonly #options: IngressStatusWriterOptions;
  readonly #paced: PacedStatusWriter<readonly LoadBalancerIngress[]>;
  /** What to publish; undefined while unknown (a --publish-service not found): nothing is written. */
  #addresses: readonly LoadBalancerIngress[] | undefined;
  #addressesText: string | undefined;
  #served = new Set<string>();
  #servedList: readonly string[] | undefined;
  /** What this writer last wrote, by key (the store does not see our own writes come back). */
  readonly #written = new Map<string, string>();
  /** Ingresses not served may still hold addresses a previous leader wrote: looked at once per term, once the addresses are known. */
  #scanPending = true;

  constructor(options: IngressStatusWriterOptions) {
    this.#options = options;
    this.#paced = new PacedStatusWriter({
      what: 'Ingress',
      field: 'ingress',
      permission: 'ingresses/status (networking.k8s.io)',
      wanted: (key) => this.#wanted(key),
      send: (key, addresses, signal) => {
        const slash = key.indexOf('/');
        return options.api.writeStatus(key.slice(0, slash), key.slice(slash + 1), addresses, signal);
      },
      written: (key, addresses) => this.#written.set(key, addressesText(addresses)),
      gone: (key) => this.#written.delete(key),
      bucket: new TokenBucket(options.clock, { ratePerSecond: options.writesPerSecond ?? 20 }),
      clock: options.clock,
      logger: options.logger.child({ component: 'ingress-status' }),
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    });
  }

  get stats(): StatusWriterStats {
    return this.#paced.stats;
  }

  /** The addresses to publish; undefined: unknown for now (nothing is written, nothing cleared). */
  setAddresses(addresses: readonly LoadBalancerIngress[] | undefined): void {
    const text = addresses === undefined ? undefined : addressesText(addresses);
    if (text === this.#addressesText) return;
    if (this.#addressesText === undefined) this.#scanPending = true;
    this.#addresses = addresses;
    this.#addressesText = text;
    for (const key of this.#served) this.#paced.add(key);
    this.#scan();
    this.#paced.wake();
  }

  /** The Ingresses the latest render serves (sorted `namespace/name` keys). */
  setServed(keys: readonly string[]): void {
    // Most renders serve the same Ingresses: a compare of the sorted lists, no Set built.
    if (keys === this.#servedList || (this.#servedList !== undefined && sameList(keys, this.#servedList))) return;
    this.#servedList = keys;
    const next = new Set(keys);
    for (const key of next) if (!this.#served.has(key)) this.#paced.add(key);
    for (const key of this.#served) if (!next.has(key)) this.#paced.add(key);
    this.#served = next;
    this.#scan();
    this.#paced.wake();
  }

  /** Queues every Ingress not served, once the addresses and the served list are known. */
  #scan(): void {
    if (!this.#scanPending || this.#addresses === undefined || this.#servedList === undefined) return;
    this.#scanPending = false;
    for (const key of this.#options.keys()) if (!this.#served.has(key)) this.#paced.add(key);
  }

  /**
   * These Ingresses changed in the store (their status included): look at them again, trusting
   * the store over what this writer last wrote (another replica may have written since).
   */
  recheck(keys: Iterable<string>): void {
    let any = false;
    for (const key of keys) {
      this.#written.delete(key);
      this.#paced.add(key);
      any = true;
    }
    if (any) this.#paced.wake();
  }

  /** Writes until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    return this.#paced.run(signal);
  }

  /**
   * Clears the addresses of every Ingress this writer published them on (or that holds the
   * published addresses), paced, until done or `signal` aborts. Used when the last replica stops.
   */
  async clearAll(signal: AbortSignal): Promise<number> {
    let cleared = 0;
    const keys = new Set([...this.#served, ...this.#written.keys()]);
    for (const key of keys) {
      if (signal.aborted) break;
      if (this.#current(key) === '' || this.#options.lookup(key) === undefined) continue;
      try {
        if ((await this.#paced.writeNow(key, [], signal)) === 'ok') cleared++;
      } catch {
        if (signal.aborted) break;
      }
    }
    return cleared;
  }

  /** The addresses `key` should hold, or undefined when it holds them already (or is not ours). */
  #wanted(key: string): readonly LoadBalancerIngress[] | undefined {
    const ours = this.#addresses;
    if (ours === undefined || this.#options.lookup(key) === undefined) {
      if (ours !== undefined) this.#written.delete(key);
      return undefined;
    }
    const current = this.#current(key);
    if (this.#served.has(key)) return current === this.#addressesText ? undefined : ours;
    // Not served: clear only what we (or a previous leader with the same addresses) published.
    const ownWrite = this.#written.get(key);
    if (current !== '' && (current === this.#addressesText || (ownWrite !== undefined && ownWrite === current))) return [];
    return undefined;
  }

  #current(key: string): string {
    return this.#written.get(key) ?? addressesText(ingressStatusAddresses(this.#options.lookup(key)));
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

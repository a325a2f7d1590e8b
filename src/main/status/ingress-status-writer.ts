// IngressStatusWriter: keeps `status.loadBalancer.ingress` of the served Ingresses equal to the
// published addresses, and clears it for the Ingresses it stops serving. It writes only what
// differs from what the Ingress holds (as listed, or as this writer last wrote it), one Ingress at
// a time, paced by a token bucket, so a new leader at 10,000 Ingresses converges at the bucket's
// rate. A refused write (403) is warned about once, naming the missing permission; failed writes
// are retried with backoff. Nothing here ever waits for or blocks a render.
import type { Logger } from 'pino';
import type { KubeObject } from '../../worker/protocol.js';
import { deferred, type Deferred } from '../core/async.js';
import { sleep, type Clock } from '../core/clock.js';
import { TokenBucket } from '../core/token-bucket.js';
import { Backoff, type BackoffOptions } from '../sources/kubernetes/backoff.js';
import type { IngressStatusApi } from './ingress-status-api.js';
import { addressesText, ingressStatusAddresses, type LoadBalancerIngress } from './load-balancer-addresses.js';

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

export interface StatusWriterStats {
  readonly writes: number;
  readonly failures: number;
  readonly forbidden: number;
  readonly queued: number;
}

export class IngressStatusWriter {
  readonly #options: IngressStatusWriterOptions;
  readonly #logger: Logger;
  readonly #bucket: TokenBucket;
  readonly #backoff: Backoff;
  /** What to publish; undefined while unknown (a --publish-service not found): nothing is written. */
  #addresses: readonly LoadBalancerIngress[] | undefined;
  #addressesText: string | undefined;
  #served = new Set<string>();
  #servedList: readonly string[] | undefined;
  /** What this writer last wrote, by key (the store does not see our own writes come back). */
  readonly #written = new Map<string, string>();
  /** Keys to look at, in order. */
  readonly #queue = new Set<string>();
  #wake: Deferred<void> = deferred<void>();
  /** Ingresses not served may still hold addresses a previous leader wrote: looked at once per term, once the addresses are known. */
  #scanPending = true;
  #warnedForbidden = false;
  #writes = 0;
  #failures = 0;
  #forbidden = 0;

  constructor(options: IngressStatusWriterOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'ingress-status' });
    this.#bucket = new TokenBucket(options.clock, { ratePerSecond: options.writesPerSecond ?? 20 });
    this.#backoff = new Backoff(options.clock, { initialMs: 500, maxMs: 30_000, ...options.backoff });
  }

  get stats(): StatusWriterStats {
    return { writes: this.#writes, failures: this.#failures, forbidden: this.#forbidden, queued: this.#queue.size };
  }

  /** The addresses to publish; undefined: unknown for now (nothing is written, nothing cleared). */
  setAddresses(addresses: readonly LoadBalancerIngress[] | undefined): void {
    const text = addresses === undefined ? undefined : addressesText(addresses);
    if (text === this.#addressesText) return;
    if (this.#addressesText === undefined) this.#scanPending = true;
    this.#addresses = addresses;
    this.#addressesText = text;
    for (const key of this.#served) this.#queue.add(key);
    this.#scan();
    this.#wake.resolve();
  }

  /** The Ingresses the latest render serves (sorted `namespace/name` keys). */
  setServed(keys: readonly string[]): void {
    // Most renders serve the same Ingresses: a compare of the sorted lists, no Set built.
    if (keys === this.#servedList || (this.#servedList !== undefined && sameList(keys, this.#servedList))) return;
    this.#servedList = keys;
    const next = new Set(keys);
    for (const key of next) if (!this.#served.has(key)) this.#queue.add(key);
    for (const key of this.#served) if (!next.has(key)) this.#queue.add(key);
    this.#served = next;
    this.#scan();
    this.#wake.resolve();
  }

  /** Queues every Ingress not served, once the addresses and the served list are known. */
  #scan(): void {
    if (!this.#scanPending || this.#addresses === undefined || this.#servedList === undefined) return;
    this.#scanPending = false;
    for (const key of this.#options.keys()) if (!this.#served.has(key)) this.#queue.add(key);
  }

  /**
   * These Ingresses changed in the store (their status included): look at them again, trusting
   * the store over what this writer last wrote (another replica may have written since).
   */
  recheck(keys: Iterable<string>): void {
    let any = false;
    for (const key of keys) {
      this.#written.delete(key);
      this.#queue.add(key);
      any = true;
    }
    if (any) this.#wake.resolve();
  }

  /** Writes until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const onAbort = (): void => this.#wake.resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const key = this.#queue.values().next().value;
        if (key === undefined) {
          this.#wake = deferred<void>();
          if (signal.aborted) return;
          await this.#wake.promise;
          continue;
        }
        this.#queue.delete(key);
        const wanted = this.#wanted(key);
        if (wanted === undefined) continue;
        try {
          await this.#bucket.take(signal);
          await this.#write(key, wanted, signal);
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
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
        await this.#bucket.take(signal);
        if ((await this.#send(key, [], signal)) === 'ok') cleared++;
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

  async #write(key: string, addresses: readonly LoadBalancerIngress[], signal: AbortSignal): Promise<void> {
    const outcome = await this.#send(key, addresses, signal);
    if (outcome === 'ok') {
      this.#backoff.reset();
      return;
    }
    if (outcome === 'dropped') return;
    // Retried after the others queued meanwhile, once the backoff delay has passed.
    this.#queue.add(key);
    await sleep(this.#options.clock, this.#backoff.next(), signal);
  }

  async #send(key: string, addresses: readonly LoadBalancerIngress[], signal: AbortSignal): Promise<'ok' | 'retry' | 'dropped'> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    let status: number;
    try {
      status = await this.#options.api.writeStatus(namespace, name, addresses, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      this.#failures++;
      this.#logger.warn({ ingress: key, err: error }, 'Ingress status write failed; retrying');
      return 'retry';
    }
    if (status >= 200 && status < 300) {
      this.#writes++;
      this.#written.set(key, addressesText(addresses));
      return 'ok';
    }
    if (status === 404) {
      this.#written.delete(key);
      return 'dropped';
    }
    this.#failures++;
    if (status === 403) {
      this.#forbidden++;
      if (!this.#warnedForbidden) {
        this.#warnedForbidden = true;
        this.#logger.warn({ ingress: key }, 'the API server refuses Ingress status writes (403): the controller needs permission to update ingresses/status (networking.k8s.io); retrying with backoff');
      }
      return 'retry';
    }
    if (status === 400 || status === 422) {
      this.#logger.warn({ ingress: key, status }, 'the API server refused an Ingress status write as invalid; not retried');
      return 'dropped';
    }
    this.#logger.warn({ ingress: key, status }, 'Ingress status write failed; retrying');
    return 'retry';
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// LeaseElector: leader election over a coordination.k8s.io/v1 Lease, the client-go protocol.
// A follower reads the Lease every retryPeriod and takes it (PUT with the resourceVersion it read,
// so of two replicas racing exactly one wins; the other's 409 is a lost race, not an error) once
// it is free or expired. The leader renews every retryPeriod and steps down by itself when no
// renewal succeeded for renewDeadline, before any follower may judge the Lease expired. Lease
// times are written as MicroTime (six decimals) by hand: the API server rejects anything else.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { isAbortError } from '../core/async.js';
import { sleep, systemClock, type Clock, type TimerHandle } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import { apiError, kubeRequest, type KubeRequest, type KubeResponse } from '../sources/kubernetes/kube-http.js';
import type { Elector, LeadershipCallbacks } from './elector.js';

export interface LeaseElectorOptions {
  readonly kubeConfig: KubeConfig;
  /** Where the Lease lives. */
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica (the pod name): written as the Lease's holderIdentity. */
  readonly identity: string;
  /** How long a Lease stays valid after its last renewal. @default 15_000 */
  readonly leaseDurationMs?: number;
  /** The leader steps down when no renewal succeeded for this long; below leaseDurationMs. @default 10_000 */
  readonly renewDeadlineMs?: number;
  /** Between two reads (follower) or renewals (leader); below renewDeadlineMs. @default 2_000 */
  readonly retryPeriodMs?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
  [field: string]: unknown;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; [field: string]: unknown };
  spec?: LeaseSpec;
  [field: string]: unknown;
}

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export class LeaseElector implements Elector {
  readonly identity: string;
  readonly #kubeConfig: KubeConfig;
  readonly #namespace: string;
  readonly #name: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #callbacks: LeadershipCallbacks = { onBecameLeader: () => undefined, onLostLeadership: () => undefined };
  /** The Lease as last read or written: its resourceVersion guards the next PUT. */
  #lease: Lease | undefined;
  /** When (monotonic) the holder/renewTime pair last changed in what we read. */
  #observed: { readonly key: string; readonly at: number } | undefined;
  /** Invariant: defined exactly while leading; aborted (with its requests) when the term ends. */
  #term: AbortController | undefined;
  /** Monotonic start of the last renewal that succeeded (the leader's deadline counts from it). */
  #renewedAt = 0;
  #deadline: TimerHandle | undefined;
  /** Consecutive failed ticks: the first is a warning, repeats are debug until one succeeds. */
  #failures = 0;

  constructor(options: LeaseElectorOptions) {
    this.#leaseDurationMs = positive('leaseDurationMs', options.leaseDurationMs ?? 15_000);
    this.#renewDeadlineMs = positive('renewDeadlineMs', options.renewDeadlineMs ?? 10_000);
    this.#retryPeriodMs = positive('retryPeriodMs', options.retryPeriodMs ?? 2_000);
    if (this.#renewDeadlineMs >= this.#leaseDurationMs) {
      throw new TypeError(`renewDeadlineMs (${this.#renewDeadlineMs}) must be less than leaseDurationMs (${this.#leaseDurationMs}): the leader must step down before followers may take over`);
    }
    if (this.#retryPeriodMs >= this.#renewDeadlineMs) {
      throw new TypeError(`retryPeriodMs (${this.#retryPeriodMs}) must be less than renewDeadlineMs (${this.#renewDeadlineMs}): a leader needs more than one renewal attempt per deadline`);
    }
    for (const [field, value] of [['namespace', options.namespace], ['name', options.name]] as const) {
      if (typeof value !== 'string' || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(value)) throw new TypeError(`LeaseElector ${field} must be a DNS name, got ${JSON.stringify(value)}`);
    }
    if (typeof options.identity !== 'string' || options.identity.trim() === '') throw new TypeError(`LeaseElector identity must be a non-empty string, got ${JSON.stringify(options.identity)}`);
    this.identity = options.identity;
    this.#kubeConfig = options.kubeConfig;
    this.#namespace = options.namespace;
    this.#name = options.name;
    this.#clock = options.clock ?? systemClock;
    this.#logger = (options.logger ?? defaultLogger()).child({ component: 'lease-elector', lease: `${options.namespace}/${options.name}`, identity: options.identity });
  }

  get leading(): boolean {
    return this.#term !== undefined;
  }

  /** The Lease's leaseTransitions as last read or written: the fleet's epoch while leading. */
  epoch(): number {
    return this.#lease?.spec?.leaseTransitions ?? 0;
  }

  async run(callbacks: LeadershipCallbacks, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.#callbacks = callbacks;
    // Stopping aborts a renewal in flight too: renewals run under the term's signal only.
    const abortTerm = (): void => this.#term?.abort(signal.reason);
    signal.addEventListener('abort', abortTerm, { once: true });
    try {
      while (!signal.aborted) {
        await this.#tick(signal);
        if (signal.aborted) break;
        await sleep(this.#clock, this.#retryPeriodMs, signal).catch(() => undefined);
      }
    } finally {
      signal.removeEventListener('abort', abortTerm);
      if (this.leading) {
        this.#lose('stopping');
        await this.#release();
      }
      this.#clock.clearTimeout(this.#deadline);
    }
  }

  /** One read-and-decide (follower) or renewal (leader). API errors are logged, never thrown. */
  async #tick(signal: AbortSignal): Promise<void> {
    try {
      if (this.#term !== undefined) await this.#renew(this.#term);
      else await this.#tryAcquire(signal);
      if (this.#failures > 0) this.#logger.info({ failures: this.#failures }, 'lease requests succeed again');
      this.#failures = 0;
    } catch (error) {
      // Stopping, or the term ended (deadline) while its renewal was in flight: nothing failed.
      if (isAbortError(error) && (signal.aborted || this.#term === undefined)) return;
      this.#failures++;
      const log = this.#failures === 1 ? this.#logger.warn.bind(this.#logger) : this.#logger.debug.bind(this.#logger);
      log({ err: error, failures: this.#failures }, `lease request failed; retrying every ${this.#retryPeriodMs} ms`);
    }
  }

  async #tryAcquire(signal: AbortSignal): Promise<void> {
    const response = await this.#request({ method: 'GET', path: this.#leasePath(), signal });
    if (response.status === 404) {
      await this.#create(signal);
      return;
    }
    if (response.status !== 200) throw apiError(response, `get lease ${this.#namespace}/${this.#name}`);
    const lease = response.body as Lease;
    this.#lease = lease;
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    this.#observe(spec);
    // Free, expired, or already ours (this identity restarted, or a renewal landed that we missed).
    if (holder !== '' && holder !== this.identity && !this.#expired(spec)) return;
    const startedAt = this.#clock.monotonic();
    const now = this.#clock.now();
    const ours = holder === this.identity;
    const acquireTime = ours && typeof spec.acquireTime === 'string' && MICRO_TIME.test(spec.acquireTime) ? spec.acquireTime : microTime(now);
    const body: Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: this.#leaseDurationSeconds(),
        acquireTime,
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (ours ? 0 : 1),
      },
    };
    const put = await this.#request({ method: 'PUT', path: this.#leasePath(), body, signal });
    if (put.status === 409) {
      this.#logger.debug({ holder }, 'lost the race for the lease (409 Conflict)');
      return;
    }
    if (put.status !== 200) throw apiError(put, `take lease ${this.#namespace}/${this.#name}`);
    this.#becomeLeader(put.body as Lease, startedAt, holder === '' ? 'the lease was free' : ours ? 'the lease was already ours' : `the lease of ${holder} expired`);
  }

  async #create(signal: AbortSignal): Promise<void> {
    const startedAt = this.#clock.monotonic();
    const now = microTime(this.#clock.now());
    const body: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#name, namespace: this.#namespace },
      spec: { holderIdentity: this.identity, leaseDurationSeconds: this.#leaseDurationSeconds(), acquireTime: now, renewTime: now, leaseTransitions: 0 },
    };
    const response = await this.#request({ method: 'POST', path: this.#leasesPath(), body, signal });
    if (response.status === 409) {
      this.#logger.debug('lost the race to create the lease (409 AlreadyExists)');
      return;
    }
    if (response.status !== 201 && response.status !== 200) throw apiError(response, `create lease ${this.#namespace}/${this.#name}`);
    this.#becomeLeader(response.body as Lease, startedAt, 'created the lease');
  }

  async #renew(term: AbortController): Promise<void> {
    const lease = this.#lease as Lease;
    const startedAt = this.#clock.monotonic();
    const body: Lease = { ...lease, spec: { ...lease.spec, holderIdentity: this.identity, leaseDurationSeconds: this.#leaseDurationSeconds(), renewTime: microTime(this.#clock.now()) } };
    const response = await this.#request({ method: 'PUT', path: this.#leasePath(), body, signal: term.signal });
    if (term !== this.#term) return;
    if (response.status === 200) {
      this.#lease = response.body as Lease;
      this.#renewedAt = startedAt;
      this.#armDeadline();
      return;
    }
    if (response.status !== 409) throw apiError(response, `renew lease ${this.#namespace}/${this.#name}`);
    // Someone else wrote the Lease: read who holds it now. Still us: renew from that version next time.
    const current = await this.#request({ method: 'GET', path: this.#leasePath(), signal: term.signal });
    if (term !== this.#term) return;
    if (current.status !== 200) throw apiError(current, `get lease ${this.#namespace}/${this.#name}`);
    this.#lease = current.body as Lease;
    const holder = this.#lease.spec?.holderIdentity ?? '';
    this.#observe(this.#lease.spec ?? {});
    if (holder !== this.identity) this.#lose(`the lease is now held by ${holder === '' ? 'nobody' : holder}`);
  }

  /** A clean stop: clear the holder so a follower takes over at its next read, not after expiry. */
  async #release(): Promise<void> {
    const controller = new AbortController();
    const timeoutMs = Math.min(this.#renewDeadlineMs, 5_000);
    const timer = this.#clock.setTimeout(() => controller.abort(), timeoutMs);
    try {
      for (let attempt = 0; attempt < 2 && this.#lease !== undefined; attempt++) {
        const now = microTime(this.#clock.now());
        // leaseDurationSeconds 1, as client-go does: a client that ignores an empty holder still
        // sees the Lease expire within a second.
        const body: Lease = { ...this.#lease, spec: { ...this.#lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now } };
        const response = await this.#request({ method: 'PUT', path: this.#leasePath(), body, signal: controller.signal });
        if (response.status === 200) {
          this.#lease = response.body as Lease;
          this.#logger.info('lease released');
          return;
        }
        if (response.status !== 409) throw apiError(response, `release lease ${this.#namespace}/${this.#name}`);
        const current = await this.#request({ method: 'GET', path: this.#leasePath(), signal: controller.signal });
        if (current.status !== 200 || (current.body as Lease).spec?.holderIdentity !== this.identity) return;
        this.#lease = current.body as Lease;
      }
    } catch (error) {
      this.#logger.warn({ err: error }, `could not release the lease; followers take over once it expires (${this.#leaseDurationMs} ms)`);
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  #becomeLeader(lease: Lease, renewedAt: number, why: string): void {
    this.#lease = lease;
    this.#term = new AbortController();
    this.#renewedAt = renewedAt;
    this.#armDeadline();
    this.#logger.info({ why }, 'acquired the lease');
    this.#callbacks.onBecameLeader();
  }

  #lose(reason: string): void {
    const term = this.#term;
    if (term === undefined) return;
    this.#term = undefined;
    this.#clock.clearTimeout(this.#deadline);
    this.#deadline = undefined;
    term.abort(new DOMException(`leadership lost: ${reason}`, 'AbortError'));
    if (reason === 'stopping') this.#logger.info('stepping down: stopping');
    else this.#logger.warn({ reason }, 'lost the lease');
    this.#callbacks.onLostLeadership(reason);
  }

  /** Steps down when renewDeadline passes without a successful renewal, even if a renewal hangs. */
  #armDeadline(): void {
    this.#clock.clearTimeout(this.#deadline);
    const remaining = this.#renewedAt + this.#renewDeadlineMs - this.#clock.monotonic();
    this.#deadline = this.#clock.setTimeout(() => {
      this.#deadline = undefined;
      this.#lose('renew deadline exceeded');
    }, remaining);
  }

  #observe(spec: LeaseSpec): void {
    const key = `${spec.holderIdentity ?? ''}\u0000${spec.renewTime ?? ''}`;
    if (this.#observed?.key !== key) this.#observed = { key, at: this.#clock.monotonic() };
  }

  /**
   * Whether the holder's lease ran out. Clock-skew assumption: replicas' wall clocks agree to
   * within leaseDuration - renewDeadline (5 s by default). A renewTime in our past is trusted:
   * expiry is renewTime + leaseDuration, so a replica that starts long after the holder died
   * takes over at once. A renewTime in our future (the holder's clock runs ahead) cannot be
   * trusted, so expiry counts from when we first saw that record, as client-go always does.
   */
  #expired(spec: LeaseSpec): boolean {
    const seconds = spec.leaseDurationSeconds;
    const durationMs = typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : this.#leaseDurationMs;
    const renewed = typeof spec.renewTime === 'string' ? Date.parse(spec.renewTime) : Number.NaN;
    const now = this.#clock.now();
    if (Number.isFinite(renewed) && renewed <= now) return now >= renewed + durationMs;
    return this.#clock.monotonic() >= (this.#observed?.at ?? this.#clock.monotonic()) + durationMs;
  }

  #leaseDurationSeconds(): number {
    return Math.ceil(this.#leaseDurationMs / 1000);
  }

  #leasesPath(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#namespace)}/leases`;
  }

  #leasePath(): string {
    return `${this.#leasesPath()}/${encodeURIComponent(this.#name)}`;
  }

  #request(request: KubeRequest): Promise<KubeResponse> {
    return kubeRequest(this.#kubeConfig, { idleTimeoutMs: this.#renewDeadlineMs, ...request });
  }
}

/** A Kubernetes MicroTime: RFC 3339 in UTC with exactly six decimals (`2026-12-01T10:00:00.123000Z`). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`LeaseElector ${name} must be a positive number of milliseconds, got ${String(value)}`);
  return value;
}

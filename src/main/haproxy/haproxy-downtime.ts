// HaproxyDowntime: whether the local HAProxy has been down for good, for /healthz. The supervisor
// (HaproxyProcess) restarts a HAProxy that died, with a capped backoff and without end; when every
// restart keeps failing (its port taken by another program, its binary gone), the controller
// still runs but serves nothing. Past `limitMs` of HAProxy not running, liveness fails, so that
// the kubelet restarts the pod, whose first start then stops with the reason.
import type { Clock } from '../core/clock.js';
import type { HaproxyState } from './haproxy-process.js';

/** The default time HAProxy may stay down (restarting) before /healthz fails. */
export const DEFAULT_HAPROXY_DOWN_LIMIT_MS = 300_000;

export interface HaproxyDowntimeOptions {
  readonly haproxy: { readonly state: HaproxyState };
  readonly clock: Clock;
  /** @default DEFAULT_HAPROXY_DOWN_LIMIT_MS (5 minutes) */
  readonly limitMs?: number;
}

export class HaproxyDowntime {
  readonly #haproxy: { readonly state: HaproxyState };
  readonly #clock: Clock;
  readonly #limitMs: number;
  /** When HAProxy was first seen down (restarting) since it was last seen running. */
  #downSince: number | undefined;

  constructor(options: HaproxyDowntimeOptions) {
    this.#haproxy = options.haproxy;
    this.#clock = options.clock;
    this.#limitMs = options.limitMs ?? DEFAULT_HAPROXY_DOWN_LIMIT_MS;
    if (!Number.isFinite(this.#limitMs) || this.#limitMs <= 0) throw new TypeError(`HaproxyDowntime limitMs must be a positive number, got ${String(options.limitMs)}`);
  }

  /** Call on each restart attempt after an unexpected exit (HaproxyProcess `onRestart`). */
  restarting(): void {
    this.#downSince ??= this.#clock.monotonic();
  }

  /** Why HAProxy counts as down for good, or undefined while it runs or recovers in time. */
  problem(): string | undefined {
    const state = this.#haproxy.state;
    // Running: recovered. Stopped or starting: not started yet, or stopping with the controller.
    if (state !== 'restarting') {
      this.#downSince = undefined;
      return undefined;
    }
    this.restarting();
    const downMs = this.#clock.monotonic() - (this.#downSince as number);
    return downMs > this.#limitMs ? `HAProxy has not run for ${Math.round(downMs / 1000)} s: every restart failed` : undefined;
  }
}

// Time, injected. Every component that reads the time or sets a timer takes a Clock, so tests
// drive debounce windows, pacing, leases and timeouts with a fake clock instead of sleeping.
// `now` is wall time (event timestamps, leases); `monotonic` never goes back (durations).

/** What `setTimeout` returns; only ever handed back to the same clock's `clearTimeout`. */
export type TimerHandle = { readonly __timer: unique symbol } | number | object;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Milliseconds from an arbitrary origin; never decreases. Use it for durations. */
  monotonic(): number;
  /**
   * Calls `callback` once after `ms` milliseconds. A system timer is unref'd when `unref` is set,
   * so it never keeps the process alive on its own.
   */
  setTimeout(callback: () => void, ms: number, options?: { readonly unref?: boolean }): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

/** The process clock: Date.now, performance.now and Node's timers. */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(callback: () => void, ms: number, options?: { readonly unref?: boolean }): TimerHandle {
    const timer = setTimeout(callback, Math.max(0, ms));
    if (options?.unref === true) timer.unref();
    return timer;
  },
  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle !== undefined) clearTimeout(handle as NodeJS.Timeout);
  },
});

/** Resolves after `ms` on `clock`, or rejects with the signal's reason when it aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Calls `tick` every `ms` on `clock` until the returned function is called. Each period starts
 * when the previous tick returned, so a slow tick never piles up calls.
 */
export function every(clock: Clock, ms: number, tick: () => void, options?: { readonly unref?: boolean }): () => void {
  let handle: TimerHandle | undefined;
  let stopped = false;
  const schedule = (): void => {
    handle = clock.setTimeout(() => {
      if (stopped) return;
      tick();
      if (!stopped) schedule();
    }, ms, options);
  };
  schedule();
  return () => {
    stopped = true;
    clock.clearTimeout(handle);
  };
}

// Deterministic async helpers: they only ever yield to the microtask queue, so they work the same
// with real or fake timers and never sleep.

/** Lets `turns` rounds of already-queued promise continuations run. */
export async function flushMicrotasks(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}

/**
 * Yields to the microtask queue until `predicate` holds. Fails (instead of hanging) when it
 * still does not hold after `maxTurns` turns, naming what was awaited.
 */
export async function waitUntil(predicate: () => boolean, description = 'condition', maxTurns = 10_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (predicate()) return;
    await Promise.resolve();
  }
  throw new Error(`timed out (after ${maxTurns} microtask turns) waiting for ${description}`);
}

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
  readonly settled: boolean;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  let settled = false;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return {
    promise,
    resolve(value: T) {
      settled = true;
      resolve(value);
    },
    reject(reason: unknown) {
      settled = true;
      reject(reason);
    },
    get settled() {
      return settled;
    },
  };
}

/** Tracks whether a promise has settled, without awaiting it. */
export function track<T>(promise: Promise<T>): { readonly done: boolean; readonly promise: Promise<T> } {
  const state = { done: false, promise };
  promise.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  return state;
}

// Waiting on the real world (files, sockets, child processes), which no fake clock can drive:
// polls a condition until it holds or a deadline passes, then fails naming what was awaited.
// Only for real I/O; timers inside the product are driven with FakeClock instead.
import { setTimeout as delay } from 'node:timers/promises';

export async function eventually<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 10_000, everyMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? '' : `: ${(last as Error).message}`}`);
    }
    await delay(everyMs);
  }
}

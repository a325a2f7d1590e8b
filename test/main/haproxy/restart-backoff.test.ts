// RestartBackoff on a FakeClock: capped exponential delays, reset by a run that lasted long enough.
import { describe, expect, it } from 'vitest';
import { RestartBackoff } from '../../../src/main/haproxy/restart-backoff.js';
import { FakeClock } from '../../helpers/fake-clock.js';

describe('RestartBackoff', () => {
  it('doubles the delay after each short run up to the cap', () => {
    const backoff = new RestartBackoff(new FakeClock(), { initialMs: 500, maxMs: 5_000 });
    const delays = Array.from({ length: 7 }, () => backoff.nextDelay());
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
    expect(backoff.failures).toBe(7);
  });

  it('starts over after a run that lasted resetAfterMs, and not after a shorter one', async () => {
    const clock = new FakeClock();
    const backoff = new RestartBackoff(clock, { initialMs: 100, maxMs: 10_000, resetAfterMs: 60_000 });
    expect([backoff.nextDelay(), backoff.nextDelay(), backoff.nextDelay()]).toEqual([100, 200, 400]);
    backoff.started();
    await clock.advance(59_999);
    expect(backoff.nextDelay()).toBe(800);
    backoff.started();
    await clock.advance(60_000);
    expect(backoff.nextDelay()).toBe(100);
    expect(backoff.nextDelay()).toBe(200);
  });

  it('rejects nonsensical options with the value it got', () => {
    expect(() => new RestartBackoff(new FakeClock(), { initialMs: 0 })).toThrow(/initialMs must be a positive number, got 0/);
    expect(() => new RestartBackoff(new FakeClock(), { initialMs: 2_000, maxMs: 1_000 })).toThrow(/maxMs \(1000\) must not be below initialMs \(2000\)/);
  });
});

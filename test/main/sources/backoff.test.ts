import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay } from '../../../src/main/sources/kubernetes/backoff.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const RULE = { initialMs: 100, maxMs: 30_000, factor: 2, jitter: 0.2 };

describe('backoffDelay', () => {
  it('doubles from the initial delay and stays at the cap, however many attempts failed', () => {
    const delays = [0, 1, 2, 3, 8, 9, 20, 2_000].map((attempt) => backoffDelay(attempt, RULE, 0));
    expect(delays).toEqual([100, 200, 400, 800, 25_600, 30_000, 30_000, 30_000]);
  });

  it('keeps every jittered delay within [base * (1 - jitter), base], so the cap is never exceeded', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, random) => {
        const base = Math.min(RULE.maxMs, RULE.initialMs * 2 ** attempt);
        const delay = backoffDelay(attempt, RULE, random);
        return delay <= base && delay >= Math.floor(base * (1 - RULE.jitter)) && delay <= RULE.maxMs;
      }),
    );
  });

  it('spreads replicas that failed at the same moment over the jitter window', () => {
    const delays = [0, 0.25, 0.5, 0.75, 0.999].map((random) => backoffDelay(20, RULE, random));
    expect(new Set(delays).size).toBe(5);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(24_000);
    expect(Math.max(...delays)).toBe(30_000);
  });
});

describe('Backoff', () => {
  it('grows with each failure until a reset starts it over', () => {
    const backoff = new Backoff(new FakeClock(), { random: () => 0 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([100, 200, 400]);
    expect(backoff.attempts).toBe(3);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  it('starts over after a connection stayed up for the healthy period, and not after a shorter one', async () => {
    const clock = new FakeClock();
    const backoff = new Backoff(clock, { random: () => 0, healthyAfterMs: 10_000 });
    backoff.next();
    backoff.next();
    backoff.connected();
    await clock.advance(9_999);
    expect(backoff.next()).toBe(400);
    backoff.connected();
    await clock.advance(10_000);
    expect(backoff.next()).toBe(100);
    // The healthy mark is used once: a second failure without a new connection keeps growing.
    expect(backoff.next()).toBe(200);
  });

  it('rejects options that cannot pace anything, showing the value it got', () => {
    const clock = new FakeClock();
    expect(() => new Backoff(clock, { initialMs: 0 })).toThrow(/initialMs must be a positive number, got 0/);
    expect(() => new Backoff(clock, { maxMs: 50 })).toThrow(/maxMs \(50\) must not be below initialMs \(100\)/);
    expect(() => new Backoff(clock, { jitter: 1 })).toThrow(/jitter must be in \[0, 1\), got 1/);
    expect(() => new Backoff(clock, { factor: 0.5 })).toThrow(/factor must be at least 1, got 0.5/);
  });
});

import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../src/main/core/token-bucket.js';
import { FakeClock } from '../../helpers/fake-clock.js';

describe('TokenBucket', () => {
  it('allows a burst, then one token per 1/rate seconds', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(clock, { ratePerSecond: 20, burst: 20 });
    for (let i = 0; i < 20; i++) expect(bucket.tryTake()).toBe(true);
    expect(bucket.tryTake()).toBe(false);
    expect(bucket.delayMs()).toBe(50);
    await clock.advance(49);
    expect(bucket.tryTake()).toBe(false);
    await clock.advance(1);
    expect(bucket.tryTake()).toBe(true);
    await clock.advance(10_000);
    let taken = 0;
    while (bucket.tryTake()) taken++;
    expect(taken).toBe(20);
  });

  it('take() waits on the clock for the next token and rejects when aborted', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(clock, { ratePerSecond: 2, burst: 1 });
    await bucket.take();
    let done = false;
    const next = bucket.take().then(() => (done = true));
    await clock.advance(499);
    expect(done).toBe(false);
    await clock.advance(1);
    await next;
    expect(done).toBe(true);
    const stop = new AbortController();
    const waiting = bucket.take(stop.signal);
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
  });

  it('refuses a rate or burst that is not a positive number, naming it', () => {
    const clock = new FakeClock();
    expect(() => new TokenBucket(clock, { ratePerSecond: 0 })).toThrow(/rate must be a positive number, got 0/);
    expect(() => new TokenBucket(clock, { ratePerSecond: 1, burst: 0.5 })).toThrow(/burst must be at least 1/);
  });
});

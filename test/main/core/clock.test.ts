// The injected clock: `sleep` and `every` on any Clock, the system clock, and the FakeClock test
// helper that every timing test relies on (due order, clearing, timers set by timers, runAll).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { every, sleep, systemClock, type Clock, type TimerHandle } from '../../../src/main/core/clock.js';
import { track } from '../../helpers/async.js';
import { FakeClock } from '../../helpers/fake-clock.js';

/**
 * A clock that moves only when the test sets `time`, and runs a timer only when the test fires
 * it: a timer callback can then move time itself, the way a slow tick takes real time.
 */
class SteppedClock implements Clock {
  time = 0;
  readonly timers: { due: number; callback: () => void }[] = [];

  now(): number {
    return this.time;
  }

  monotonic(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const timer = { due: this.time + ms, callback };
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    const index = this.timers.indexOf(handle as { due: number; callback: () => void });
    if (index >= 0) this.timers.splice(index, 1);
  }

  /** Moves time to the earliest timer and runs it. */
  fireNext(): void {
    this.timers.sort((a, b) => a.due - b.due);
    const timer = this.timers.shift();
    if (timer === undefined) throw new Error('no timer to fire');
    this.time = Math.max(this.time, timer.due);
    timer.callback();
  }
}

describe('sleep', () => {
  it('resolves once the time has passed on the clock, not before', async () => {
    const clock = new FakeClock();
    const slept = track(sleep(clock, 100));

    await clock.advance(99);
    expect(slept.done).toBe(false);
    await clock.advance(1);
    expect(slept.done).toBe(true);
    await expect(slept.promise).resolves.toBeUndefined();
  });

  it('rejects with the signal’s reason when the signal aborts first, and clears its timer', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const slept = sleep(clock, 100, controller.signal);
    const reason = new Error('shutting down');

    controller.abort(reason);
    await expect(slept).rejects.toBe(reason);
    expect(clock.pending).toBe(0);
  });

  it('rejects at once, setting no timer, when the signal has already aborted', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    controller.abort(new Error('already gone'));

    await expect(sleep(clock, 100, controller.signal)).rejects.toThrow('already gone');
    expect(clock.pending).toBe(0);
  });

  it('stays resolved when the signal aborts after the time has passed', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const slept = sleep(clock, 10, controller.signal);
    await clock.advance(10);
    controller.abort();

    await expect(slept).resolves.toBeUndefined();
  });
});

describe('every', () => {
  it('calls the tick once per period', async () => {
    const clock = new FakeClock();
    const start = clock.now();
    const ticks: number[] = [];
    every(clock, 100, () => ticks.push(clock.now() - start));

    await clock.advance(99);
    expect(ticks).toEqual([]);
    await clock.advance(251);
    expect(ticks).toEqual([100, 200, 300]);
  });

  it('stops ticking, and leaves no timer behind, once stopped', async () => {
    const clock = new FakeClock();
    let ticks = 0;
    const stop = every(clock, 100, () => ticks++);
    await clock.advance(200);
    stop();
    await clock.advance(1_000);

    expect(ticks).toBe(2);
    expect(clock.pending).toBe(0);
  });

  it('stops when the tick itself stops it', async () => {
    const clock = new FakeClock();
    let ticks = 0;
    const stop = every(clock, 100, () => {
      ticks++;
      if (ticks === 3) stop();
    });
    await clock.advance(1_000);

    expect(ticks).toBe(3);
    expect(clock.pending).toBe(0);
  });

  it('starts each period when the previous tick returned, so a slow tick delays the next one', () => {
    const clock = new SteppedClock();
    const ticks: number[] = [];
    every(clock, 100, () => {
      ticks.push(clock.time);
      clock.time += 30; // the tick takes 30 ms
    });

    for (let i = 0; i < 3; i++) clock.fireNext();
    // Each tick ends 30 ms after it began; the next comes one period after that.
    expect(ticks).toEqual([100, 230, 360]);
    // Never more than one timer: a slow tick cannot pile calls up.
    expect(clock.timers).toHaveLength(1);
  });
});

describe('systemClock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads wall time from Date.now', () => {
    const before = Date.now();
    const now = systemClock.now();
    const after = Date.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(after);
  });

  it('has a monotonic time that never decreases', () => {
    const samples = Array.from({ length: 10_000 }, () => systemClock.monotonic());
    const decreases = samples.filter((sample, i) => i > 0 && sample < (samples[i - 1] as number));
    expect(decreases).toEqual([]);
    expect(samples[samples.length - 1]).toBeGreaterThan(0);
  });

  it('sets Node timers that clearTimeout cancels, unref’d on request', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const fired: string[] = [];
    const kept = systemClock.setTimeout(() => fired.push('kept'), 50);
    const cleared = systemClock.setTimeout(() => fired.push('cleared'), 50);
    const unrefd = systemClock.setTimeout(() => fired.push('unref'), 50, { unref: true });
    systemClock.clearTimeout(cleared);
    systemClock.clearTimeout(undefined);

    expect((kept as NodeJS.Timeout).hasRef()).toBe(true);
    expect((unrefd as NodeJS.Timeout).hasRef()).toBe(false);
    vi.advanceTimersByTime(50);
    expect(fired).toEqual(['kept', 'unref']);
  });
});

describe('FakeClock', () => {
  it('starts at the given time, with monotonic time at 0, and moves both with advance', async () => {
    const clock = new FakeClock(5_000);
    expect([clock.now(), clock.monotonic()]).toEqual([5_000, 0]);
    await clock.advance(250);
    expect([clock.now(), clock.monotonic()]).toEqual([5_250, 250]);
  });

  it('runs due timers in order of due time, then of creation, each at its due time', async () => {
    const clock = new FakeClock(0);
    const runs: string[] = [];
    const timer = (name: string, ms: number): void => {
      clock.setTimeout(() => runs.push(`${name}@${clock.now()}`), ms);
    };
    timer('c', 30);
    timer('a', 10);
    timer('b', 20);
    timer('a2', 10);
    timer('late', 31);

    await clock.advance(30);
    expect(runs).toEqual(['a@10', 'a2@10', 'b@20', 'c@30']);
    expect(clock.pending).toBe(1);
    expect(clock.nextDue).toBe(31);
  });

  it('never runs a cleared timer', async () => {
    const clock = new FakeClock(0);
    const runs: string[] = [];
    const first = clock.setTimeout(() => runs.push('first'), 10);
    clock.setTimeout(() => runs.push('second'), 20);
    clock.clearTimeout(first);
    clock.clearTimeout(undefined);

    expect(clock.pending).toBe(1);
    await clock.advance(100);
    expect(runs).toEqual(['second']);
    expect(clock.pending).toBe(0);
  });

  it('treats a negative delay as due now', async () => {
    const clock = new FakeClock(0);
    let ran = false;
    clock.setTimeout(() => (ran = true), -5);
    expect(clock.nextDue).toBe(0);
    await clock.advance(0);
    expect(ran).toBe(true);
  });

  it('runs, within one advance, the timers that timer callbacks set when they fall due in it', async () => {
    const clock = new FakeClock(0);
    const runs: number[] = [];
    clock.setTimeout(() => {
      runs.push(clock.now());
      clock.setTimeout(() => runs.push(clock.now()), 10);
      clock.setTimeout(() => runs.push(clock.now()), 20);
    }, 10);

    await clock.advance(25);
    expect(runs).toEqual([10, 20]);
    expect(clock.now()).toBe(25);
    expect(clock.nextDue).toBe(30);
  });

  it('lets async code that a timer wakes up set its next timer before time moves on', async () => {
    const clock = new FakeClock(0);
    const wakes: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 10);
        wakes.push(clock.now());
      }
    })();

    await clock.advance(30);
    expect(wakes).toEqual([10, 20, 30]);
    await loop;
  });

  it('reports no next due time when no timer is set', () => {
    expect(new FakeClock().nextDue).toBeUndefined();
  });

  it('runAll runs every timer, moving time to the last one', async () => {
    const clock = new FakeClock(0);
    const runs: number[] = [];
    clock.setTimeout(() => runs.push(clock.now()), 500);
    clock.setTimeout(() => {
      runs.push(clock.now());
      clock.setTimeout(() => runs.push(clock.now()), 1_000);
    }, 100);

    await clock.runAll();
    expect(runs).toEqual([100, 500, 1_100]);
    expect(clock.now()).toBe(1_100);
    expect(clock.pending).toBe(0);
  });

  it('runAll fails, naming the limit, when a timer keeps rescheduling itself', async () => {
    const clock = new FakeClock(0);
    let runs = 0;
    const again = (): void => {
      runs++;
      clock.setTimeout(again, 1);
    };
    clock.setTimeout(again, 1);

    await expect(clock.runAll(5)).rejects.toThrow('FakeClock.runAll: more than 5 timers ran; a timer keeps rescheduling itself');
    expect(runs).toBe(5);
  });
});

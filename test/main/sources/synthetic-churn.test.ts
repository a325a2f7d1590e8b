// SyntheticChurn on a FakeClock: each tick applies every change due by then at the configured
// rate (catching up after a late tick), reports them to the sink and flushes it once; it stops
// at `total` or on `stop()`.
import { describe, expect, it } from 'vitest';
import type { Clock, TimerHandle } from '../../../src/main/core/clock.js';
import { SyntheticChurn, type ChangeSink, type ChurnOptions } from '../../../src/main/sources/synthetic/synthetic-churn.js';
import { SyntheticCluster, type SyntheticChange } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { track } from '../../helpers/async.js';
import { ROUTING_STORES } from '../../helpers/cluster.js';
import { FakeClock } from '../../helpers/fake-clock.js';

/** Records each change, and each flush as the batch of changes it closed. */
class RecordingSink implements ChangeSink {
  readonly changes: SyntheticChange[] = [];
  readonly batches: SyntheticChange[][] = [];
  /** `record` and `flush` calls (and anything the test adds) in call order. */
  readonly log: string[] = [];
  #batch: SyntheticChange[] = [];

  record(store: SyntheticChange['store'], kind: SyntheticChange['kind']): void {
    this.changes.push({ store, kind });
    this.#batch.push({ store, kind });
    this.log.push('record');
  }

  flush(): void {
    this.batches.push(this.#batch);
    this.#batch = [];
    this.log.push('flush');
  }

  get batchSizes(): number[] {
    return this.batches.map((b) => b.length);
  }
}

/** A FakeClock whose timers fire `lateBy` ms late while it is set, as when the main thread is held. */
class HeldClock implements Clock {
  lateBy = 0;

  constructor(readonly fake: FakeClock) {}

  now(): number {
    return this.fake.now();
  }

  monotonic(): number {
    return this.fake.monotonic();
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    return this.fake.setTimeout(callback, ms + this.lateBy);
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    this.fake.clearTimeout(handle);
  }
}

const SEED = 42;

/** A populated cluster (20 apps) over fresh stores. */
function populated(): { cluster: SyntheticCluster; stores: StoreProvider } {
  const cluster = new SyntheticCluster({ ingresses: 20, seed: SEED });
  const stores = new StoreProvider(ROUTING_STORES);
  cluster.populate(stores);
  return { cluster, stores };
}

interface Rig {
  readonly churn: SyntheticChurn;
  readonly sink: RecordingSink;
  readonly clock: FakeClock;
  readonly stores: StoreProvider;
}

type RigOptions = Partial<Omit<ChurnOptions, 'cluster' | 'stores' | 'sink'>> & {
  /** The FakeClock behind `clock` (the churn's clock itself when `clock` is not given). */
  readonly fake?: FakeClock;
  readonly sink?: RecordingSink;
};

function rig(options: RigOptions = {}): Rig {
  const { fake = new FakeClock(0), sink = new RecordingSink(), ...churnOptions } = options;
  const { cluster, stores } = populated();
  const churn = new SyntheticChurn({ cluster, stores, sink, rate: 100, tickMs: 10, clock: fake, ...churnOptions });
  return { churn, sink, clock: fake, stores };
}

describe('SyntheticChurn', () => {
  it('applies rate × elapsed time changes, tick by tick', async () => {
    const { churn, sink, clock } = rig({ rate: 200 });
    void churn.start();

    await clock.advance(10);
    expect(churn.applied).toBe(2);
    await clock.advance(40);
    expect(churn.applied).toBe(10);
    await clock.advance(950);
    expect(churn.applied).toBe(200);
    expect(sink.changes).toHaveLength(200);
    churn.stop();
  });

  it('applies the changes the cluster generates to the stores, in order, reporting each to the sink', async () => {
    const { churn, sink, clock, stores } = rig({ rate: 1_000 });
    void churn.start();
    await clock.advance(100);
    churn.stop();

    // The same seed replays the same changes.
    const reference = populated();
    const expected = Array.from({ length: 100 }, () => reference.cluster.change(reference.stores));
    expect(sink.changes).toEqual(expected);
    expect(stores.version).toBe(reference.stores.version);
    expect(stores.snapshot()).toEqual(reference.stores.snapshot());
  });

  it('catches up on every change due when a tick fires late', async () => {
    const fake = new FakeClock(0);
    const held = new HeldClock(fake);
    const { churn, sink } = rig({ clock: held, fake });
    held.lateBy = 200;
    void churn.start();
    held.lateBy = 0;

    await fake.advance(209);
    expect(churn.applied).toBe(0);
    await fake.advance(1);
    // The first tick fired 200 ms late, at 210 ms: 21 changes were due.
    expect(sink.batchSizes).toEqual([21]);
    await fake.advance(10);
    expect(sink.batchSizes).toEqual([21, 1]);
    churn.stop();
  });

  it('flushes the sink once per tick, even on a tick with no change due', async () => {
    const { churn, sink, clock } = rig({ rate: 30 });
    void churn.start();
    await clock.advance(100);
    churn.stop();

    // 30 changes a second: one due by 40, 70 and 100 ms.
    expect(sink.batchSizes).toEqual([0, 0, 0, 1, 0, 0, 1, 0, 0, 1]);
    expect(sink.log.filter((entry) => entry === 'flush')).toHaveLength(10);
  });

  it('ticks every 10 ms by default', () => {
    const { churn, clock } = rig({ tickMs: undefined });
    void churn.start();
    expect(clock.nextDue).toBe(clock.now() + 10);
    churn.stop();
  });

  it('stops at `total` changes, even when more are due, and sets no further timer', async () => {
    const { churn, sink, clock } = rig({ rate: 1_000, total: 25 });
    const done = track(churn.start());
    await clock.advance(30);

    expect(done.done).toBe(true);
    expect(sink.batchSizes).toEqual([10, 10, 5]);
    expect(clock.pending).toBe(0);
    await clock.advance(1_000);
    expect(churn.applied).toBe(25);
    expect(sink.batches).toHaveLength(3);
  });

  it('calls onLastChange once, after the last change and before the flush that reports it', async () => {
    const sink = new RecordingSink();
    const seen: { version: number; applied: number }[] = [];
    const { churn, clock, stores } = rig({
      sink,
      total: 3,
      onLastChange: () => {
        sink.log.push('last change');
        seen.push({ version: stores.version, applied: churn.applied });
      },
    });
    const done = churn.start();
    await clock.advance(30);
    await done;

    expect(sink.log).toEqual(['record', 'flush', 'record', 'flush', 'record', 'last change', 'flush']);
    expect(seen).toEqual([{ version: stores.version, applied: 3 }]);
  });

  it('resolves start() with the monotonic time of the last change', async () => {
    const clock = new FakeClock(0);
    await clock.advance(1_000);
    const { churn } = rig({ total: 5, fake: clock });
    const done = churn.start();
    await clock.runAll();

    // 100 changes a second: the fifth is due 50 ms after the start.
    await expect(done).resolves.toBe(1_050);
  });

  it('ends on stop(): start() resolves with the stop time and nothing more is applied or flushed', async () => {
    const { churn, sink, clock } = rig();
    const done = churn.start();
    await clock.advance(50);
    churn.stop();
    const applied = churn.applied;
    const flushes = sink.batches.length;

    await expect(done).resolves.toBe(50);
    expect(clock.pending).toBe(0);
    await clock.advance(1_000);
    expect(churn.applied).toBe(applied);
    expect(sink.batches).toHaveLength(flushes);
  });

  it('ignores stop() before start and a second stop()', async () => {
    const { churn, clock } = rig();
    churn.stop();
    const done = churn.start();
    await clock.advance(20);
    churn.stop();
    churn.stop();

    await expect(done).resolves.toBe(20);
    expect(churn.applied).toBe(2);
  });

  it('refuses to start while it is running', () => {
    const { churn } = rig();
    void churn.start();
    expect(() => churn.start()).toThrow('the churn is already running');
    churn.stop();
  });

  it('applies nothing at rate 0, still flushing every tick', async () => {
    const { churn, sink, clock } = rig({ rate: 0 });
    void churn.start();
    await clock.advance(30);
    churn.stop();

    expect(churn.applied).toBe(0);
    expect(sink.batchSizes).toEqual([0, 0, 0]);
  });

  for (const rate of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
    it(`rejects rate ${String(rate)} with a TypeError that shows it`, () => {
      expect(() => rig({ rate })).toThrow(TypeError);
      expect(() => rig({ rate })).toThrow(`rate must be a non-negative number, got ${String(rate)}`);
    });
  }

  it('reports the seconds elapsed since start on its clock', async () => {
    const { churn, clock } = rig({ rate: 0 });
    await clock.advance(700);
    void churn.start();
    await clock.advance(1_500);

    expect(churn.elapsedSeconds).toBe(1.5);
    churn.stop();
  });
});

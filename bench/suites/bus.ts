// bus: EventBus publish throughput with 1 and 10 typed subscribers. Two shapes per count:
// "publish" times a batch of synchronous publish() calls only, into non-lossy buffers sized to
// the batch and drained (untimed) after every sample, so nothing is ever dropped; "publish +
// consume" also times live async consumers (one `await next()` loop per subscriber) taking
// every event, which is what a subscriber really pays on the same thread.
import { Bench } from 'tinybench';
import { EventBus, type Subscription } from '../../src/main/bus/event-bus.js';
import { newEvent, type ControllerEvent } from '../../src/main/events/events.js';
import { silentLogger } from '../../src/main/core/logger.js';
import { latencyOf, ratio, timeBudget, type Row, type Suite, type SuiteReport } from '../lib.js';

/** Events published per sample. */
const BATCH = 1_000;
const SUBSCRIBER_COUNTS = [1, 10] as const;
const TYPES = ['resource.index.updated'] as const;

function events(): ControllerEvent[] {
  const out: ControllerEvent[] = [];
  for (let i = 0; i < BATCH; i++) {
    out.push(
      newEvent('resource.index.updated', {
        resourceTypeName: 'endpointslices',
        changeStats: { created: 0, modified: 1, deleted: 0, isInitialSync: false },
      }),
    );
  }
  return out;
}

export const busSuite: Suite = {
  name: 'bus',
  description: 'EventBus.publish throughput, 1 vs 10 subscribers, publish-only and publish + consume',
  async run(): Promise<SuiteReport> {
    const batch = events();
    const bench = new Bench(timeBudget('bus', 400));
    const buses: EventBus<ControllerEvent>[] = [];
    const subscriptions: Subscription<ControllerEvent>[] = [];
    const consumers: Promise<void>[] = [];

    for (const k of SUBSCRIBER_COUNTS) {
      // Publish only: buffers hold one batch and are emptied between samples (untimed).
      const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
      const subs = Array.from({ length: k }, (_, i) => bus.subscribe(`drained-${i}`, { types: TYPES, bufferSize: BATCH }));
      bus.start();
      buses.push(bus);
      subscriptions.push(...subs);
      const drain = (): void => {
        // next() takes a buffered event synchronously; the returned promise is already settled.
        for (const sub of subs) for (let d = sub.depth; d > 0; d--) void sub.next();
      };
      bench.add(
        `publish, ${k} sub`,
        () => {
          for (const event of batch) bus.publish(event);
        },
        { async: false, afterEach: drain },
      );

      // Publish + consume: each subscriber has a live consumer awaiting next().
      const liveBus = new EventBus<ControllerEvent>({ logger: silentLogger() });
      const liveSubs = Array.from({ length: k }, (_, i) => liveBus.subscribe(`consumer-${i}`, { types: TYPES, bufferSize: BATCH }));
      liveBus.start();
      buses.push(liveBus);
      subscriptions.push(...liveSubs);
      let remaining = 0;
      let finished: () => void = () => undefined;
      for (const sub of liveSubs) {
        consumers.push(
          (async () => {
            while ((await sub.next()) !== undefined) {
              if (--remaining === 0) finished();
            }
          })(),
        );
      }
      bench.add(
        `publish + consume, ${k} sub`,
        async () => {
          remaining = BATCH * k;
          const done = new Promise<void>((resolve) => (finished = resolve));
          for (const event of batch) liveBus.publish(event);
          await done;
        },
        { async: true },
      );
    }

    await bench.run();
    for (const sub of subscriptions) sub.close();
    await Promise.all(consumers);

    const droppedCritical = buses.reduce((sum, b) => sum + b.droppedCritical, 0);
    const droppedLossy = buses.reduce((sum, b) => sum + b.droppedLossy, 0);
    if (droppedCritical > 0) throw new Error(`bus suite: ${droppedCritical} critical drops; the buffers were meant never to fill`);

    const results: Row[] = [];
    const perEvent = new Map<string, number>();
    for (const task of bench.tasks) {
      const s = latencyOf(task);
      const k = Number(/(\d+) sub/.exec(task.name)?.[1]);
      const nsPerEvent = (s.meanMs * 1e6) / BATCH;
      perEvent.set(task.name, nsPerEvent);
      results.push({
        task: task.name,
        subscribers: k,
        nsPerEvent,
        p50NsPerEvent: (s.p50Ms * 1e6) / BATCH,
        p99NsPerEvent: (s.p99Ms * 1e6) / BATCH,
        eventsPerSec: (1000 * BATCH) / s.meanMs,
        deliveriesPerSec: (1000 * BATCH * k) / s.meanMs,
        rmePct: s.rmePct,
        samples: s.samples,
      });
    }
    // Per shape, 1 and 10 subscribers side by side, and each shape against publish-only.
    const at = (shape: string, k: number): number => perEvent.get(`${shape}, ${k} sub`) ?? Number.NaN;
    const comparisons: Row[] = (['publish', 'publish + consume'] as const).map((shape) => ({
      shape,
      '1 sub ns/event': at(shape, 1),
      '10 sub ns/event': at(shape, 10),
      '10 sub / 1 sub': ratio(at(shape, 10), at(shape, 1)),
      '/ publish (1 sub)': ratio(at(shape, 1), at('publish', 1)),
      '/ publish (10 sub)': ratio(at(shape, 10), at('publish', 10)),
    }));

    return {
      suite: 'bus',
      description: this.description,
      timing: `tinybench; one sample = ${BATCH} publish() calls (figures are per event)`,
      parameters: {
        batch: BATCH,
        subscriberCounts: SUBSCRIBER_COUNTS,
        subscription: `typed (${TYPES.join(', ')}), non-lossy, bufferSize ${BATCH}`,
        bufferPolicy: 'drained: publish-only buffers are emptied after every sample outside the timed region; live consumers empty theirs inside it',
      },
      results,
      comparisons,
      notes: [
        `critical drops: ${droppedCritical}, lossy drops: ${droppedLossy} (buffers never filled)`,
        'publish-only excludes the consumers; publish + consume includes one await per event per subscriber',
      ],
    };
  },
};

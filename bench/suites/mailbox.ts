// mailbox: the Coordinator's coalescing mailbox under a flood of reconciliation triggers that
// arrives while its consumer is busy rendering (nobody calls next() during the flood). Per flood
// size it times publish() into a Coordinator-style subscription with the `merge` policy
// (mailboxDecision) against a plain appending subscription big enough to hold the whole flood,
// and records what each leaves queued. A one-shot run of the real Coordinator with a blocked
// pipeline checks the end result: a flood of any size costs exactly one extra render.
import { performance } from 'node:perf_hooks';
import { Bench } from 'tinybench';
import { Coordinator } from '../../src/main/reconcile/coordinator.js';
import { EventBus, type MergeDecision, type Subscription } from '../../src/main/bus/event-bus.js';
import { newEvent, type ControllerEvent, type EventOf } from '../../src/main/events/events.js';
import { silentLogger } from '../../src/main/core/logger.js';
import { mailboxDecision, type MailboxItem } from '../../src/main/reconcile/mailbox.js';
import type { PipelineExecutor, PipelineResult } from '../../src/main/pipeline/pipeline.js';
import { StoreProvider } from '../../src/main/stores/store-provider.js';
import { EMPTY_AUXILIARY_FILES } from '../../src/main/pipeline/pipeline.js';
import { latencyOf, ratio, taskOf, timeBudget, type Row, type Suite, type SuiteContext, type SuiteReport } from '../lib.js';

/** The Coordinator's default mailbox capacity. */
const MAILBOX_SIZE = 1_000;
const MAILBOX_TYPES = ['reconciliation.triggered', 'rendergate.completed'] as const;
/** One trigger in this many is not coalescible (an accepted HTTP resource); the rest are resource changes. */
const NON_COALESCIBLE_EVERY = 100;

type Trigger = EventOf<'reconciliation.triggered'>;

function flood(size: number): Trigger[] {
  const out: Trigger[] = [];
  for (let i = 0; i < size; i++) {
    const plain = (i + 1) % NON_COALESCIBLE_EVERY === 0;
    out.push(
      newEvent('reconciliation.triggered', plain ? { reason: 'http_resource_accepted', coalescible: false } : { reason: 'resource_change', coalescible: true }),
    );
  }
  return out;
}

/** A pipeline whose first execute blocks until released: the Coordinator stays busy meanwhile. */
class BlockedPipeline implements PipelineExecutor {
  calls = 0;
  active = 0;
  #release!: () => void;
  readonly #gate = new Promise<void>((resolve) => (this.#release = resolve));
  #entered!: () => void;
  readonly entered = new Promise<void>((resolve) => (this.#entered = resolve));

  release(): void {
    this.#release();
  }

  async execute(_signal: AbortSignal, stores: StoreProvider): Promise<PipelineResult> {
    this.calls++;
    this.active++;
    this.#entered();
    try {
      await this.#gate;
      return {
        renderId: `render-${this.calls}`,
        haproxyConfig: '',
        auxiliaryFiles: EMPTY_AUXILIARY_FILES,
        checksum: '',
        storeVersion: stores.version,
        timings: { renderMs: 0, validateMs: 0, totalMs: 0 },
        warnings: [],
        rejections: [],
      };
    } finally {
      this.active--;
    }
  }
}

async function macrotask(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The real Coordinator, busy on a first render while `triggers` arrive; hand-timed once. */
async function coordinatorUnderFlood(triggers: readonly Trigger[]): Promise<Row> {
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  bus.start();
  const pipeline = new BlockedPipeline();
  const coordinator = new Coordinator({ eventBus: bus, pipeline, storeProvider: new StoreProvider(), logger: silentLogger() });
  const leadership = new AbortController();
  const running = coordinator.start(leadership.signal);
  await coordinator.whenReady();
  bus.publish(newEvent('reconciliation.triggered', { reason: 'index_synchronized', coalescible: false }));
  await pipeline.entered;

  const t0 = performance.now();
  for (const trigger of triggers) bus.publish(trigger);
  const publishMs = performance.now() - t0;

  pipeline.release();
  // Settled: nothing in flight and no further execute for a few macrotask turns.
  let quiet = 0;
  for (let turn = 0; turn < 10_000 && quiet < 5; turn++) {
    const before = pipeline.calls;
    await macrotask();
    quiet = pipeline.active === 0 && pipeline.calls === before ? quiet + 1 : 0;
  }
  leadership.abort();
  await running;
  return {
    flood: triggers.length,
    publishMs,
    nsPerTrigger: (publishMs * 1e6) / triggers.length,
    renders: coordinator.stats.renders,
    extraRendersCausedByFlood: coordinator.stats.renders - 1,
    coalesced: coordinator.stats.coalesced,
    droppedCritical: bus.droppedCritical,
  };
}

/** A plain subscription without merge, at the Coordinator's capacity: what a flood does to it. */
function dropsWithoutMerge(triggers: readonly Trigger[]): number {
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  bus.start();
  const sub = bus.subscribe('no-merge', { types: MAILBOX_TYPES, bufferSize: MAILBOX_SIZE, leaderOnly: true });
  for (const trigger of triggers) bus.publish(trigger);
  sub.close();
  return bus.droppedCritical;
}

export const mailboxSuite: Suite = {
  name: 'mailbox',
  description: 'Coordinator mailbox (merge = mailboxDecision) vs plain append under a trigger flood while the consumer is busy',
  async run(context: SuiteContext): Promise<SuiteReport> {
    const bench = new Bench(timeBudget('mailbox', 300));
    /** The most items left queued after any flood sample, per task. */
    const depthAfter = new Map<string, number>();
    const coalescedBy = new Map<string, number>();
    const subscriptions: Subscription<MailboxItem>[] = [];
    const buses: EventBus<ControllerEvent>[] = [];

    for (const size of context.sizes) {
      const triggers = flood(size);
      for (const variant of ['merge', 'append'] as const) {
        const name = `${variant}, flood ${size}`;
        const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
        bus.start();
        buses.push(bus);
        let coalesced = 0;
        const sub = bus.subscribe(`coordinator-${variant}`, {
          types: MAILBOX_TYPES,
          leaderOnly: true,
          ...(variant === 'merge'
            ? {
                bufferSize: MAILBOX_SIZE,
                merge: (last: MailboxItem, incoming: MailboxItem): MergeDecision => {
                  const decision = mailboxDecision(last, incoming);
                  if (decision !== 'append') coalesced++;
                  return decision;
                },
              }
            : { bufferSize: size }),
        });
        subscriptions.push(sub);
        depthAfter.set(name, 0);
        bench.add(
          name,
          () => {
            for (const trigger of triggers) bus.publish(trigger);
          },
          {
            async: false,
            // The consumer finishes its render and empties the mailbox, outside the timed region.
            afterEach: () => {
              depthAfter.set(name, Math.max(depthAfter.get(name) ?? 0, sub.depth));
              for (let d = sub.depth; d > 0; d--) void sub.next();
            },
            afterAll: () => {
              coalescedBy.set(name, coalesced);
            },
          },
        );
      }
    }
    await bench.run();
    for (const sub of subscriptions) sub.close();
    const criticalInBench = buses.reduce((sum, b) => sum + b.droppedCritical, 0);

    const results: Row[] = bench.tasks.map((task) => {
      const s = latencyOf(task);
      const size = Number(/flood (\d+)/.exec(task.name)?.[1]);
      return {
        task: task.name,
        flood: size,
        nsPerTrigger: (s.meanMs * 1e6) / size,
        p99NsPerTrigger: (s.p99Ms * 1e6) / size,
        floodMs: s.meanMs,
        maxQueuedAfterFlood: depthAfter.get(task.name) ?? null,
        rmePct: s.rmePct,
        samples: s.samples,
      };
    });

    const comparisons: Row[] = [];
    const coordinatorRuns: Row[] = [];
    for (const size of context.sizes) {
      const merge = latencyOf(taskOf(bench, `merge, flood ${size}`));
      const append = latencyOf(taskOf(bench, `append, flood ${size}`));
      const run = await coordinatorUnderFlood(flood(size));
      coordinatorRuns.push(run);
      comparisons.push({
        flood: size,
        mergeNsPerTrigger: (merge.meanMs * 1e6) / size,
        appendNsPerTrigger: (append.meanMs * 1e6) / size,
        'merge/append time': ratio(merge.meanMs, append.meanMs),
        queuedMerge: depthAfter.get(`merge, flood ${size}`) ?? null,
        queuedAppend: depthAfter.get(`append, flood ${size}`) ?? null,
        criticalDropsNoMergeAt1000: dropsWithoutMerge(flood(size)),
        coordinatorRenders: run.renders,
        coordinatorCoalesced: run.coalesced,
      });
    }

    return {
      suite: 'mailbox',
      description: this.description,
      timing: 'tinybench for the subscription floods (one sample = one whole flood); the real-Coordinator run is hand-timed once per size (performance.now)',
      parameters: {
        floodSizes: context.sizes,
        mailboxSize: MAILBOX_SIZE,
        triggerMix: `resource_change (coalescible); every ${NON_COALESCIBLE_EVERY}th is http_resource_accepted (not coalescible)`,
        merge: 'mailboxDecision, counting non-append decisions as the Coordinator does',
        append: 'no merge policy, bufferSize = flood size (so nothing drops)',
      },
      results,
      comparisons,
      notes: [
        `critical drops during the timed floods: ${criticalInBench}`,
        'queued = items left in the mailbox after the flood; the consumer had taken the trigger it is rendering before the flood began',
        'criticalDropsNoMergeAt1000: the same flood into a plain subscription at the Coordinator capacity (1000) without merge',
        'coordinatorRenders: the real Coordinator, busy on one render while the flood arrives, renders once more afterwards (details.coordinatorRuns)',
      ],
      details: { coordinatorRuns },
    };
  },
};

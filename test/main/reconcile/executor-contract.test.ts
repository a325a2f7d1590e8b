// The PipelineExecutor contract as an embedder meets it: SPEC §7's minimal result (no
// `rejections`) renders, and no malformed result can end the Coordinator's loop.
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/main/bus/event-bus.js';
import type { ControllerEvent, EventOf, EventType } from '../../../src/main/events/events.js';
import { toPipelineResult, type ExecuteOptions, type PipelineExecutor, type PipelineMode, type PipelineResult } from '../../../src/main/pipeline/pipeline.js';
import { readPipelineResult } from '../../../src/main/pipeline/result-check.js';
import { Coordinator } from '../../../src/main/reconcile/coordinator.js';
import { StoreProvider } from '../../../src/main/stores/store-provider.js';
import { waitUntil } from '../../helpers/async.js';
import { trigger } from '../../helpers/events.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { silentLogger } from '../../helpers/loggers.js';

/** SPEC §7's PipelineResult with only the fields it requires: what a hand-written executor returns. */
function minimalResult(n: number): PipelineResult {
  return {
    renderId: `render-${n}`,
    haproxyConfig: `global\n  # ${n}\n`,
    auxiliaryFiles: { maps: {}, files: {}, certificates: {} },
    checksum: `sha256:${n}`,
    storeVersion: n,
    timings: { renderMs: 1, validateMs: 1, totalMs: 2 },
    warnings: [],
  };
}

/** An embedder's executor that answers each call with the next value of a script. */
class ScriptedExecutor implements PipelineExecutor {
  calls = 0;
  constructor(private readonly answers: readonly (() => unknown)[]) {}

  execute(_signal: AbortSignal, _stores: StoreProvider, _mode: PipelineMode, _options?: ExecuteOptions): Promise<PipelineResult> {
    const answer = this.answers[Math.min(this.calls, this.answers.length - 1)] as () => unknown;
    this.calls++;
    return Promise.resolve(answer() as PipelineResult);
  }
}

let stop: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stop?.();
  stop = undefined;
});

async function runWith(executor: PipelineExecutor): Promise<{ bus: EventBus<ControllerEvent>; ofType: <T extends EventType>(t: T) => EventOf<T>[] }> {
  const bus = new EventBus<ControllerEvent>({ logger: silentLogger() });
  const seen: ControllerEvent[] = [];
  const spy = bus.subscribe('test', { bufferSize: 1000 });
  const controller = new AbortController();
  void (async () => {
    for await (const event of spy) seen.push(event);
  })();
  const coordinator = new Coordinator({ eventBus: bus, pipeline: executor, storeProvider: new StoreProvider(), logger: silentLogger(), clock: new FakeClock() });
  bus.start();
  const running = coordinator.start(controller.signal);
  await coordinator.whenReady();
  stop = async () => {
    controller.abort();
    await running;
    spy.close();
  };
  return { bus, ofType: <T extends EventType>(type: T) => seen.filter((e): e is EventOf<T> => e.type === type) };
}

async function completions(h: { ofType: <T extends EventType>(t: T) => EventOf<T>[] }, n: number): Promise<void> {
  await waitUntil(() => h.ofType('reconciliation.completed').length >= n, `${n} reconciliation.completed`);
}

describe('PipelineExecutor contract', () => {
  it("renders SPEC's minimal result, which has no rejections, as a success with no rejection counted", async () => {
    const executor = new ScriptedExecutor([() => minimalResult(1), () => minimalResult(2)]);
    const h = await runWith(executor);

    h.bus.publish(trigger());
    await completions(h, 1);
    h.bus.publish(trigger('index_synchronized', false));
    await completions(h, 2);

    expect(h.ofType('template.rendered').map((e) => [e.renderId, e.rejectionCounts])).toEqual([
      ['render-1', {}],
      ['render-2', {}],
    ]);
    expect(h.ofType('reconciliation.failed')).toHaveLength(0);
  });

  it.each([
    ['a number', () => 42, /the pipeline result is not an object \(got a number\)/],
    ['an array', () => [], /the pipeline result is not an object \(got an array\)/],
    ['a result without a config', () => ({ ...minimalResult(1), haproxyConfig: undefined }), /haproxyConfig is not a string \(got nothing\)/],
    ['rejections that are not a list', () => ({ ...minimalResult(1), rejections: 'none' }), /rejections is not an array/],
    ['a rejection without a reason', () => ({ ...minimalResult(1), rejections: [{ kind: 'Ingress', namespace: 'a', name: 'b', scope: 'object' }] }), /rejections\[0\]\.reason is not a string/],
    ['a map that is not text', () => ({ ...minimalResult(1), auxiliaryFiles: { maps: { 'a.map': 7 }, files: {}, certificates: {} } }), /auxiliaryFiles\.maps\["a\.map"\] is not a string/],
    ['a storeVersion of NaN', () => ({ ...minimalResult(1), storeVersion: Number.NaN }), /storeVersion is not a finite number/],
    ['a patch whose edits are not a list', () => ({ ...minimalResult(1), patch: { from: 'render-0', edits: { config: 'all' } } }), /patch\.edits\["config"\] is not an array/],
    ['a patch with a negative offset', () => ({ ...minimalResult(1), patch: { from: 'render-0', edits: { config: [{ at: -1, remove: 0, text: '' }] } } }), /patch\.edits\["config"\]\[0\] has offsets that are not whole numbers from 0/],
    [
      'a result whose getter throws',
      () =>
        Object.defineProperty({ ...minimalResult(1) }, 'checksum', {
          get() {
            throw new Error('exploded');
          },
        }),
      /the pipeline result could not be read: exploded/,
    ],
  ])('turns %s into a render failure with a clear message, and renders the next trigger', async (_what, garbage, message) => {
    const executor = new ScriptedExecutor([garbage, () => minimalResult(2)]);
    const h = await runWith(executor);

    h.bus.publish(trigger());
    await completions(h, 1);
    const [failed] = h.ofType('reconciliation.failed');
    expect(failed?.phase).toBe('render');
    expect(failed?.error).toMatch(/^render failed: /);
    expect(failed?.error).toMatch(message);
    expect(h.ofType('reconciliation.completed')[0]?.outcome).toBe('failure');

    h.bus.publish(trigger());
    await completions(h, 2);
    expect(h.ofType('template.rendered').map((e) => e.renderId)).toEqual(['render-2']);
    expect(executor.calls).toBe(2);
  });
});

describe('readPipelineResult', () => {
  it('copies a well-formed result, so a later change by the executor does not reach the Coordinator', () => {
    const raw = { ...minimalResult(3), warnings: ['w'] } as { warnings: string[] } & PipelineResult;
    const read = readPipelineResult(raw);
    raw.warnings.push('late');
    expect(read.warnings).toEqual(['w']);
    expect(read.rejections).toEqual([]);
  });

  it("takes a result of this package's executors as it is: frozen, and read without a copy", () => {
    const built = toPipelineResult({ ok: true, ...minimalResult(4), rejections: [] });
    expect(Object.isFrozen(built)).toBe(true);
    expect(readPipelineResult(built)).toBe(built);
    // The same fields in an object of the executor's own are copied all the same.
    const lookalike = { ...built };
    expect(readPipelineResult(lookalike)).not.toBe(lookalike);
    expect(readPipelineResult(lookalike)).toEqual(built);
  });

  it('reads a patch as the render it edits and its edits, copied', () => {
    const edits = [{ at: 4, remove: 2, text: 'xy' }];
    const read = readPipelineResult({ ...minimalResult(3), patch: { from: 'render-2', edits: { config: edits } } });
    edits.push({ at: 9, remove: 0, text: 'late' });
    expect(read.patch).toEqual({ from: 'render-2', edits: { config: [{ at: 4, remove: 2, text: 'xy' }] } });
  });
});

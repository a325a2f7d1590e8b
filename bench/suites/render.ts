// render: InlinePipeline render + validate of the default template set on the main thread, per N.
// Cold: every sample builds a new InlinePipeline (template compile + dry render) and renders
// stores freshly filled with new objects, so no per-object cache (guard verdicts) helps it.
// Warm: one InlinePipeline renders the same stores again after one EndpointSlice changed, which
// is the steady state of a controller. Store filling and the change are outside the timing.
import { performance } from 'node:perf_hooks';
import { Bench, type HookMode } from 'tinybench';
import { InlinePipeline } from '../../src/main/inline-pipeline.js';
import type { PipelineResult } from '../../src/main/pipeline.js';
import type { StoreProvider } from '../../src/main/store-provider.js';
import {
  bySize,
  fixedIterations,
  latencyOf,
  mean,
  OneObjectChanger,
  populatedStores,
  ratio,
  taskOf,
  type Row,
  type Suite,
  type SuiteContext,
  type SuiteReport,
} from '../lib.js';

interface Split {
  constructMs: number[];
  renderMs: number[];
  validateMs: number[];
  configBytes: number;
  warnings: number;
}

function newSplit(): Split {
  return { constructMs: [], renderMs: [], validateMs: [], configBytes: 0, warnings: 0 };
}

function record(split: Split, phase: HookMode, result: PipelineResult, constructMs = 0): void {
  if (phase !== 'run') return;
  split.constructMs.push(constructMs);
  split.renderMs.push(result.timings.renderMs);
  split.validateMs.push(result.timings.validateMs);
  split.configBytes = Buffer.byteLength(result.haproxyConfig);
  split.warnings = Math.max(split.warnings, result.warnings.length);
}

export const renderSuite: Suite = {
  name: 'render',
  description: 'InlinePipeline render + validate per N, cold (new pipeline, fresh objects) vs warm (1 object changed)',
  async run(context: SuiteContext): Promise<SuiteReport> {
    const set = context.templateSet;
    const signal = new AbortController().signal;
    const results: Row[] = [];
    const comparisons: Row[] = [];
    const iterations: Record<string, unknown> = {};

    for (const n of context.sizes) {
      const coldIterations = bySize(n, 10, 5, 3);
      const warmIterations = bySize(n, 20, 10, 5);
      iterations[`N=${n}`] = { cold: coldIterations, warm: warmIterations, coldWarmup: 1, warmWarmup: 2 };

      // Cold: a new pipeline and new objects every sample.
      const coldSplit = newSplit();
      let coldPhase: HookMode = 'warmup';
      let fresh: StoreProvider | undefined;
      const cold = new Bench(fixedIterations(`render cold N=${n}`, coldIterations, 1));
      cold.add(
        'cold',
        async () => {
          const t0 = performance.now();
          const pipeline = new InlinePipeline({ templateSet: set });
          const constructMs = performance.now() - t0;
          record(coldSplit, coldPhase, await pipeline.execute(signal, fresh as StoreProvider, 'reconcile'), constructMs);
        },
        {
          async: true,
          beforeAll: (mode) => {
            coldPhase = mode ?? 'run';
          },
          beforeEach: () => {
            fresh = populatedStores(set, n).stores;
          },
          afterEach: () => {
            fresh = undefined;
          },
        },
      );
      await cold.run();

      // Warm: the same pipeline and stores; one EndpointSlice changes before every sample.
      const warmSplit = newSplit();
      let warmPhase: HookMode = 'warmup';
      const { stores, cluster } = populatedStores(set, n);
      const changer = new OneObjectChanger(stores, cluster, n);
      const pipeline = new InlinePipeline({ templateSet: set });
      await pipeline.execute(signal, stores, 'reconcile');
      const warm = new Bench(fixedIterations(`render warm N=${n}`, warmIterations, 2));
      warm.add(
        'warm',
        async () => {
          record(warmSplit, warmPhase, await pipeline.execute(signal, stores, 'reconcile'));
        },
        {
          async: true,
          beforeAll: (mode) => {
            warmPhase = mode ?? 'run';
          },
          beforeEach: () => changer.change(),
        },
      );
      await warm.run();

      const c = latencyOf(taskOf(cold, 'cold'));
      const w = latencyOf(taskOf(warm, 'warm'));
      for (const [label, s, split] of [
        ['cold', c, coldSplit],
        ['warm', w, warmSplit],
      ] as const) {
        results.push({
          task: `render ${label}`,
          n,
          meanMs: s.meanMs,
          p50Ms: s.p50Ms,
          p99Ms: s.p99Ms,
          minMs: s.minMs,
          maxMs: s.maxMs,
          rmePct: s.rmePct,
          samples: s.samples,
          constructMs: label === 'cold' ? mean(split.constructMs) : null,
          renderPhaseMs: mean(split.renderMs),
          validatePhaseMs: mean(split.validateMs),
          configBytes: split.configBytes,
          warnings: split.warnings,
        });
      }
      comparisons.push({
        n,
        coldMs: c.meanMs,
        warmMs: w.meanMs,
        'cold/warm': ratio(c.meanMs, w.meanMs),
        coldP50Ms: c.p50Ms,
        warmP50Ms: w.p50Ms,
        'cold/warm p50': ratio(c.p50Ms, w.p50Ms),
        warmUsPerIngress: (w.meanMs * 1000) / n,
        warmRenderMs: mean(warmSplit.renderMs),
        warmValidateMs: mean(warmSplit.validateMs),
        configKiB: warmSplit.configBytes / 1024,
      });
    }

    return {
      suite: 'render',
      description: this.description,
      timing: 'tinybench with fixed iteration counts (time budget 0); each sample is one execute, awaited',
      parameters: { sizes: context.sizes, iterations, templateSet: set.hash },
      results,
      comparisons,
      notes: [
        'cold = new InlinePipeline (template compile + dry render, reported as constructMs) + render + validate of stores filled with new objects (cold per-object caches); JIT is warm after the warm-up sample',
        'warm = same InlinePipeline and stores, one EndpointSlice replaced before each sample (untimed)',
        'renderPhaseMs / validatePhaseMs are the pipeline\'s own timings of the measured samples',
        'all of it runs on the main thread: this is the baseline the PoolPipeline moves to workers',
      ],
    };
  },
};

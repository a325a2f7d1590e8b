// render: InlinePipeline render + validate of the default template set on the main thread, per N.
// Cold: every sample builds a new InlinePipeline (template compile + dry render) and renders
// stores freshly filled with new objects, so no per-object cache (guard verdicts) helps it.
// Warm: one InlinePipeline renders the same stores again after one EndpointSlice (or one Ingress)
// changed, with the previous output as baseline: the steady state of a controller, where renders
// are incremental. Store filling and the change are outside the timing.
import { performance } from 'node:perf_hooks';
import { Bench, type HookMode } from 'tinybench';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import type { StoreProvider } from '../../src/main/stores/store-provider.js';
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

      // Warm: the same pipeline and stores; one object changes before every sample, and the
      // previous output is the baseline, as the coordinator runs it. One bench per change kind.
      const warmRun = async (kind: 'endpointslice' | 'ingress'): Promise<{ bench: Bench; split: Split }> => {
        const split = newSplit();
        let phase: HookMode = 'warmup';
        const { stores, cluster } = populatedStores(set, n);
        const changer = new OneObjectChanger(stores, cluster, n, kind);
        const pipeline = new InlinePipeline({ templateSet: set });
        let last = await pipeline.execute(signal, stores, 'reconcile');
        const bench = new Bench(fixedIterations(`render warm (${kind}) N=${n}`, warmIterations, 2));
        bench.add(
          'warm',
          async () => {
            last = await pipeline.execute(signal, stores, 'reconcile', { baseline: { haproxyConfig: last.haproxyConfig, auxiliaryFiles: last.auxiliaryFiles } });
            record(split, phase, last);
          },
          {
            async: true,
            beforeAll: (mode) => {
              phase = mode ?? 'run';
            },
            beforeEach: () => changer.change(),
          },
        );
        await bench.run();
        return { bench, split };
      };
      const { bench: warm, split: warmSplit } = await warmRun('endpointslice');
      const { bench: warmIngress, split: ingressSplit } = await warmRun('ingress');

      const c = latencyOf(taskOf(cold, 'cold'));
      const w = latencyOf(taskOf(warm, 'warm'));
      const wi = latencyOf(taskOf(warmIngress, 'warm'));
      for (const [label, s, split] of [
        ['cold', c, coldSplit],
        ['warm', w, warmSplit],
        ['warm ingress', wi, ingressSplit],
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
        warmIngressMs: wi.meanMs,
        'warm ingress/cold': ratio(wi.meanMs, c.meanMs),
        'warm slice/cold': ratio(w.meanMs, c.meanMs),
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
        'warm = same InlinePipeline and stores, one EndpointSlice replaced before each sample (untimed); warm ingress = the same with one Ingress path changed; the previous output is the baseline',
        'renderPhaseMs / validatePhaseMs are the pipeline\'s own timings of the measured samples',
        'all of it runs on the main thread: this is the baseline the PoolPipeline moves to workers',
      ],
    };
  },
};

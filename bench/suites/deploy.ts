// deploy: the Deployer's config diff (diffRenders) on pairs of real renders of the default template
// set at N apps. Per N: one EndpointSlice moved (a runtime address change), one Ingress path
// changed (map operations), two identical renders, and the worst case for the config: the first
// and the last backend changed, so the changed window is the whole config. Alternatives: indexing
// both whole configs (what the window saves), and the floor of reading both once (String.split).
// Linear means the worst case's cost per config byte stays flat as N grows. Rendering is untimed.
import { Bench } from 'tinybench';
import { diffRenders, type DiffInput } from '../../src/main/deploy/config-diff.js';
import { indexConfig } from '../../src/main/deploy/config-index.js';
import { InlinePipeline } from '../../src/main/pipeline/inline-pipeline.js';
import type { PipelineResult } from '../../src/main/pipeline/pipeline.js';
import type { TemplateSetSource } from '../../src/worker/protocol.js';
import { bySize, fixedIterations, latencyOf, OneObjectChanger, populatedStores, ratio, taskOf, type Row, type Suite, type SuiteContext, type SuiteReport } from '../lib.js';

const TASKS = [
  'endpoint moved',
  'ingress path changed',
  'identical',
  'worst case: first and last backend changed',
  'alternative: index both whole configs',
  'floor: split both configs into lines',
] as const;

/** `config` with the first and the last server address changed: the diff must index all of it. */
function changeBothEnds(config: string): string {
  const first = config.indexOf('  server srv1 ');
  const last = config.lastIndexOf('  server srv1 ');
  const swap = (text: string, at: number): string => {
    const end = text.indexOf('\n', at);
    return `${text.slice(0, at)}  server srv1 10.255.255.254:1${text.slice(end)}`;
  };
  return swap(swap(config, last), first);
}

interface Pair {
  readonly before: DiffInput;
  readonly after: DiffInput;
}

/** A render of N apps, then one after a single object of `kind` changed (the first as baseline). */
async function renderPair(set: TemplateSetSource, n: number, kind: 'endpointslice' | 'ingress'): Promise<Pair> {
  const signal = new AbortController().signal;
  const { stores, cluster } = populatedStores(set, n);
  const pipeline = new InlinePipeline({ templateSet: set });
  const before = await pipeline.execute(signal, stores, 'reconcile');
  const baseline = { haproxyConfig: before.haproxyConfig, auxiliaryFiles: before.auxiliaryFiles };
  const changer = new OneObjectChanger(stores, cluster, n, kind);
  // The changer's first generations can leave a slice's addresses as they were: change until the render differs.
  for (let attempt = 0; attempt < 6; attempt++) {
    changer.change();
    const after: PipelineResult = await pipeline.execute(signal, stores, 'reconcile', { baseline });
    if (after.checksum !== before.checksum) return { before, after };
  }
  throw new Error(`no ${kind} change altered the render at N=${n}`);
}

export const deploySuite: Suite = {
  name: 'deploy',
  description: 'config diff (diffRenders) per N: one endpoint moved, one path changed, identical; vs reading both configs once',
  async run(context: SuiteContext): Promise<SuiteReport> {
    const set = context.templateSet;
    const results: Row[] = [];
    const comparisons: Row[] = [];
    const outcomes: Record<string, unknown> = {};
    const perByte = new Map<number, number>();

    for (const n of context.sizes) {
      const slice = await renderPair(set, n, 'endpointslice');
      const path = await renderPair(set, n, 'ingress');
      const ends: DiffInput = { ...slice.before, haproxyConfig: changeBothEnds(slice.before.haproxyConfig) };
      const bytes = slice.before.haproxyConfig.length + slice.after.haproxyConfig.length;
      let sink = 0;
      const bench = new Bench(fixedIterations(`deploy N=${n}`, bySize(n, 200, 50, 10), bySize(n, 20, 5, 2)));
      bench
        .add(TASKS[0], () => {
          sink += diffRenders(slice.before, slice.after).runtimeOps.length;
        })
        .add(TASKS[1], () => {
          sink += diffRenders(path.before, path.after).runtimeOps.length;
        })
        .add(TASKS[2], () => {
          // Equal texts, distinct strings: the comparison cannot short-circuit on identity.
          sink += diffRenders(slice.after, { ...slice.after, haproxyConfig: `${slice.after.haproxyConfig} `.slice(0, -1) }).runtimeOps.length;
        })
        .add(TASKS[3], () => {
          sink += diffRenders(slice.before, ends).runtimeOps.length;
        })
        .add(TASKS[4], () => {
          sink += indexConfig(slice.before.haproxyConfig).sections.length + indexConfig(ends.haproxyConfig).sections.length;
        })
        .add(TASKS[5], () => {
          sink += slice.before.haproxyConfig.split('\n').length + ends.haproxyConfig.split('\n').length;
        });
      await bench.run();

      const moved = diffRenders(slice.before, slice.after);
      const changed = diffRenders(path.before, path.after);
      outcomes[`N=${n}`] = {
        'endpoint moved': { ops: moved.runtimeOps.map((op) => op.type), structural: moved.structural },
        'worst case': { ops: diffRenders(slice.before, ends).runtimeOps.map((op) => op.type) },
        'ingress path changed': { ops: changed.runtimeOps.map((op) => op.type), structural: changed.structural },
        sink,
      };
      const stats = TASKS.map((task) => latencyOf(taskOf(bench, task)));
      TASKS.forEach((task, i) => {
        const s = stats[i] as ReturnType<typeof latencyOf>;
        results.push({ task, n, configBytes: bytes / 2, meanMs: s.meanMs, p50Ms: s.p50Ms, p99Ms: s.p99Ms, rmePct: s.rmePct, samples: s.samples, nsPerConfigByte: (s.meanMs * 1e6) / bytes });
      });
      const [endpoint, path2, identical, worst, whole, floor] = stats as ReturnType<typeof latencyOf>[] as [
        ReturnType<typeof latencyOf>,
        ReturnType<typeof latencyOf>,
        ReturnType<typeof latencyOf>,
        ReturnType<typeof latencyOf>,
        ReturnType<typeof latencyOf>,
        ReturnType<typeof latencyOf>,
      ];
      perByte.set(n, (worst.meanMs * 1e6) / bytes);
      comparisons.push({
        n,
        configMiB: bytes / 2 / 2 ** 20,
        endpointMovedMs: endpoint.meanMs,
        pathChangedMs: path2.meanMs,
        identicalMs: identical.meanMs,
        worstCaseMs: worst.meanMs,
        wholeIndexMs: whole.meanMs,
        floorMs: floor.meanMs,
        'whole index/endpoint moved': ratio(whole.meanMs, endpoint.meanMs),
        'worst case/floor': ratio(worst.meanMs, floor.meanMs),
        worstNsPerConfigByte: (worst.meanMs * 1e6) / bytes,
      });
    }
    const sizes = [...perByte.keys()];
    const smallest = perByte.get(sizes[0] as number) ?? Number.NaN;
    const largest = perByte.get(sizes[sizes.length - 1] as number) ?? Number.NaN;

    return {
      suite: 'deploy',
      description: this.description,
      timing: 'tinybench with fixed iteration counts (time budget 0); each sample is one diffRenders call on the main thread',
      parameters: { sizes: context.sizes, templateSet: set.hash },
      results,
      comparisons,
      notes: [
        'pairs are real renders of the default template set (InlinePipeline, previous render as baseline so server slots stay put); rendering is not timed',
        'endpoint moved / path changed: only the sections around the change are indexed; the rest of the configs is compared natively (64 KiB slices)',
        'worst case = the first and the last backend changed: the window is the whole config; alternative = indexConfig on both whole configs; floor = String.split of both into lines',
        `linearity: worst-case ns per config byte at the largest N / at the smallest N = ${ratio(largest, smallest) ?? 'n/a'} (about 1 is linear; a quadratic diff would grow with N)`,
      ],
      details: { outcomes },
    };
  },
};

#!/usr/bin/env node
// Command line entry: `haptic-reconciler <command>`. Commands are thin: they wire the engine's
// components together and print; all logic lives in the components.
import { Command, Option } from 'commander';
import { resolve } from 'node:path';
import { runDemo } from '../tools/demo.js';
import { checkConfigFile, haproxyVersion } from '../haproxy/haproxy-check.js';
import { runLoadtest, runLoadtestChild, type LoadtestMode } from '../tools/loadtest/loadtest.js';
import { loadManifests } from '../sources/manifest/manifest-loader.js';
import { PipelineError } from '../pipeline/pipeline.js';
import { PoolPipeline } from '../pipeline/pool/pool-pipeline.js';
import { outputDirs, writeRenderOutput } from '../output/render-output.js';
import { StoreProvider } from '../stores/store-provider.js';
import { DEFAULT_TEMPLATE_SET_PATH, loadTemplateSet, parseSetOverrides } from '../template-set/template-set.js';
import { defaultLogger } from '../core/logger.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

const program = new Command();
program
  .name('haptic-reconciler')
  .description('Turns Kubernetes cluster changes into validated HAProxy configuration, off the main thread.')
  .version('0.1.0');

program
  .command('render')
  .description('render and validate a directory of Kubernetes manifests once')
  .requiredOption('--manifests <dir>', 'directory of Kubernetes YAML/JSON (multi-document files allowed)')
  .requiredOption('--out <dir>', 'output directory for haproxy.cfg, maps/, files/, certs/')
  .option('--templates <file>', 'template set YAML', DEFAULT_TEMPLATE_SET_PATH)
  .option('--set <key=value>', 'override a template value (repeatable)', collect, [])
  .option('--check', 'also run `haproxy -c` on the output when HAProxy is installed', false)
  .addOption(new Option('--threads <n>', 'worker threads').argParser((v) => Number.parseInt(v, 10)))
  .action(async (opts: { manifests: string; out: string; templates: string; set: string[]; check: boolean; threads?: number }) => {
    process.exitCode = await renderCommand(opts);
  });

program
  .command('demo')
  .description('the example cluster plus synthetic churn, through the real bus, Reconciler, Coordinator and pool')
  .option('--duration <seconds>', 'how long to run', (v) => Number.parseFloat(v), 20)
  .option('--rate <changes/s>', 'synthetic changes per second', (v) => Number.parseFloat(v), 200)
  .option('--ingresses <n>', 'synthetic Ingresses added to the example cluster', (v) => Number.parseInt(v, 10), 500)
  .option('--out <dir>', 'where the final config is written', 'out/demo')
  .option('--seed <n>', 'random seed for the churn', (v) => Number.parseInt(v, 10), 1)
  .action(async (opts: { duration: number; rate: number; ingresses: number; out: string; seed: number }) => {
    process.exitCode = await runDemo({ ...opts, out: resolve(opts.out) });
  });

program
  .command('loadtest')
  .description('synthetic event flood: main-thread responsiveness with the inline executor vs the worker pool, each in a fresh child process')
  .option('--ingresses <n>', 'synthetic Ingresses (each with a Service and an EndpointSlice)', (v) => Number.parseInt(v, 10), 5000)
  .option('--rate <changes/s>', 'synthetic changes per second', (v) => Number.parseFloat(v), 5000)
  .option('--duration <seconds>', 'how long the flood lasts', (v) => Number.parseFloat(v), 10)
  .addOption(new Option('--mode <mode>', 'executor(s) to measure').choices(['inline', 'pool', 'both']).default('both'))
  .option('--seed <n>', 'random seed of the cluster and the flood', (v) => Number.parseInt(v, 10), 1)
  .option('--json <file>', 'write the JSON report here')
  .option('--markdown <file>', 'also write the Markdown summary here (it is always printed)')
  .option('--svg <file>', 'write an SVG chart of main event-loop delay over time here')
  .option('--rss-svg <file>', 'write an SVG chart of RSS and heap over time here (default with --svg: next to it, as <name>-rss.svg)')
  .addOption(new Option('--threads <n>', 'worker threads of the pool').argParser((v) => Number.parseInt(v, 10)))
  .addOption(new Option('--child <mode>', 'internal: run one mode in this process').choices(['inline', 'pool']).hideHelp())
  .action(
    async (opts: {
      ingresses: number;
      rate: number;
      duration: number;
      mode: LoadtestMode | 'both';
      seed: number;
      json?: string;
      markdown?: string;
      svg?: string;
      rssSvg?: string;
      threads?: number;
      child?: LoadtestMode;
    }) => {
      const { child, json, markdown, svg, rssSvg: rssSvgOption, ...flood } = opts;
      // By default the memory chart goes next to the event-loop delay chart: a.svg -> a-rss.svg.
      const rssSvg = rssSvgOption ?? (svg === undefined ? undefined : svg.replace(/(\.svg)?$/i, '-rss.svg'));
      process.exitCode =
        child === undefined
          ? await runLoadtest({
              ...flood,
              ...(json === undefined ? {} : { json: resolve(json) }),
              ...(markdown === undefined ? {} : { markdown: resolve(markdown) }),
              ...(svg === undefined ? {} : { svg: resolve(svg) }),
              ...(rssSvg === undefined ? {} : { rssSvg: resolve(rssSvg) }),
            })
          : await runLoadtestChild(child, flood);
    },
  );

async function renderCommand(opts: { manifests: string; out: string; templates: string; set: string[]; check: boolean; threads?: number }): Promise<number> {
  const out = resolve(opts.out);
  const dirs = outputDirs(out);
  const set = await loadTemplateSet(resolve(opts.templates), {
    mapsDir: dirs.mapsDir,
    filesDir: dirs.filesDir,
    certsDir: dirs.certsDir,
    ...parseSetOverrides(opts.set),
  });
  const stores = new StoreProvider(set.stores);
  const loaded = await loadManifests(resolve(opts.manifests), set.stores);
  for (const error of loaded.errors) console.error(`error: ${error}`);
  for (const { store, object } of loaded.objects) stores.store(store).upsert(object);
  console.error(
    `loaded ${loaded.objects.length} objects from ${loaded.files} files (${loaded.ignored} of unwatched kinds, ${loaded.errors.length} rejected)`,
  );
  const pipeline = await PoolPipeline.create({ templateSet: set, logger: defaultLogger(), ...(opts.threads === undefined ? {} : { threads: opts.threads }) });
  try {
    const result = await pipeline.execute(AbortSignal.timeout(120_000), stores, 'reconcile');
    for (const warning of result.warnings) console.error(`warning: ${warning}`);
    await writeRenderOutput(dirs, result.haproxyConfig, result.auxiliaryFiles);
    const aux = result.auxiliaryFiles;
    console.log(
      `rendered ${dirs.configFile} (${Buffer.byteLength(result.haproxyConfig)} bytes, ${Object.keys(aux.maps).length} maps, ` +
        `${Object.keys(aux.files).length} files, ${Object.keys(aux.certificates).length} certificates) ` +
        `in ${result.timings.totalMs.toFixed(1)} ms (render ${result.timings.renderMs.toFixed(1)} ms, validate ${result.timings.validateMs.toFixed(1)} ms)`,
    );
    if (opts.check) {
      const version = await haproxyVersion();
      if (version === null) {
        console.error('warning: --check: haproxy is not installed; skipped');
      } else {
        const verdict = await checkConfigFile(dirs.configFile);
        console.log(`haproxy -c (${version}): ${verdict.ok ? 'valid' : 'REJECTED'}`);
        if (!verdict.ok) {
          console.error(verdict.message);
          return 1;
        }
      }
    }
    return loaded.errors.length > 0 ? 2 : 0;
  } catch (error) {
    if (error instanceof PipelineError) {
      console.error(`error: ${error.phase} phase: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await pipeline.destroy();
  }
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  console.error(`error: ${(error as Error).message}`);
  process.exitCode = 1;
}

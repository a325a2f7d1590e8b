// `haptic-reconciler render`: loads a manifest directory once, renders and validates it on the
// worker pool, writes the output, and optionally asks HAProxy (`--check`). Exit 0: good; 1: a phase
// failed; 2: written, but objects were rejected.
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { defaultLogger } from '../core/logger.js';
import { checkConfigFile, haproxyVersion } from '../haproxy/haproxy-check.js';
import { outputDirs, writeRenderOutput } from '../output/render-output.js';
import { PipelineError } from '../pipeline/pipeline.js';
import { PoolPipeline } from '../pipeline/pool/pool-pipeline.js';
import { DEFAULT_MAX_MANIFEST_BYTES, loadManifests } from '../sources/manifest/manifest-loader.js';
import { StoreProvider } from '../stores/store-provider.js';
import { DEFAULT_TEMPLATE_SET_PATH, loadTemplateSet, parseSetOverrides } from '../template-set/template-set.js';
import { collect, positiveInteger } from './options.js';

export function registerRender(program: Command): void {
  program
    .command('render')
    .description('render and validate a directory of Kubernetes manifests once')
    .requiredOption('--manifests <dir>', 'directory of Kubernetes YAML/JSON (multi-document files allowed)')
    .requiredOption('--out <dir>', 'output directory for haproxy.cfg, maps/, files/, certs/')
    .option('--templates <file>', 'template set YAML', DEFAULT_TEMPLATE_SET_PATH)
    .option('--set <key=value>', 'override a template value (repeatable)', collect, [])
    .option('--check', 'also run `haproxy -c` on the output when HAProxy is installed', false)
    .addOption(new Option('--threads <n>', 'worker threads').argParser((v) => Number.parseInt(v, 10)))
    .addOption(new Option('--max-manifest-bytes <n>', 'larger manifest files are refused').default(DEFAULT_MAX_MANIFEST_BYTES).argParser(positiveInteger))
    .action(async (opts: RenderFlags) => {
      process.exitCode = await renderCommand(opts);
    });
}

interface RenderFlags {
  manifests: string;
  out: string;
  templates: string;
  set: string[];
  check: boolean;
  threads?: number;
  maxManifestBytes: number;
}

async function renderCommand(opts: RenderFlags): Promise<number> {
  const out = resolve(opts.out);
  const dirs = outputDirs(out);
  const set = await loadTemplateSet(resolve(opts.templates), {
    mapsDir: dirs.mapsDir,
    filesDir: dirs.filesDir,
    certsDir: dirs.certsDir,
    ...parseSetOverrides(opts.set),
  });
  const stores = new StoreProvider(set.stores);
  const loaded = await loadManifests(resolve(opts.manifests), set.stores, { maxFileBytes: opts.maxManifestBytes });
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

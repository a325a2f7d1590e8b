// `haptic-reconciler render`: loads a manifest directory once, renders and validates it on the
// worker pool, writes the output, and optionally asks HAProxy first (`--check`: objects behind a
// refusal are rejected with HAProxy's message and the rest rendered again; a refusal no object
// can be blamed for leaves the previous output in place). Exit 0: good; 1: nothing written (a
// phase failed, HAProxy refused, `--check` without HAProxy, or a manifest file that could not be
// read or parsed, whose objects would otherwise vanish from the output); 2: written, but objects
// or parts of objects were rejected (each printed with its file:line).
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { preflight } from '../controller/preflight.js';
import { defaultLogger } from '../core/logger.js';
import { haproxyRenderChecker } from '../gate/render-checker.js';
import { checkWithExclusions } from '../gate/refusal-rounds.js';
import { haproxyBinary, haproxyVersion } from '../haproxy/haproxy-check.js';
import { outputPathsIn, writeRenderOutput } from '../output/render-output.js';
import { PipelineError } from '../pipeline/pipeline.js';
import { PoolPipeline } from '../pipeline/pool/pool-pipeline.js';
import { DEFAULT_MAX_MANIFEST_BYTES, loadManifests, type LoadedObject } from '../sources/manifest/manifest-loader.js';
import type { Rejection } from '../../worker/protocol.js';
import { StoreProvider } from '../stores/store-provider.js';
import { loadOutputTemplateSet } from '../template-set/output-template-set.js';
import { DEFAULT_TEMPLATE_SET_PATH } from '../template-set/template-set.js';
import { collect, positiveInteger } from './options.js';

export function registerRender(program: Command): void {
  program
    .command('render')
    .description('render and validate a directory of Kubernetes manifests once')
    .requiredOption('--manifests <dir>', 'directory of Kubernetes YAML/JSON (multi-document files allowed)')
    .requiredOption('--out <dir>', 'output directory for haproxy.cfg, maps/, files/, certs/')
    .option('--templates <file>', 'template set YAML', DEFAULT_TEMPLATE_SET_PATH)
    .option('--set <key=value>', 'override a template value; the key must exist (repeatable)', collect, [])
    .option('--set-new <key=value>', 'add or override a template value, new keys allowed (repeatable)', collect, [])
    .option('--check', 'also run `haproxy -c` on the output first (needs HAProxy; a refused render writes nothing)', false)
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
  setNew: string[];
  check: boolean;
  threads?: number;
  maxManifestBytes: number;
}

async function renderCommand(opts: RenderFlags): Promise<number> {
  const out = resolve(opts.out);
  const dirs = outputPathsIn(out);
  // A missing directory or an unwritable --out: one line saying which, before any work.
  await preflight({ manifests: resolve(opts.manifests), out, haproxy: false });
  const version = opts.check ? await haproxyVersion() : null;
  if (opts.check && version === null) {
    console.error(`error: --check: HAProxy is not installed or cannot run (${JSON.stringify(haproxyBinary())}; set HAPROXY_BIN to its path); nothing was written`);
    return 1;
  }
  const set = await loadOutputTemplateSet(out, resolve(opts.templates), { set: opts.set, setNew: opts.setNew });
  const stores = new StoreProvider(set.stores);
  const loaded = await loadManifests(resolve(opts.manifests), set.stores, { maxFileBytes: opts.maxManifestBytes });
  if (loaded.broken.length > 0) {
    // Rendering without the file would drop everything it holds from the output.
    for (const error of loaded.broken) console.error(`error: ${error}`);
    console.error(`error: ${loaded.broken.length} manifest file(s) could not be read whole; nothing was written, the previous output in ${out} was left as it was`);
    return 1;
  }
  for (const error of loaded.errors) console.error(`rejected: ${error}`);
  for (const { store, object } of loaded.objects) stores.store(store).upsert(object);
  const pipeline = await PoolPipeline.create({ templateSet: set, logger: defaultLogger(), ...(opts.threads === undefined ? {} : { threads: opts.threads }) });
  try {
    let result = await pipeline.execute(AbortSignal.timeout(120_000), stores, 'reconcile');
    if (version !== null) {
      // HAProxy judges a private copy first: a refused render never replaces the previous output.
      // A refusal HAProxy traces to objects costs only those objects: they are rejected, the rest is written.
      const signal = AbortSignal.timeout(120_000);
      const checked = await checkWithExclusions(result, haproxyRenderChecker({ directories: dirs }), (exclusions, s) => pipeline.execute(s, stores, 'reconcile', { exclusions }), signal);
      const verdict = checked.verdict;
      result = checked.render;
      console.log(`haproxy -c (${version}): ${verdict.ok ? 'valid' : verdict.refused ? 'REJECTED' : 'could not run'}`);
      if (!verdict.ok) {
        console.error(`${verdict.message}\nthe previous output in ${out} was left as it was`);
        return 1;
      }
    }
    const rejections = result.rejections ?? [];
    const sources = sourcesByObject(loaded.objects);
    for (const rejection of rejections) console.error(`rejected: ${describeRejection(rejection, sources)}`);
    // Every rejection is also a warning for the logs; here it was printed with its file and line.
    for (const warning of result.warnings) if (!warning.startsWith('rejected ')) console.error(`warning: ${warning}`);
    const whole = rejections.filter(leftOutWhole);
    const rejectedObjects = new Set(whole.map((r) => `${r.kind} ${r.namespace}/${r.name}`)).size;
    const dropped = rejections.length - whole.length;
    console.error(
      `loaded ${loaded.objects.length} objects from ${loaded.files} files (${loaded.ignored} of unwatched kinds); ` +
        `${loaded.errors.length} documents refused by the loader, ${rejectedObjects} objects rejected, ${dropped} parts of objects dropped`,
    );
    await writeRenderOutput(dirs, result.haproxyConfig, result.auxiliaryFiles);
    const aux = result.auxiliaryFiles;
    console.log(
      `rendered ${dirs.configFile} (${Buffer.byteLength(result.haproxyConfig)} bytes, ${Object.keys(aux.maps).length} maps, ` +
        `${Object.keys(aux.files).length} files, ${Object.keys(aux.certificates).length} certificates) ` +
        `in ${result.timings.totalMs.toFixed(1)} ms (render ${result.timings.renderMs.toFixed(1)} ms, validate ${result.timings.validateMs.toFixed(1)} ms)`,
    );
    return loaded.errors.length > 0 || rejections.length > 0 ? 2 : 0;
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

function leftOutWhole(rejection: Rejection): boolean {
  return rejection.scope === 'object' || rejection.wholeObject === true;
}

/** `Kind namespace/name` → where the object came from (`file:line`). */
function sourcesByObject(objects: readonly LoadedObject[]): Map<string, string> {
  const sources = new Map<string, string>();
  for (const { object, source } of objects) sources.set(`${object.kind ?? ''} ${object.metadata.namespace ?? ''}/${object.metadata.name}`, source);
  return sources;
}

function describeRejection(rejection: Rejection, sources: ReadonlyMap<string, string>): string {
  const name = rejection.namespace === '' ? rejection.name : `${rejection.namespace}/${rejection.name}`;
  const source = sources.get(`${rejection.kind} ${rejection.namespace}/${rejection.name}`);
  // A bad annotation value leaves its whole Ingress out: say so, not that the annotation was dropped.
  const what = rejection.scope === 'object' ? '' : leftOutWhole(rejection) ? ` (${rejection.scope}; the ${rejection.kind} is left out)` : ` (${rejection.scope} dropped)`;
  return `${source === undefined ? '' : `${source}: `}${rejection.kind} ${name}${what}: ${rejection.reason}`;
}

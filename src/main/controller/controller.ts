// Controller: what `run` is, for embedders too. From one options object it loads the template
// set, picks the source (a manifest directory or a Kubernetes API server), the elector (one
// replica, or a Lease), assembles the Engine with its leader-only components (the output writer,
// or with HAProxy the render gate, deployer and drift monitor), serves metrics and health, and
// runs it all under one AbortSignal.
import type { Logger } from 'pino';
import type { TemplateSetSource } from '../../worker/protocol.js';
import { systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import { Engine } from '../engine.js';
import { SingleReplicaElector, type Elector } from '../leadership/elector.js';
import { OutputDirectory, outputPathsIn } from '../output/output-directory.js';
import { OutputWriter } from '../output/output-writer.js';
import type { ManifestLimits } from '../sources/manifest/manifest-loader.js';
import { ManifestSource } from '../sources/manifest/manifest-source.js';
import type { Source } from '../sources/source.js';
import { DEFAULT_TEMPLATE_SET_PATH, loadTemplateSet, parseSetOverrides } from '../template-set/template-set.js';

export type SourceChoice = { readonly manifests: string } | { readonly kubeconfig: string } | { readonly inCluster: true };

export interface ControllerOptions {
  readonly source: SourceChoice;
  /** The output directory the leader keeps current (haproxy.cfg, maps/, files/, certs/). */
  readonly out: string;
  /** Watch only this namespace (Kubernetes sources; cluster-scoped resources are unaffected). */
  readonly namespace?: string;
  /** @default the bundled default set */
  readonly templates?: string;
  /** `key=value` overrides of the template set's values. */
  readonly set?: readonly string[];
  readonly threads?: number;
  /** Caps for manifest files (`--manifests`). */
  readonly limits?: ManifestLimits;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

/** Everything `run` assembled, before it starts. */
export interface AssembledController {
  readonly engine: Engine;
  readonly templateSet: TemplateSetSource;
  readonly output: OutputDirectory;
  readonly writer: OutputWriter;
}

/** Loads the template set with the output directory's paths (and any `--set` values). */
export async function loadControllerTemplateSet(options: Pick<ControllerOptions, 'out' | 'templates' | 'set'>, extra: Record<string, unknown> = {}): Promise<TemplateSetSource> {
  const paths = outputPathsIn(options.out);
  return loadTemplateSet(options.templates ?? DEFAULT_TEMPLATE_SET_PATH, {
    mapsDir: paths.mapsDir,
    filesDir: paths.filesDir,
    certsDir: paths.certsDir,
    ...extra,
    ...parseSetOverrides(options.set ?? []),
  });
}

export async function assembleController(options: ControllerOptions, choose: { source?: Source; elector?: Elector } = {}): Promise<AssembledController> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? defaultLogger();
  const templateSet = await loadControllerTemplateSet(options);
  const source = choose.source ?? sourceFor(options, clock, logger);
  const engine = await Engine.create({
    templateSet,
    sources: [source],
    elector: choose.elector ?? new SingleReplicaElector(),
    clock,
    logger,
    ...(options.threads === undefined ? {} : { threads: options.threads }),
  });
  const output = new OutputDirectory(options.out);
  const writer = new OutputWriter({ bus: engine.bus, directory: output, clock, logger });
  engine.addLeaderComponent(writer);
  return { engine, templateSet, output, writer };
}

function sourceFor(options: ControllerOptions, clock: Clock, logger: Logger): Source {
  if ('manifests' in options.source) return new ManifestSource({ dir: options.source.manifests, clock, logger, ...(options.limits === undefined ? {} : { limits: options.limits }) });
  throw new TypeError('a Kubernetes source needs the kubernetes module (pass `source` explicitly)');
}

// The leader-only deploy components every deploying controller adds to its engine, in one place
// (`run --haproxy`, `run --agents`, and the soak's real HAProxy): the Deployer to the given
// targets, the render gate (HAProxy's own verdict, taking refused objects out of renders through
// `exclusions` with trial renders of the engine's own pipeline), and the drift monitor.
import type { Logger } from 'pino';
import type { RenderExclusions } from '../../worker/protocol.js';
import type { Clock } from '../core/clock.js';
import { Deployer, type DeployerOptions } from '../deploy/deployer.js';
import { DriftPreventionMonitor } from '../deploy/drift-monitor.js';
import type { Engine } from '../engine.js';
import type { ObjectExclusions } from '../gate/object-exclusions.js';
import { RenderGate } from '../gate/render-gate.js';
import { outputPathsIn } from '../output/output-directory.js';
import type { PipelineResult } from '../pipeline/pipeline.js';

export interface DeployComponentsOptions {
  /** The output directory the configs name (its maps directory, the gate's private copy). */
  readonly out: string;
  /** Where the deployments go: `target` (one HAProxy) or `targets` (a fleet), with their own options. */
  readonly deploy: Omit<DeployerOptions, 'bus' | 'clock' | 'logger' | 'mapsDir' | 'storeVersion' | 'minDeploymentIntervalMs'>;
  readonly minDeploymentIntervalMs?: number;
  readonly driftIntervalMs?: number;
  /** The objects the render gate takes out of renders; the engine's Coordinator reads them. */
  readonly exclusions: ObjectExclusions;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Runs after the gate and before the Deployer is added (what feeds the Deployer its targets). */
  readonly beforeDeployer?: (deployer: Deployer) => void;
}

/** Adds the render gate, the Deployer and the drift monitor to `engine`; returns the Deployer. */
export function addDeployComponents(engine: Engine, options: DeployComponentsOptions): Deployer {
  const { clock, logger, exclusions } = options;
  const paths = outputPathsIn(options.out);
  const deployer = new Deployer({
    bus: engine.bus,
    ...options.deploy,
    clock,
    logger,
    mapsDir: paths.mapsDir,
    storeVersion: () => engine.stores.version,
    ...(options.minDeploymentIntervalMs === undefined ? {} : { minDeploymentIntervalMs: options.minDeploymentIntervalMs }),
  });
  const rerender = (excluded: RenderExclusions, signal: AbortSignal): Promise<PipelineResult> =>
    engine.pipeline.execute(signal, engine.stores, 'admission', { baseline: engine.coordinator.baseline, exclusions: excluded });
  engine.addLeaderComponent(new RenderGate({ bus: engine.bus, directories: paths, clock, logger, exclusions, rerender }));
  options.beforeDeployer?.(deployer);
  engine.addLeaderComponent(deployer);
  engine.addLeaderComponent(new DriftPreventionMonitor({ bus: engine.bus, clock, logger, ...(options.driftIntervalMs === undefined ? {} : { driftIntervalMs: options.driftIntervalMs }) }));
  return deployer;
}

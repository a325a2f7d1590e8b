// The HAProxy half of `run --haproxy`, for the controller and the soak alike: the supervised
// HAProxy on an output directory (HaproxyProcess), its DeployTarget (LocalHaproxyTarget), the
// downtime watch behind /healthz, and the leader-only render gate, Deployer and drift monitor
// added to an engine.
import type { Logger } from 'pino';
import type { RenderExclusions } from '../../worker/protocol.js';
import type { Clock } from '../core/clock.js';
import { StartupError } from '../core/errors.js';
import { Deployer } from '../deploy/deployer.js';
import { DriftPreventionMonitor } from '../deploy/drift-monitor.js';
import type { Engine } from '../engine.js';
import type { ObjectExclusions } from '../gate/object-exclusions.js';
import { RenderGate } from '../gate/render-gate.js';
import { HaproxyDowntime } from '../haproxy/haproxy-downtime.js';
import { HaproxyProcess } from '../haproxy/haproxy-process.js';
import { LocalHaproxyTarget } from '../haproxy/local-haproxy-target.js';
import { outputPathsIn, type OutputDirectory } from '../output/output-directory.js';
import type { PipelineResult } from '../pipeline/pipeline.js';

export interface HaproxyOptions {
  /** Least time from the end of one reload to the start of the next. @default 2000 */
  readonly minDeploymentIntervalMs?: number;
  /** A deployment is forced when none completed for this long. @default 60000 */
  readonly driftIntervalMs?: number;
  /** Old HAProxy workers left draining after a reload; the oldest past it are stopped. @default 3 */
  readonly maxOldWorkers?: number;
  /** /healthz fails once HAProxy has not run for this long, every restart failing. @default 300000 */
  readonly downLimitMs?: number;
}

/** Callbacks metrics attach to components assembled before the metrics exist. */
export interface ControllerHooks {
  onHaproxyRestart?: () => void;
  onOldWorkersStopped?: (count: number) => void;
  onEndpointChangeApplied?: (seconds: number) => void;
  /** Something the controller cannot run without failed for good (HAProxy refused to start its first config). */
  onFatal?: (error: Error) => void;
}

export interface HaproxyDeployOptions {
  /** The output directory HAProxy runs from (`<out>/haproxy.cfg`, sockets in `<out>/run`). */
  readonly out: string;
  readonly output: OutputDirectory;
  readonly haproxy: HaproxyOptions;
  /** The objects the render gate takes out of renders; the engine's Coordinator reads them. */
  readonly exclusions: ObjectExclusions;
  readonly hooks: ControllerHooks;
  readonly clock: Clock;
  readonly logger: Logger;
}

export interface HaproxyDeploy {
  readonly process: HaproxyProcess;
  readonly deployer: Deployer;
  readonly target: LocalHaproxyTarget;
  readonly downtime: HaproxyDowntime;
}

/** Creates the supervised HAProxy and adds the render gate, Deployer and drift monitor to `engine`. */
export function addHaproxyDeploy(engine: Engine, options: HaproxyDeployOptions): HaproxyDeploy {
  const { clock, logger, hooks } = options;
  const paths = outputPathsIn(options.out);
  const process = HaproxyProcess.forOutputDirectory(options.out, {
    clock,
    logger,
    onRestart: () => {
      // Called only after an exit, long after `downtime` below exists.
      downtime.restarting();
      hooks.onHaproxyRestart?.();
    },
    onOldWorkersStopped: ({ stopped }) => hooks.onOldWorkersStopped?.(stopped),
    ...(options.haproxy.maxOldWorkers === undefined ? {} : { maxOldWorkers: options.haproxy.maxOldWorkers }),
  });
  const downtime = new HaproxyDowntime({ haproxy: process, clock, ...(options.haproxy.downLimitMs === undefined ? {} : { limitMs: options.haproxy.downLimitMs }) });
  const target = new LocalHaproxyTarget({
    output: options.output,
    haproxy: process,
    logger,
    onFirstStartFailed: (error) => hooks.onFatal?.(new StartupError(`HAProxy could not start its first config: ${error.message}`, { cause: error })),
  });
  const deployer = new Deployer({
    bus: engine.bus,
    target,
    clock,
    logger,
    mapsDir: paths.mapsDir,
    storeVersion: () => engine.stores.version,
    onEndpointChangeApplied: (seconds) => hooks.onEndpointChangeApplied?.(seconds),
    ...(options.haproxy.minDeploymentIntervalMs === undefined ? {} : { minDeploymentIntervalMs: options.haproxy.minDeploymentIntervalMs }),
  });
  const rerender = (excluded: RenderExclusions, signal: AbortSignal): Promise<PipelineResult> =>
    engine.pipeline.execute(signal, engine.stores, 'admission', { baseline: engine.coordinator.baseline, exclusions: excluded });
  engine.addLeaderComponent(new RenderGate({ bus: engine.bus, directories: paths, clock, logger, exclusions: options.exclusions, rerender }));
  engine.addLeaderComponent(deployer);
  engine.addLeaderComponent(
    new DriftPreventionMonitor({ bus: engine.bus, clock, logger, ...(options.haproxy.driftIntervalMs === undefined ? {} : { driftIntervalMs: options.haproxy.driftIntervalMs }) }),
  );
  return { process, deployer, target, downtime };
}

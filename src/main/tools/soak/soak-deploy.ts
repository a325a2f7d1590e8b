// The soak's HAProxy deploy (`soak --haproxy`), from the parts `run --haproxy` assembles in
// controller.ts: the supervised HAProxy on an output directory (HaproxyProcess, bounding its old
// workers), its DeployTarget (LocalHaproxyTarget), and the leader-only deploy components
// (deploy-components.ts) added to an engine the soak built on its fault-capable worker pool.
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Deployer } from '../../deploy/deployer.js';
import type { Engine } from '../../engine.js';
import type { ObjectExclusions } from '../../gate/object-exclusions.js';
import { HaproxyProcess } from '../../haproxy/haproxy-process.js';
import { LocalHaproxyTarget } from '../../haproxy/local-haproxy-target.js';
import type { OutputDirectory } from '../../output/output-directory.js';
import type { ControllerHooks, HaproxyOptions } from '../../controller/controller.js';
import { addDeployComponents } from '../../controller/deploy-components.js';

export interface SoakDeployOptions {
  /** The output directory HAProxy runs from (`<out>/haproxy.cfg`, sockets in `<out>/run`). */
  readonly out: string;
  readonly output: OutputDirectory;
  readonly haproxy: Pick<HaproxyOptions, 'maxOldWorkers' | 'minDeploymentIntervalMs' | 'driftIntervalMs'>;
  /** The objects the render gate takes out of renders; the engine's Coordinator reads them. */
  readonly exclusions: ObjectExclusions;
  readonly hooks: Pick<ControllerHooks, 'onHaproxyRestart' | 'onOldWorkersStopped'>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** HAProxy's stdout (its traffic log). @default 'inherit' */
  readonly stdout?: 'inherit' | 'ignore';
}

export interface SoakDeploy {
  readonly process: HaproxyProcess;
  readonly deployer: Deployer;
  readonly target: LocalHaproxyTarget;
}

/** Creates the supervised HAProxy and adds the render gate, Deployer and drift monitor to `engine`. */
export function addSoakDeploy(engine: Engine, options: SoakDeployOptions): SoakDeploy {
  const { clock, logger, hooks } = options;
  const process = HaproxyProcess.forOutputDirectory(options.out, {
    clock,
    logger,
    onRestart: () => hooks.onHaproxyRestart?.(),
    onOldWorkersStopped: ({ stopped }) => hooks.onOldWorkersStopped?.(stopped),
    ...(options.stdout === undefined ? {} : { stdout: options.stdout }),
    ...(options.haproxy.maxOldWorkers === undefined ? {} : { maxOldWorkers: options.haproxy.maxOldWorkers }),
  });
  const target = new LocalHaproxyTarget({
    output: options.output,
    haproxy: process,
    logger,
  });
  const deployer = addDeployComponents(engine, {
    out: options.out,
    deploy: { target },
    ...(options.haproxy.minDeploymentIntervalMs === undefined ? {} : { minDeploymentIntervalMs: options.haproxy.minDeploymentIntervalMs }),
    ...(options.haproxy.driftIntervalMs === undefined ? {} : { driftIntervalMs: options.haproxy.driftIntervalMs }),
    exclusions: options.exclusions,
    clock,
    logger,
  });
  return { process, deployer, target };
}

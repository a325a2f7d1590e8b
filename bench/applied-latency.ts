// The leader's deploy path as the latency benchmarks drive it: the render gate and the one
// Deployer on an engine, with each endpoint change's time to applied recorded. `nextApplied()`
// resolves at the next one, so a benchmark makes a change and waits for it.
import type { Logger } from 'pino';
import { Deployer, type DeployerOptions } from '../src/main/deploy/deployer.js';
import type { Engine } from '../src/main/engine.js';
import { RenderGate } from '../src/main/gate/render-gate.js';
import { outputPathsIn } from '../src/main/output/output-directory.js';

export interface AppliedLatency {
  readonly deployer: Deployer;
  /** Milliseconds from each EndpointSlice change to applied, in order. */
  readonly applied: number[];
  /** Resolves when the next change is applied. */
  nextApplied(): Promise<void>;
}

/** Adds the render gate and a Deployer to `targets` (one local target, or a fleet) as leader components of `engine`. */
export function deployWithLatency(
  engine: Engine,
  out: string,
  logger: Logger,
  targets: Pick<DeployerOptions, 'target' | 'targets' | 'retry'>,
): AppliedLatency {
  const applied: number[] = [];
  let wake: (() => void) | undefined;
  const deployer = new Deployer({
    bus: engine.bus,
    ...targets,
    logger,
    mapsDir: outputPathsIn(out).mapsDir,
    storeVersion: () => engine.stores.version,
    onEndpointChangeApplied: (seconds) => {
      applied.push(seconds * 1000);
      wake?.();
    },
  });
  engine.addLeaderComponent(new RenderGate({ bus: engine.bus, directories: outputPathsIn(out), logger, timeoutMs: 600_000 }));
  engine.addLeaderComponent(deployer);
  return { deployer, applied, nextApplied: () => new Promise<void>((resolve) => (wake = resolve)) };
}

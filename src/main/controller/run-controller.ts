// runController: the controller `run` starts. Assembles it (see controller.ts), serves metrics and
// health, runs until the signal aborts, then stops in order: sources and leader components stop
// and the Lease is released (the engine), the worker pool and the HTTP endpoints close.
import type { ControllerOptions } from './controller.js';
import { assembleController } from './controller.js';

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export interface HaproxyOptions {
  readonly minDeploymentIntervalMs: number;
  readonly driftIntervalMs: number;
}

export interface RunOptions extends ControllerOptions {
  /** `HOST:PORT` for /metrics, /healthz and /readyz, or `off`. @default 127.0.0.1:9100 */
  readonly metricsAddr?: string;
  readonly leaderElection?: LeaderElectionOptions;
  readonly haproxy?: HaproxyOptions;
}

export async function runController(options: RunOptions, signal: AbortSignal): Promise<void> {
  const { engine } = await assembleController(options);
  try {
    await engine.start(signal);
  } finally {
    await engine.close();
  }
}

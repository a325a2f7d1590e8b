// runController: the controller `run` starts. Assembles it (see controller.ts), serves metrics and
// health, runs until the signal aborts, then stops in order: sources and leader components stop
// and leadership is released (the engine), then the worker pool and the HTTP endpoints close.
import { ControllerMetrics } from '../metrics/metrics.js';
import { MetricsAdapter } from '../metrics/metrics-adapter.js';
import { startHttpEndpoints } from '../metrics/http-endpoints.js';
import { assembleController, type AssembledController, type ControllerOptions } from './controller.js';

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

/** Runs the controller until `signal` aborts; `onStarted` sees it assembled and serving. */
export async function runController(options: RunOptions, signal: AbortSignal, onStarted?: (controller: AssembledController & { readonly metricsAddress: string | undefined }) => void): Promise<void> {
  const assembled = await assembleController(options);
  const { engine } = assembled;
  const metrics = new ControllerMetrics({
    bus: engine.bus,
    coordinator: engine.coordinator,
    stores: engine.stores,
    isLeader: () => engine.isLeader,
    ...(engine.pool === undefined ? {} : { pool: engine.pool }),
    ...(engine.watchers === undefined ? {} : { sourceProblems: engine.watchers }),
  });
  // Subscribes now, before the engine starts the bus, so it sees the first events too.
  const adapter = new MetricsAdapter(engine.bus, metrics);
  const endpoints = await startHttpEndpoints({
    address: options.metricsAddr ?? '127.0.0.1:9100',
    metrics,
    readiness: () => engine.readiness(),
    logger: engine.logger,
    clock: engine.clock,
  }).catch(async (error: unknown) => {
    await engine.close();
    throw error;
  });
  engine.logger.info({ metrics: endpoints.address ?? 'off' }, 'serving /metrics, /healthz and /readyz');
  const recording = adapter.start(signal);
  try {
    onStarted?.({ ...assembled, metricsAddress: endpoints.address });
    await engine.start(signal);
  } finally {
    await recording;
    await engine.close();
    await endpoints.close();
  }
}

// runController: the controller `run` starts. Assembles it (see controller.ts), serves metrics and
// health, runs until the signal aborts, then stops in order: sources and leader components stop
// and leadership is released (the engine), then the worker pool and the HTTP endpoints close.
import { attachHttpResources } from '../http-resources/http-resource-fetcher.js';
import { ControllerMetrics } from '../metrics/metrics.js';
import { MetricsAdapter } from '../metrics/metrics-adapter.js';
import { registerFeedbackMetrics } from '../metrics/feedback-metrics.js';
import { startHttpEndpoints } from '../metrics/http-endpoints.js';
import { assembleController, type AssembledController, type ControllerOptions } from './controller.js';

export interface RunOptions extends ControllerOptions {
  /** `HOST:PORT` for /metrics, /healthz and /readyz, or `off`. @default 127.0.0.1:9100 */
  readonly metricsAddr?: string;
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
  if (assembled.feedback !== undefined) registerFeedbackMetrics(metrics.registry, assembled.feedback);
  assembled.hooks.onHaproxyRestart = () => metrics.countHaproxyRestart();
  assembled.hooks.onEndpointChangeApplied = (seconds) => metrics.observeEndpointChangeToApplied(seconds);
  // Subscribes now, before the engine starts the bus, so it sees the first events too.
  const adapter = new MetricsAdapter(engine.bus, metrics);
  attachHttpResources(engine, assembled.templateSet, { onRejected: () => metrics.countHttpResourceRejection() });
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
    // HAProxy stops with the controller; the pool and the endpoints close meanwhile.
    await Promise.all([assembled.haproxy?.target.stop(), engine.close(), endpoints.close()]);
  }
}

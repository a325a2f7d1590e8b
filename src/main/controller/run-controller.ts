// runController: the controller `run` starts. Assembles it (see controller.ts), serves metrics and
// health (and with `webhook`, the admission webhook, on every replica), runs until the signal
// aborts, then stops in order: sources and leader components stop and leadership is released
// (the engine), then the worker pool and the HTTP endpoints close.
import { readCertificatePair, reloadCertificates } from '../admission/certificate-files.js';
import { startAdmissionServer, type AdmissionServer } from '../admission/admission-server.js';
import { WorkerAdmissionChecker } from '../admission/worker-admission-checker.js';
import { attachHttpResources } from '../http-resources/http-resource-fetcher.js';
import { ControllerMetrics } from '../metrics/metrics.js';
import { MetricsAdapter } from '../metrics/metrics-adapter.js';
import { registerFeedbackMetrics } from '../metrics/feedback-metrics.js';
import { startHttpEndpoints } from '../metrics/http-endpoints.js';
import { StartupError } from '../core/errors.js';
import type { Liveness } from '../engine.js';
import type { HaproxyDowntime } from '../haproxy/haproxy-downtime.js';
import { assembleController, type AssembledController, type ControllerOptions } from './controller.js';

/** /healthz: the engine's components, the local HAProxy, and any fatal error. */
function liveness(engine: AssembledController['engine'], downtime: HaproxyDowntime | undefined, fatal: Error | undefined): Liveness {
  if (fatal !== undefined) return { alive: false, stopped: { controller: fatal.message } };
  const own = engine.liveness();
  const haproxy = downtime?.problem();
  if (haproxy === undefined) return own;
  return { alive: false, stopped: { ...own.stopped, haproxy } };
}

export interface RunOptions extends ControllerOptions {
  /** `HOST:PORT` for /metrics, /healthz and /readyz, or `off`. @default 127.0.0.1:9100 */
  readonly metricsAddr?: string;
  /** The validating admission webhook (`--webhook-addr`), served on every replica. */
  readonly webhook?: WebhookOptions;
}

export interface WebhookOptions {
  /** `HOST:PORT` of the HTTPS server. */
  readonly address: string;
  /** PEM files of the serving certificate and its key. */
  readonly certFile: string;
  readonly keyFile: string;
  /** @default 2000 */
  readonly timeoutMs?: number;
}

/**
 * Runs the controller until `signal` aborts; `onStarted` sees it assembled and serving. Rejects
 * (after stopping everything) when it cannot start or something it cannot run without failed for
 * good: a StartupError says what, in one line.
 */
export async function runController(options: RunOptions, signal: AbortSignal, onStarted?: (controller: AssembledController & { readonly metricsAddress: string | undefined }) => void): Promise<void> {
  const assembled = await assembleController(options);
  const { engine } = assembled;
  // Stopped by the caller, or by a fatal error of a component.
  const running = new AbortController();
  const onAbort = (): void => running.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  let fatal: Error | undefined;
  assembled.hooks.onFatal = (error) => {
    if (fatal !== undefined) return;
    fatal = error;
    engine.logger.error({ reason: error.message }, 'stopping');
    running.abort(error);
  };
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
  assembled.hooks.onOldWorkersStopped = (count) => metrics.countOldWorkersStopped(count);
  assembled.hooks.onEndpointChangeApplied = (seconds) => metrics.observeEndpointChangeToApplied(seconds);
  assembled.hooks.onFleetRequest = (kind, seconds) => metrics.observeFleetApply(kind, seconds);
  assembled.hooks.onFleetChanged = (counts) => metrics.setFleetInstances(counts);
  // Subscribes now, before the engine starts the bus, so it sees the first events too.
  const adapter = new MetricsAdapter(engine.bus, metrics);
  attachHttpResources(engine, assembled.templateSet, { onRejected: () => metrics.countHttpResourceRejection() });
  const endpoints = await startHttpEndpoints({
    address: options.metricsAddr ?? '127.0.0.1:9100',
    metrics,
    readiness: () => engine.readiness(),
    liveness: () => liveness(engine, assembled.haproxy?.downtime, fatal),
    logger: engine.logger,
    clock: engine.clock,
  }).catch(async (error: unknown) => {
    signal.removeEventListener('abort', onAbort);
    await engine.close();
    throw new StartupError((error as Error).message, { cause: error });
  });
  engine.logger.info({ metrics: endpoints.address ?? 'off' }, 'serving /metrics, /healthz and /readyz');
  let webhook: AdmissionServer | undefined;
  if (options.webhook !== undefined) {
    webhook = await startWebhook(options.webhook, assembled, metrics).catch(async (error: unknown) => {
      await Promise.all([engine.close(), endpoints.close()]);
      throw error;
    });
    engine.logger.info({ webhook: webhook.address }, 'serving the admission webhook at POST /validate');
  }
  const recording = adapter.start(running.signal);
  try {
    onStarted?.({ ...assembled, metricsAddress: endpoints.address });
    await engine.start(running.signal);
  } finally {
    // The engine may have stopped on its own (a source that failed): the rest stops with it.
    running.abort(new Error('the engine stopped'));
    signal.removeEventListener('abort', onAbort);
    await recording;
    // HAProxy stops with the controller; the pool and the endpoints close meanwhile.
    await Promise.all([assembled.haproxy?.target.stop(), engine.close(), endpoints.close(), webhook?.close()]);
  }
  if (fatal !== undefined) throw fatal;
}

async function startWebhook(options: WebhookOptions, assembled: AssembledController, metrics: ControllerMetrics): Promise<AdmissionServer> {
  const pair = await readCertificatePair(options.certFile, options.keyFile);
  const { engine } = assembled;
  const checker = new WorkerAdmissionChecker({ stores: engine.stores, templateSet: assembled.templateSet, clock: engine.clock });
  checker.start();
  const server = await startAdmissionServer({
    address: options.address,
    ...pair,
    checker,
    metrics,
    synchronized: () => engine.readiness().synchronized,
    clock: engine.clock,
    logger: engine.logger,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  }).catch(async (error: unknown) => {
    await checker.close();
    throw error;
  });
  const reloader = reloadCertificates({
    certFile: options.certFile,
    keyFile: options.keyFile,
    current: pair,
    apply: (renewed) => server.setCertificate(renewed.cert, renewed.key),
    clock: engine.clock,
    logger: engine.logger,
  });
  return {
    ...server,
    close: async () => {
      reloader.stop();
      await server.close();
    },
  };
}

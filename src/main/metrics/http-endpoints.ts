// The controller's HTTP endpoints on `--metrics-addr` (node:http): GET /metrics (Prometheus
// text), /healthz (200 while every component it depends on runs, else 503 with what stopped), /readyz (200 when ready, else 503 with the
// readiness snapshot as JSON). HEAD is served like GET; other methods get 405, other paths 404.
// `close()` stops within a bounded time: idle keep-alive connections are closed at once and
// busy ones are cut after `closeTimeoutMs`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';

/** What the endpoints need of ControllerMetrics. */
export interface MetricsText {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** A liveness snapshot, served as JSON when not alive; short and free of user data. */
export interface LivenessSnapshot {
  readonly alive: boolean;
  readonly stopped?: object;
}

/** A readiness snapshot; served as JSON, so keep it short and free of user data. */
export interface ReadinessSnapshot {
  readonly ready: boolean;
  readonly detail?: object;
}

export interface HttpEndpointsOptions {
  /**
   * `HOST:PORT` (IPv6 in brackets: `[::1]:9100`; port 0 picks a free port) or `off`.
   * @example '127.0.0.1:9100'
   */
  readonly address: string;
  readonly metrics: MetricsText;
  /** Called per /readyz request. */
  readonly readiness: () => ReadinessSnapshot;
  /** Called per /healthz request: not alive (503) once a component it depends on stopped for good. @default always alive */
  readonly liveness?: () => LivenessSnapshot;
  readonly logger?: Logger;
  /** Busy connections still open this long after `close()` are destroyed. @default 5000 */
  readonly closeTimeoutMs?: number;
  readonly clock?: Clock;
}

export interface HttpEndpoints {
  /** The bound address as `HOST:PORT` (`[v6]:PORT`), or undefined when `off`. */
  readonly address: string | undefined;
  /** The bound port (the real one when 0 was asked for), or undefined when `off`. */
  readonly port: number | undefined;
  /** Stops listening and closes every connection; idempotent. */
  close(): Promise<void>;
}

export type ListenAddress = { readonly host: string; readonly port: number } | 'off';

/** Parses `HOST:PORT`, `[IPV6]:PORT` or `off`; anything else is a TypeError naming the value. */
export function parseListenAddress(value: string): ListenAddress {
  if (value === 'off') return 'off';
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(value);
  const plain = bracketed === null ? /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(value) : null;
  const match = bracketed ?? plain;
  const host = match?.[1];
  const port = Number(match?.[2]);
  const hostOk = host !== undefined && (bracketed === null ? isIP(host) !== 6 : isIP(host.replace(/%.+$/, '')) === 6);
  if (match === null || !hostOk || !Number.isInteger(port) || port > 65_535) {
    throw new TypeError(
      `metrics address must be HOST:PORT, [IPV6]:PORT (port 0-65535) or 'off', got ${JSON.stringify(value)}`,
    );
  }
  return { host: host as string, port };
}

/** Starts serving (resolves once listening), or returns a no-op handle for `off`. */
export async function startHttpEndpoints(options: HttpEndpointsOptions): Promise<HttpEndpoints> {
  const listen = parseListenAddress(options.address);
  if (listen === 'off') return { address: undefined, port: undefined, close: () => Promise.resolve() };
  const logger = (options.logger ?? defaultLogger()).child({ component: 'http-endpoints' });
  const clock = options.clock ?? systemClock;
  const closeTimeoutMs = options.closeTimeoutMs ?? 5000;

  const server = createServer((request, response) => {
    handle(request, response, options, logger).catch((error: unknown) => {
      logger.error({ err: error }, 'request failed');
      if (!response.headersSent) reply(response, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(new Error(`cannot listen on ${options.address}: ${error.message}`, { cause: error }));
    server.once('error', onError);
    server.listen(listen.port, listen.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (error) => logger.error({ err: error }, 'http server error'));
  const bound = server.address() as AddressInfo;
  const address = bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`;
  logger.info({ address }, 'serving /metrics, /healthz, /readyz');

  let closing: Promise<void> | undefined;
  return {
    address,
    port: bound.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        // A scraper that keeps its connection open would otherwise hold close() forever.
        const timer = clock.setTimeout(() => server.closeAllConnections(), closeTimeoutMs, { unref: true });
        server.close(() => {
          clock.clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: HttpEndpointsOptions, logger: Logger): Promise<void> {
  const path = (request.url ?? '/').split('?', 1)[0];
  if (path !== '/metrics' && path !== '/healthz' && path !== '/readyz') {
    reply(response, 404, 'text/plain; charset=utf-8', 'not found\n');
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('Allow', 'GET, HEAD');
    reply(response, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
    return;
  }
  switch (path) {
    case '/metrics':
      reply(response, 200, options.metrics.contentType, await options.metrics.metrics());
      return;
    case '/healthz': {
      let snapshot: LivenessSnapshot;
      try {
        snapshot = options.liveness?.() ?? { alive: true };
      } catch (error) {
        logger.error({ err: error }, 'liveness check threw');
        snapshot = { alive: false, stopped: { error: 'liveness check failed' } };
      }
      if (snapshot.alive) reply(response, 200, 'text/plain; charset=utf-8', 'ok\n');
      else reply(response, 503, 'application/json', `${JSON.stringify(snapshot)}\n`);
      return;
    }
    case '/readyz': {
      let snapshot: ReadinessSnapshot;
      try {
        snapshot = options.readiness();
      } catch (error) {
        logger.error({ err: error }, 'readiness check threw');
        snapshot = { ready: false, detail: { error: 'readiness check failed' } };
      }
      reply(response, snapshot.ready ? 200 : 503, 'application/json', `${JSON.stringify(snapshot)}\n`);
      return;
    }
  }
}

function reply(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  response.end(body);
}

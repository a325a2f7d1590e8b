// Steady HTTP load for reload tests: `startLoad` sends GET requests to a host through HAProxy on
// 127.0.0.1:<port> at a fixed rate, on fresh connections or over keep-alive connections, until
// `stop()`, which waits for the requests in flight and reports what happened: requests sent,
// answered with the expected status, refused connections, other failures (resets, timeouts, wrong
// status), and the latency of each answered request.
import { Agent, request } from 'node:http';

export interface LoadOptions {
  readonly port: number;
  readonly host: string;
  readonly path?: string;
  readonly ratePerSecond: number;
  /** Reuse connections (at most `maxSockets` of them) instead of opening one per request. */
  readonly keepAlive: boolean;
  /** @default 8 */
  readonly maxSockets?: number;
  /** @default 200 */
  readonly expectStatus?: number;
  /** @default 5000 */
  readonly timeoutMs?: number;
}

export interface LoadReport {
  readonly sent: number;
  readonly ok: number;
  /** Connections refused (ECONNREFUSED): nothing was listening. */
  readonly refused: number;
  /** Every other failure: a reset, a close before the answer, a timeout, another status. */
  readonly errors: number;
  /** The first few failures, in words. */
  readonly samples: readonly string[];
  /** Latency of each answered request, ms, ascending. */
  readonly latenciesMs: readonly number[];
  readonly durationMs: number;
}

export interface RunningLoad {
  /** Stops sending, waits for the requests in flight, and reports. */
  stop(): Promise<LoadReport>;
}

export function startLoad(options: LoadOptions): RunningLoad {
  const agent = options.keepAlive ? new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 8 }) : undefined;
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  const latencies: number[] = [];
  const samples: string[] = [];
  let sent = 0;
  let ok = 0;
  let refused = 0;
  let errors = 0;
  const fail = (what: string): void => {
    errors++;
    if (samples.length < 10) samples.push(what);
  };
  const one = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const began = performance.now();
      const req = request(
        { host: '127.0.0.1', port: options.port, path: options.path ?? '/', headers: { host: options.host }, agent: agent ?? false, timeout: options.timeoutMs ?? 5_000 },
        (res) => {
          res.resume();
          res.on('error', (error) => {
            fail(`response: ${error.message}`);
            resolve();
          });
          res.on('end', () => {
            if (res.statusCode === (options.expectStatus ?? 200)) {
              ok++;
              latencies.push(performance.now() - began);
            } else fail(`status ${String(res.statusCode)}`);
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ECONNREFUSED') {
          refused++;
          if (samples.length < 10) samples.push('ECONNREFUSED');
        } else fail(`${error.code ?? ''} ${error.message}`.trim());
        resolve();
      });
      req.end();
    });
  // Sends whatever is due since the start, so a late timer does not lower the rate.
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * options.ratePerSecond);
    while (sent < due) {
      sent++;
      const pending = one();
      inFlight.add(pending);
      void pending.then(() => inFlight.delete(pending));
    }
  }, 5);
  return {
    async stop(): Promise<LoadReport> {
      clearInterval(timer);
      const durationMs = performance.now() - started;
      await Promise.all(inFlight);
      agent?.destroy();
      return { sent, ok, refused, errors, samples, latenciesMs: latencies.sort((a, b) => a - b), durationMs };
    },
  };
}

/** The p-th percentile (0-100) of ascending `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  return values[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)] as number;
}

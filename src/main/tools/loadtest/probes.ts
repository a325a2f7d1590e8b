// Main-thread responsiveness seen from outside: the child serves /healthz on 127.0.0.1
// (startHealthServer) and the parent's HealthProber requests it on a fixed schedule during the
// flood, from its own process, so the client's timing is not skewed by the child's blocked loop.
import { once } from 'node:events';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import { percentileMs, toMicros } from './units.js';

/** A probe unanswered by then is counted as an error (and recorded at this latency). */
export const PROBE_TIMEOUT_MS = 30_000;
const PROBE_INTERVAL_MS = 50;
/** Persistent connections the parent opens before the flood and probes over. */
const PROBE_CONNECTIONS = 64;
const MAX_PROBES_OUTSTANDING = 200;
const MAX_PROBES = 100_000;

export interface ProbeStats {
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Probes in the percentiles: answered, or timed out (recorded at the timeout). */
  readonly completed: number;
  /** Probes that failed, timed out, or were not sent because too many were outstanding. */
  readonly errors: number;
}

/** How a probe that did not fail ended; a timeout is not a failure of the request, so not thrown. */
type ProbeOutcome = 'answered' | 'timed-out';

/**
 * GET /healthz every PROBE_INTERVAL_MS, open loop: a probe is sent on schedule whether or not
 * the previous ones were answered, so a blocked server shows up as latency, not as fewer samples.
 * Probes go over persistent connections opened before the flood (`warm`): a Node server accepts
 * about one new connection per event-loop turn, so a connection per probe would measure that
 * accept queue, not how long the main thread takes to answer. A probe that times out is counted
 * as an error and also recorded at its elapsed time, so the tail is a lower bound, never hidden.
 */
export class HealthProber {
  readonly #port: number;
  /** One probe per interval over the flood, plus a few; bounded, so a wrong duration cannot grow it. */
  readonly #maxProbes: number;
  /** Beyond PROBE_CONNECTIONS busy sockets a probe waits in the agent's queue, timed all along. */
  readonly #agent = new Agent({ keepAlive: true, maxSockets: PROBE_CONNECTIONS });
  /** Microseconds. */
  readonly #latency: RecordableHistogram = createHistogram();
  #timer: NodeJS.Timeout | undefined;
  #issued = 0;
  #outstanding = 0;
  #errors = 0;
  #idleWaiters: (() => void)[] = [];

  constructor(port: number, floodSeconds: number) {
    this.#port = port;
    this.#maxProbes = Math.min(MAX_PROBES, Math.ceil((floodSeconds * 1000) / PROBE_INTERVAL_MS) + 10);
  }

  /** Opens PROBE_CONNECTIONS keep-alive sockets with concurrent, unrecorded requests. */
  async warm(): Promise<void> {
    await Promise.all(Array.from({ length: PROBE_CONNECTIONS }, () => this.#get().catch(() => undefined)));
  }

  start(): void {
    this.#probe();
    this.#timer = setInterval(() => this.#probe(), PROBE_INTERVAL_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Resolves once every probe sent has been answered or has failed (each is bounded by its timeout). */
  async drained(): Promise<void> {
    while (this.#outstanding > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  close(): void {
    this.stop();
    this.#agent.destroy();
  }

  get stats(): ProbeStats {
    return { p50Ms: percentileMs(this.#latency, 50), p99Ms: percentileMs(this.#latency, 99), completed: this.#latency.count, errors: this.#errors };
  }

  #probe(): void {
    if (this.#issued >= this.#maxProbes) {
      this.stop();
      return;
    }
    this.#issued++;
    // Counted as an error rather than sent: the bound keeps sockets and memory finite.
    if (this.#outstanding >= MAX_PROBES_OUTSTANDING) {
      this.#errors++;
      return;
    }
    this.#outstanding++;
    const started = performance.now();
    const settle = (outcome: ProbeOutcome | 'failed'): void => {
      if (outcome !== 'answered') this.#errors++;
      if (outcome !== 'failed') this.#latency.record(toMicros(performance.now() - started));
      this.#outstanding--;
      if (this.#outstanding === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    };
    this.#get().then(settle, () => settle('failed'));
  }

  /** One GET /healthz; rejects on a non-200 answer or an error, resolves 'timed-out' at the deadline. */
  #get(): Promise<ProbeOutcome> {
    return new Promise((resolve, reject) => {
      const fail = (error: unknown): void => {
        clearTimeout(timer);
        reject(error);
      };
      const req = request({ host: '127.0.0.1', port: this.#port, path: '/healthz', agent: this.#agent }, (res) => {
        res.once('end', () => {
          clearTimeout(timer);
          if (res.statusCode === 200) resolve('answered');
          else reject(new Error(`HTTP ${res.statusCode}`));
        });
        res.once('error', fail);
        res.resume();
      });
      // A whole-request deadline (the `timeout` option only watches an idle socket, and a probe
      // may wait in the agent's queue first). Settles first, so the error of the destroyed
      // request that follows is ignored.
      const timer = setTimeout(() => {
        resolve('timed-out');
        req.destroy();
      }, PROBE_TIMEOUT_MS);
      req.once('error', fail);
      req.end();
    });
  }
}

/** A tiny HTTP server on the main thread: what a controller's health endpoint would be. */
export async function startHealthServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const ok = req.url === '/healthz';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'text/plain' });
    res.end(ok ? 'ok\n' : 'not found\n');
  });
  // The prober's persistent connections stay open however long the loop is blocked.
  server.keepAliveTimeout = 0;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

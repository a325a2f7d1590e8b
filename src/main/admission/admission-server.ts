// The validating admission webhook's HTTPS server (`run --webhook-addr`), on every replica:
// `POST /validate` takes an AdmissionReview (admission.k8s.io/v1) and answers it with the
// checker's verdict. A body over the cap or not a well-formed review is a 400 with the reason.
// Every review is answered within its deadline: past it the answer is allowed, with a warning,
// and counted, so the API server never times out on us (a checker failure answers the same way).
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { AdmissionVerdict } from '../../worker/admission-protocol.js';
import { systemClock, type Clock } from '../core/clock.js';
import { defaultLogger } from '../core/logger.js';
import { parseListenAddress } from '../metrics/http-endpoints.js';
import type { AdmissionKind, AdmissionOutcome } from '../metrics/metrics.js';
import { decodeReview, encodeReview } from './admission-review.js';
import type { AdmissionCheck } from './worker-admission-checker.js';

/** The API server's own cap on a request body (3 MiB): no larger review can come from it. */
export const MAX_REVIEW_BYTES = 3 * 1024 * 1024;
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 2000;
export const WEBHOOK_PATH = '/validate';
/** A request not received whole by then is cut off. */
const REQUEST_TIMEOUT_MS = 30_000;

/** What the server records (ControllerMetrics). */
export interface AdmissionMetrics {
  observeAdmission(kind: AdmissionKind, verdict: AdmissionOutcome, seconds: number): void;
}

export interface AdmissionServerOptions {
  /** `HOST:PORT` (port 0 picks a free one). */
  readonly address: string;
  /** PEM texts of the serving certificate (chain) and its key. */
  readonly cert: string;
  readonly key: string;
  readonly checker: AdmissionCheck;
  /** @default 2000 */
  readonly timeoutMs?: number;
  readonly metrics?: AdmissionMetrics;
  /**
   * Whether the stores hold what the cluster has (the initial lists are in). Before that, an
   * allowed review says so in a warning: ownership was judged against part of the cluster.
   * @default always
   */
  readonly synchronized?: () => boolean;
  readonly clock?: Clock;
  readonly logger?: Logger;
}

export interface AdmissionServer {
  /** The bound address, `HOST:PORT`. */
  readonly address: string;
  readonly port: number;
  /** Serves another certificate from now on (a renewed one); throws when the PEM texts do not load. */
  setCertificate(cert: string, key: string): void;
  /** Stops listening, closes every connection and the checker; idempotent. */
  close(): Promise<void>;
}

export async function startAdmissionServer(options: AdmissionServerOptions): Promise<AdmissionServer> {
  const listen = parseListenAddress(options.address);
  if (listen === 'off') throw new TypeError('--webhook-addr cannot be "off"; leave the flag out to serve no webhook');
  const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new TypeError(`the webhook timeout must be a positive integer of ms, got ${String(timeoutMs)}`);
  const handler = new ReviewHandler(options.checker, timeoutMs, options.clock ?? systemClock, options.metrics, options.logger ?? defaultLogger(), options.synchronized ?? (() => true));
  const server: Server = createServer({ cert: options.cert, key: options.key }, (req, res) => handler.handle(req, res));
  // The API server sends a review at once; a client that trickles one in only holds a socket.
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // A client that cannot finish a TLS handshake is its own problem, never a crash.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    address: bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`,
    port: bound.port,
    setCertificate(cert: string, key: string) {
      server.setSecureContext({ cert, key });
    },
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await closed;
        await options.checker.close();
      })();
      return closing;
    },
  };
}

class ReviewHandler {
  constructor(
    private readonly checker: AdmissionCheck,
    private readonly timeoutMs: number,
    private readonly clock: Clock,
    private readonly metrics: AdmissionMetrics | undefined,
    private readonly logger: Logger,
    private readonly synchronized: () => boolean,
  ) {}

  handle(req: IncomingMessage, res: ServerResponse): void {
    const started = this.clock.monotonic();
    const path = (req.url ?? '').split('?')[0];
    if (path !== WEBHOOK_PATH) return this.#plain(res, 404, `not found: the webhook serves POST ${WEBHOOK_PATH}`);
    if (req.method !== 'POST') return this.#plain(res, 405, `method ${req.method ?? ''} is not allowed: the webhook serves POST ${WEBHOOK_PATH}`, { allow: 'POST' });
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_REVIEW_BYTES) {
      res.once('finish', () => req.destroy());
      return this.#invalid(res, started, tooLarge(declared), true);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_REVIEW_BYTES) {
        done = true;
        // Once the 400 is out, the rest of the body is not read.
        res.once('finish', () => req.destroy());
        this.#invalid(res, started, tooLarge(size), true);
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => {
      done = true;
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      void this.#review(Buffer.concat(chunks).toString('utf8'), res, started);
    });
  }

  async #review(body: string, res: ServerResponse, started: number): Promise<void> {
    const decoded = decodeReview(body);
    if (!decoded.ok) return this.#invalid(res, started, `malformed AdmissionReview: ${decoded.message}`, false);
    if (decoded.check === undefined) return this.#answer(res, decoded.uid, 'other', 'allowed', { allowed: true, warnings: [] }, started);
    const kind = decoded.check.kind as AdmissionKind;
    let timer;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('timeout'), this.timeoutMs, { unref: true });
    });
    let outcome: AdmissionVerdict | 'timeout' | Error;
    try {
      outcome = await Promise.race([this.checker.check(decoded.check), deadline]);
    } catch (error) {
      outcome = error instanceof Error ? error : new Error(String(error));
    } finally {
      this.clock.clearTimeout(timer);
    }
    if (outcome === 'timeout') {
      const warning = `haptic-reconciler did not finish checking this ${kind} within ${this.timeoutMs} ms; it was admitted unchecked, and the controller still checks it before it is served`;
      return this.#answer(res, decoded.uid, kind, 'timeout', { allowed: true, warnings: [warning] }, started);
    }
    if (outcome instanceof Error) {
      this.logger.warn({ err: outcome }, 'admission check failed; the object was admitted unchecked');
      const warning = `haptic-reconciler could not check this ${kind} (${outcome.message}); it was admitted unchecked, and the controller still checks it before it is served`;
      return this.#answer(res, decoded.uid, kind, 'error', { allowed: true, warnings: [warning] }, started);
    }
    if (!outcome.allowed) return this.#answer(res, decoded.uid, kind, 'denied', outcome, started);
    const verdict = this.synchronized() ? outcome : { ...outcome, warnings: [...outcome.warnings, UNSYNCHRONIZED] };
    return this.#answer(res, decoded.uid, kind, 'allowed', verdict, started);
  }

  #answer(res: ServerResponse, uid: string, kind: AdmissionKind, label: AdmissionOutcome, verdict: AdmissionVerdict, started: number): void {
    this.metrics?.observeAdmission(kind, label, (this.clock.monotonic() - started) / 1000);
    if (res.writableEnded || res.destroyed) return;
    const body = encodeReview(uid, verdict);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  #invalid(res: ServerResponse, started: number, message: string, close: boolean): void {
    this.metrics?.observeAdmission('other', 'invalid', (this.clock.monotonic() - started) / 1000);
    this.#plain(res, 400, message, close ? { connection: 'close' } : {});
  }

  #plain(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    if (res.writableEnded || res.destroyed) return;
    const body = `${message}\n`;
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  }
}

const UNSYNCHRONIZED = 'haptic-reconciler has not finished reading the cluster: host ownership and references were checked against the objects it has read so far';

function tooLarge(bytes: number): string {
  return `the AdmissionReview is ${bytes} bytes or more, over the limit of ${MAX_REVIEW_BYTES} bytes (the API server's own request cap)`;
}

// AgentServer: the agent's HTTP(S) surface on `--listen`. `/healthz` (200 while the process
// serves) and `/readyz` (200 only while its HAProxy serves a config it was given, else 503) need no
// token, for the kubelet's probes; `GET /v1/state` and `POST /v1/apply` need the bearer token
// (401). An apply body is capped (413 past `maxBodyBytes`, counted as it arrives, whatever
// Content-Length says), must be JSON (400) and must pass parseApplyRequest (400); the rest is the
// Agent's answer (200, 409 fenced, 412 full sync required, 422 refused by `haproxy -c`, 502).
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { parseListenAddress } from '../metrics/http-endpoints.js';
import { parseApplyRequest, type AgentState, type ApplyAnswer, type ApplyLimits, type ApplyRequest } from './agent-protocol.js';
import type { BearerAuth } from './bearer-auth.js';

/** What the server needs of the Agent. */
export interface AgentApi {
  readonly ready: boolean;
  state(): AgentState;
  apply(request: ApplyRequest): Promise<{ readonly status: number; readonly answer: ApplyAnswer }>;
}

export interface AgentServerOptions {
  /** `HOST:PORT` (port 0 picks one). */
  readonly listen: string;
  readonly agent: AgentApi;
  readonly auth: BearerAuth;
  readonly logger: Logger;
  /** PEM certificate and key: serve HTTPS. */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Largest apply body. @default 256 MiB */
  readonly maxBodyBytes?: number;
  readonly limits?: ApplyLimits;
  /** Called with each apply's status (metrics). */
  readonly onApply?: (status: number) => void;
}

export interface AgentServer {
  /** `HOST:PORT` as bound. */
  readonly address: string;
  close(): Promise<void>;
}

export async function startAgentServer(options: AgentServerOptions): Promise<AgentServer> {
  const listen = parseListenAddress(options.listen);
  if (listen === 'off') throw new TypeError('--listen cannot be off');
  const maxBody = options.maxBodyBytes ?? 256 * 1024 * 1024;
  const handler = (request: IncomingMessage, response: ServerResponse): void => {
    handle(request, response, options, maxBody).catch((error: unknown) => {
      options.logger.error({ err: error }, 'agent request failed');
      if (!response.headersSent) json(response, 500, { ok: false, message: 'internal error' });
      else response.destroy();
    });
  };
  const server: Server = options.tls === undefined ? createHttpServer(handler) : createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler);
  server.requestTimeout = 120_000;
  // The leader keeps its connection between applies and closes it after 30 s idle (agent-client.ts): longer here, so it is never closed under a request.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const address = bound.family === 'IPv6' ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: AgentServerOptions, maxBody: number): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  const method = request.method ?? 'GET';
  if (path === '/healthz' || path === '/readyz') {
    if (method !== 'GET' && method !== 'HEAD') return json(response, 405, { ok: false, message: 'method not allowed' });
    if (path === '/healthz') return json(response, 200, { ok: true });
    const ready = options.agent.ready;
    return json(response, ready ? 200 : 503, { ready });
  }
  if (path !== '/v1/state' && path !== '/v1/apply') return json(response, 404, { ok: false, message: 'not found' });
  if (!options.auth.check(request.headers.authorization, request.socket.remoteAddress ?? 'unknown')) {
    request.resume();
    return json(response, 401, { ok: false, error: 'unauthorized', message: 'a valid bearer token is required' });
  }
  if (path === '/v1/state') {
    if (method !== 'GET') return json(response, 405, { ok: false, message: 'GET only' });
    return json(response, 200, options.agent.state());
  }
  if (method !== 'POST') return json(response, 405, { ok: false, message: 'POST only' });
  const body = await readBody(request, maxBody);
  if (body === undefined) {
    options.onApply?.(413);
    response.setHeader('connection', 'close');
    return json(response, 413, { ok: false, error: 'too_large', message: `the body is larger than ${maxBody} bytes` });
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(body.toString('utf8'));
  } catch (error) {
    options.onApply?.(400);
    return json(response, 400, { ok: false, error: 'invalid', message: `the body is not JSON: ${(error as Error).message}` });
  }
  const parsed = parseApplyRequest(decoded, options.limits);
  if (!parsed.ok) {
    options.onApply?.(400);
    return json(response, 400, { ok: false, error: 'invalid', message: parsed.message, state: options.agent.state() });
  }
  const outcome = await options.agent.apply(parsed.request);
  options.onApply?.(outcome.status);
  return json(response, outcome.status, outcome.answer);
}

/** The body, or undefined once it passes `max` bytes (the rest is not read). */
function readBody(request: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    request.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    request.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    request.on('error', reject);
  });
}

function json(response: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

// AgentClient: the leader's HTTP(S) client of one agent. Every request carries the bearer token,
// runs under the fleet's shared ConcurrencyLimit and its own timeout, and resolves with the status
// and the decoded JSON answer; no answer at all (refused, reset, timed out, not JSON) rejects with
// AgentUnreachableError, which is how a target tells an unreachable instance from a refusal.
// Connections are kept open between exchanges (one pool per agent, its sockets unreferenced while
// idle; an idle one closes after 30 s, before the agent's 65 s keep-alive ends it, so a request
// never races the agent's close), and the TLS context (the CA) is built once: an endpoint change
// costs no TCP or TLS handshake.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions as HttpsRequestOptions } from 'node:https';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { ConcurrencyLimit } from './concurrency-limit.js';

export interface AgentEndpoint {
  readonly host: string;
  readonly port: number;
}

export interface AgentClientOptions {
  readonly endpoint: AgentEndpoint;
  readonly token: string;
  /** PEM CA bundle: talk HTTPS and verify the agent's certificate against it. Without it: HTTP. */
  readonly ca?: string;
  readonly limit: ConcurrencyLimit;
  /** Per request, connect to last byte. @default 10_000 */
  readonly timeoutMs?: number;
  /** Largest answer read. @default 1 MiB */
  readonly maxAnswerBytes?: number;
  /** Sees each request: what it was for, how long it took, and the body bytes sent. */
  readonly onRequest?: (kind: string, seconds: number, bytesSent: number) => void;
}

export interface AgentAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export class AgentUnreachableError extends Error {
  override readonly name = 'AgentUnreachableError';
}

/** An idle connection to an agent closes after this long (under the agent server's keep-alive). */
export const IDLE_CONNECTION_MS = 30_000;

export class AgentClient {
  readonly endpoint: AgentEndpoint;
  readonly #options: AgentClientOptions;
  readonly #pool: HttpAgent;
  readonly #secureContext: SecureContext | undefined;

  constructor(options: AgentClientOptions) {
    this.endpoint = options.endpoint;
    this.#options = options;
    this.#secureContext = options.ca === undefined ? undefined : createSecureContext({ ca: options.ca });
    this.#pool = options.ca === undefined ? new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }) : new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS });
  }

  /** True when the connection is encrypted (an `--agent-ca` was given). */
  get tls(): boolean {
    return this.#options.ca !== undefined;
  }

  /** `HOST:PORT`, for logs only (never a metric label). */
  get address(): string {
    const { host, port } = this.endpoint;
    return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  }

  /** @param kind what the request is for (`state`, `runtime`, `files`, `reload`): metrics only. */
  send(method: 'GET' | 'POST', path: string, kind: string, body?: unknown): Promise<AgentAnswer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return this.#options.limit.run(async () => {
      const started = performance.now();
      try {
        return await this.#exchange(method, path, payload);
      } finally {
        this.#options.onRequest?.(kind, (performance.now() - started) / 1000, payload?.length ?? 0);
      }
    });
  }

  #exchange(method: string, path: string, payload: Buffer | undefined): Promise<AgentAnswer> {
    const options = this.#options;
    const timeoutMs = options.timeoutMs ?? 10_000;
    const maxAnswer = options.maxAnswerBytes ?? 1024 * 1024;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { authorization: `Bearer ${options.token}`, accept: 'application/json' };
      if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
      const common = { host: this.endpoint.host, port: this.endpoint.port, method, path, headers, timeout: timeoutMs, agent: this.#pool };
      const onResponse = (response: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxAnswer) request.destroy(new Error(`the answer is larger than ${maxAnswer} bytes`));
          else chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(deadline);
          try {
            const decoded: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            if (typeof decoded !== 'object' || decoded === null) throw new Error('not a JSON object');
            resolve({ status: response.statusCode ?? 0, body: decoded as Record<string, unknown> });
          } catch (error) {
            reject(new AgentUnreachableError(`agent ${this.address} answered ${response.statusCode ?? '?'} without JSON: ${(error as Error).message}`));
          }
        });
        response.on('error', (error) => reject(new AgentUnreachableError(`agent ${this.address}: ${error.message}`)));
      };
      const request =
        this.#secureContext === undefined ? httpRequest(common, onResponse) : httpsRequest({ ...common, secureContext: this.#secureContext, rejectUnauthorized: true } as HttpsRequestOptions, onResponse);
      // `timeout` only covers idle sockets: the whole exchange has its own deadline.
      const deadline = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      request.on('error', (error) => {
        clearTimeout(deadline);
        reject(new AgentUnreachableError(`agent ${this.address}: ${error.message}`));
      });
      request.end(payload);
    });
  }
}

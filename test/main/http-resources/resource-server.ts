// A local HTTP server on 127.0.0.1 (port 0) that serves one resource the tests reconfigure:
// content (with ETag / Last-Modified, honouring conditional requests or not), an error status,
// an oversized streamed body, or a request that never gets an answer. It records every request.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ServedMode =
  | { readonly kind: 'content'; readonly body: string; readonly etag?: string; readonly lastModified?: string; readonly conditional?: boolean }
  | { readonly kind: 'status'; readonly status: number }
  /** A body of `bytes` bytes, streamed without Content-Length (or with it, when `declared`). */
  | { readonly kind: 'oversize'; readonly bytes: number; readonly declared?: boolean }
  /** Headers never come: the request stays open until the client gives up. */
  | { readonly kind: 'hang' };

export interface RecordedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Set when the client closed the request before the server answered it. */
  abortedByClient: boolean;
}

export class ResourceServer {
  readonly requests: RecordedRequest[] = [];
  mode: ServedMode = { kind: 'status', status: 404 };
  readonly #server: Server = createServer((req, res) => this.#handle(req.url ?? '/', req.headers, req, res));
  #port = 0;

  static async start(): Promise<ResourceServer> {
    const instance = new ResourceServer();
    await new Promise<void>((resolve) => instance.#server.listen(0, '127.0.0.1', resolve));
    instance.#port = (instance.#server.address() as AddressInfo).port;
    return instance;
  }

  /** The URL of `path` on this server. */
  url(path = '/blocklist.txt'): string {
    return `http://127.0.0.1:${this.#port}${path}`;
  }

  /** Closes the listener and every open connection; later requests are refused. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #handle(path: string, headers: IncomingHttpHeaders, req: NodeJS.ReadableStream, res: ServerResponse): void {
    const recorded: RecordedRequest = { path, headers, abortedByClient: false };
    this.requests.push(recorded);
    res.on('close', () => {
      if (!res.writableFinished) recorded.abortedByClient = true;
    });
    req.resume();
    const mode = this.mode;
    switch (mode.kind) {
      case 'hang':
        return;
      case 'status':
        res.writeHead(mode.status, { 'content-type': 'text/plain' }).end('nope');
        return;
      case 'oversize': {
        res.writeHead(200, { 'content-type': 'text/plain', ...(mode.declared === true ? { 'content-length': String(mode.bytes) } : {}) });
        const chunk = 'x'.repeat(256);
        let left = mode.bytes;
        while (left > 0) {
          res.write(chunk.slice(0, Math.min(left, chunk.length)));
          left -= chunk.length;
        }
        res.end();
        return;
      }
      case 'content': {
        const fresh =
          mode.conditional !== false &&
          ((mode.etag !== undefined && headers['if-none-match'] === mode.etag) ||
            (mode.etag === undefined && mode.lastModified !== undefined && headers['if-modified-since'] === mode.lastModified));
        const validators = { ...(mode.etag === undefined ? {} : { etag: mode.etag }), ...(mode.lastModified === undefined ? {} : { 'last-modified': mode.lastModified }) };
        if (fresh) {
          res.writeHead(304, validators).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain', ...validators }).end(mode.body);
        return;
      }
      default: {
        const unexpected: never = mode;
        throw new Error(`unknown mode ${JSON.stringify(unexpected)}`);
      }
    }
  }
}

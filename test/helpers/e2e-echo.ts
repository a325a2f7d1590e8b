// Echo backends for end-to-end tests: HTTP servers on 127.0.0.x loopback addresses that answer
// every request with their own name and what they received (method, URL, headers) as JSON, so a
// test can tell which backend served a request and what HAProxy added to it. `kill` closes the
// listener and every open connection at once, as a crashed pod would. Options make a server slow
// (it answers after a delay) or sick (another status for some paths, e.g. its health check).
// A request with `Upgrade` (a WebSocket handshake) gets 101 Switching Protocols, after which the
// server echoes every byte it receives on that connection: a long-lived tunnel through HAProxy.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { TAKEN_PORTS } from './test-ports.js';

export interface EchoReply {
  readonly name: string;
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface EchoServer {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** Stops listening and drops every connection. */
  kill(): Promise<void>;
}

export interface EchoOptions {
  /** Answer every request this long after it arrived. @default 0 */
  readonly delayMs?: number;
  /** The status of the reply to a request for `path` (with its query). @default 200 */
  readonly statusFor?: (path: string) => number;
}

/** Starts an echo server named `name` on `host` (a loopback address) and a free port. */
export async function startEcho(name: string, host = '127.0.0.1', options: EchoOptions = {}): Promise<EchoServer> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const reply: EchoReply = { name, method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    const body = JSON.stringify(reply);
    const answer = (): void => {
      res.writeHead(options.statusFor?.(req.url ?? '') ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-echo-name': name });
      res.end(body);
    };
    if (options.delayMs === undefined || options.delayMs <= 0) {
      answer();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer();
    }, options.delayMs);
    timers.add(timer);
  });
  server.on('upgrade', (req, socket: Socket, head: Buffer) => {
    // RFC 6455's accept value: HAProxy checks the WebSocket handshake.
    const accept = createHash('sha1').update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade ?? ''}\r\nSec-WebSocket-Accept: ${accept}\r\nX-Echo-Name: ${name}\r\n\r\n`);
    if (head.length > 0) socket.write(head);
    socket.on('data', (chunk: Buffer) => socket.write(chunk));
    // node:http leaves upgraded sockets half-open; a WebSocket server closes when its client does.
    socket.on('end', () => socket.end());
    socket.on('error', () => socket.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // An ephemeral port that no test handed to HAProxy (test-ports.ts); a taken one is given back.
  let port: number;
  for (;;) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    port = (server.address() as AddressInfo).port;
    if (!TAKEN_PORTS.has(port)) break;
    await new Promise((resolve) => server.close(resolve));
  }
  TAKEN_PORTS.add(port);
  let killed: Promise<void> | undefined;
  return {
    name,
    host,
    port,
    kill(): Promise<void> {
      killed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
      });
      return killed;
    },
  };
}

/** Echo servers started by a test, all killed by `stopAll` (in `afterEach`). */
export class EchoFleet {
  readonly #servers: EchoServer[] = [];

  async start(name: string, host = '127.0.0.1', options: EchoOptions = {}): Promise<EchoServer> {
    const server = await startEcho(name, host, options);
    this.#servers.push(server);
    return server;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.#servers.splice(0).map((server) => server.kill()));
  }
}

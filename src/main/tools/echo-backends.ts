// Echo backends for trying the controller on one machine (`haptic-reconciler backends`): HTTP
// servers on the given loopback addresses that answer every request with their own address and
// what they received (method, URL, headers) as JSON, so a curl through HAProxy shows which
// backend served it and what HAProxy added. Not for production traffic.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface EchoReply {
  readonly backend: string;
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface EchoBackend {
  /** `host:port` as bound. */
  readonly address: string;
  close(): Promise<void>;
}

/** Starts one echo backend on `host:port` (port 0: any free port). */
export async function startEchoBackend(host: string, port: number, name?: string): Promise<EchoBackend> {
  const sockets = new Set<Socket>();
  let address = `${host}:${port}`;
  const server: Server = createServer((req, res) => {
    const reply: EchoReply = { backend: name ?? address, method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    const body = `${JSON.stringify(reply)}\n`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-backend': name ?? address });
    res.end(body);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  address = `${host}:${(server.address() as AddressInfo).port}`;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** Parses `HOST:PORT` (IPv4 or a name; `[v6]:PORT`), naming the value when it is not one. */
export function parseBackendAddress(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || !Number.isInteger(port) || port > 65535) throw new TypeError(`expected HOST:PORT, got ${JSON.stringify(text)}`);
  return { host: (match[1] ?? match[2]) as string, port };
}

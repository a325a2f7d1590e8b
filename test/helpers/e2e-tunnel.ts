// A long-lived connection through HAProxy for reload tests: an HTTP/1.1 Upgrade handshake (as a
// WebSocket client starts one) over a raw socket to 127.0.0.1:<port>, answered 101 by an echo
// backend (e2e-echo.ts), after which `exchange` sends text and reads the same text back. `closed`
// tells when HAProxy (or the backend) ended the connection.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export interface Tunnel {
  /** The echo backend that accepted the upgrade. */
  readonly backend: string;
  /** Sends `text` and resolves with what came back once as many bytes arrived. */
  exchange(text: string, timeoutMs?: number): Promise<string>;
  /** Whether the connection has ended. */
  readonly isClosed: boolean;
  /** Resolves when the connection ends. */
  readonly closed: Promise<void>;
  close(): void;
}

/** Opens an Upgrade tunnel to `host`/`path` through the HAProxy listening on 127.0.0.1:<port>. */
export function openTunnel(port: number, host: string, path = '/ws', timeoutMs = 5_000): Promise<Tunnel> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: '127.0.0.1', port });
    let buffered = Buffer.alloc(0);
    let onData: (() => void) | undefined;
    let isClosed = false;
    const closed = new Promise<void>((resolveClosed) => socket.once('close', () => {
      isClosed = true;
      onData?.();
      resolveClosed();
    }));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no 101 from ${host}${path} on :${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      onData?.();
    });
    socket.once('connect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`);
    });
    onData = () => {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) {
        if (isClosed) reject(new Error(`the connection to ${host}${path} closed before a 101`));
        return;
      }
      clearTimeout(timer);
      const head = buffered.subarray(0, end).toString('latin1');
      buffered = buffered.subarray(end + 4);
      onData = undefined;
      if (!head.startsWith('HTTP/1.1 101')) {
        socket.destroy();
        reject(new Error(`expected 101 from ${host}${path}, got ${JSON.stringify(head.split('\r\n')[0])}`));
        return;
      }
      const backend = /^x-echo-name: *(.*)$/im.exec(head)?.[1] ?? '';
      resolve({
        backend,
        get isClosed() {
          return isClosed;
        },
        closed,
        close: () => socket.destroy(),
        exchange(text: string, exchangeTimeoutMs = 2_000): Promise<string> {
          return new Promise((resolveExchange, rejectExchange) => {
            const want = Buffer.byteLength(text);
            const give = (): void => {
              if (buffered.length >= want) {
                const reply = buffered.subarray(0, want).toString('utf8');
                buffered = buffered.subarray(want);
                finish();
                resolveExchange(reply);
              } else if (isClosed) {
                finish();
                rejectExchange(new Error(`the tunnel closed before ${JSON.stringify(text)} came back`));
              }
            };
            const exchangeTimer = setTimeout(() => {
              finish();
              rejectExchange(new Error(`${JSON.stringify(text)} did not come back within ${exchangeTimeoutMs} ms`));
            }, exchangeTimeoutMs);
            const finish = (): void => {
              clearTimeout(exchangeTimer);
              onData = undefined;
            };
            onData = give;
            if (isClosed) give();
            else socket.write(text);
          });
        },
      });
    };
  });
}

// One request/reply exchange with a HAProxy CLI over a UNIX socket (node:net): connect, write the
// request, read until HAProxy closes the connection. Both the Runtime API and the master CLI close
// once they have answered a request that ends the session (a non-interactive line, or `quit`),
// so "the reply" is everything read before the close. Timeouts run on the injected Clock.
import { createConnection } from 'node:net';
import { HaproxyCliError } from '../core/errors.js';
import { systemClock, type Clock } from '../core/clock.js';

/** How a client reaches a CLI; tests replace it with a scripted one. */
export interface CliTransport {
  /** Sends `request` (complete lines, newline-terminated) and resolves with everything HAProxy wrote back. */
  exchange(request: string, signal?: AbortSignal): Promise<string>;
  /** The socket path, for messages. */
  readonly socketPath: string;
}

export interface UnixSocketTransportOptions {
  readonly socketPath: string;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Whole exchange, connect to close. @default 10_000 */
  readonly timeoutMs?: number;
  /** A reply larger than this is cut off and fails (`show map` of a huge map). @default 64 MiB */
  readonly maxReplyBytes?: number;
}

/** UNIX sockets carry at most 107 path bytes on Linux; HAProxy fails obscurely beyond that. */
export const MAX_UNIX_SOCKET_PATH_BYTES = 107;

export class UnixSocketTransport implements CliTransport {
  readonly socketPath: string;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #maxReplyBytes: number;

  constructor(options: UnixSocketTransportOptions) {
    if (Buffer.byteLength(options.socketPath) > MAX_UNIX_SOCKET_PATH_BYTES) {
      throw new TypeError(`UNIX socket path longer than ${MAX_UNIX_SOCKET_PATH_BYTES} bytes: ${JSON.stringify(options.socketPath)}`);
    }
    this.socketPath = options.socketPath;
    this.#clock = options.clock ?? systemClock;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#maxReplyBytes = options.maxReplyBytes ?? 64 * 1024 * 1024;
  }

  exchange(request: string, signal?: AbortSignal): Promise<string> {
    const path = this.socketPath;
    return new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      let connected = false;
      const socket = createConnection({ path });
      const finish = (error: HaproxyCliError | undefined): void => {
        if (done) return;
        done = true;
        this.#clock.clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.destroy();
        if (error === undefined) resolve(Buffer.concat(chunks).toString('utf8'));
        else reject(error);
      };
      const onAbort = (): void => finish(new HaproxyCliError(path, 'closed', 'aborted by the caller', { cause: signal?.reason }));
      const timer = this.#clock.setTimeout(
        () => finish(new HaproxyCliError(path, 'timeout', `no complete reply within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
        { unref: true },
      );
      if (signal?.aborted === true) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      // No half-close after the request: HAProxy may drop a session whose peer shut its side
      // before the reply. Every request here makes HAProxy close first (a non-interactive line,
      // `quit`, or the master's `reload`).
      socket.on('connect', () => {
        connected = true;
        socket.write(request);
      });
      socket.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > this.#maxReplyBytes) {
          finish(new HaproxyCliError(path, 'reply-too-large', `reply larger than ${this.#maxReplyBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      // HAProxy closes after the reply; 'end' is the normal end of an exchange.
      socket.on('end', () => finish(undefined));
      socket.on('close', () => finish(undefined));
      socket.on('error', (error: NodeJS.ErrnoException) => {
        const reason = connected ? 'closed' : 'connect';
        finish(new HaproxyCliError(path, reason, `${error.code ?? 'error'}: ${error.message}`, { cause: error }));
      });
    });
  }
}

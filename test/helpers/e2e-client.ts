// HTTP and HTTPS requests to a HAProxy on loopback, as a browser would send them to a host: the
// Host header (and SNI) name the host, the connection goes to 127.0.0.1. Replies carry status,
// headers and body, plus the echo backend's JSON when an echo server answered. `servedCertificate`
// completes a TLS handshake with a chosen SNI and reports the certificate and ALPN protocol.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import type { EchoReply } from './e2e-echo.js';

export interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The echo server's report, when the body is one. */
  readonly echo: EchoReply | undefined;
}

export interface RequestOptions {
  readonly port: number;
  /** The Host header (and, over TLS, the SNI name unless `servername` is given). */
  readonly host: string;
  readonly path?: string;
  readonly method?: string;
  readonly tls?: boolean;
  readonly servername?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Where to connect (another loopback address, e.g. a Gateway's 127.0.0.5 or one agent of a fleet). @default '127.0.0.1' */
  readonly address?: string;
  /** The client's source address (a loopback address such as 127.0.0.2), to test source-address rules. */
  readonly localAddress?: string;
  /** @default 5000 */
  readonly timeoutMs?: number;
}

/** One request on a fresh connection to 127.0.0.1:<port> (or `address`). */
export function send(options: RequestOptions): Promise<Reply> {
  const request = options.tls === true ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: options.address ?? '127.0.0.1',
        port: options.port,
        path: options.path ?? '/',
        method: options.method ?? 'GET',
        headers: { host: options.host, ...options.headers },
        agent: false,
        timeout: options.timeoutMs ?? 5_000,
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
        ...(options.tls === true ? { servername: options.servername ?? options.host, rejectUnauthorized: false } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, echo: echoOf(res.headers, body) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${options.method ?? 'GET'} ${options.host}${options.path ?? '/'} on :${options.port} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

export interface ServedCertificate {
  readonly subject: string;
  /** SHA-256 fingerprint, as node:crypto's X509Certificate.fingerprint256 gives it. */
  readonly fingerprint256: string;
  /** The protocol ALPN settled on (`h2`, `http/1.1`), or false. */
  readonly alpnProtocol: string | false;
}

/** Completes a TLS handshake with `servername` as SNI, offering h2 and http/1.1, and reports what the server presented. */
export function servedCertificate(port: number, servername: string): Promise<ServedCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
      const peer: PeerCertificate = socket.getPeerCertificate();
      const subject = Object.entries(peer.subject ?? {})
        .map(([key, value]) => `${key}=${String(value)}`)
        .join(', ');
      resolve({ subject, fingerprint256: peer.fingerprint256, alpnProtocol: socket.alpnProtocol ?? false });
      socket.end();
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error(`TLS handshake with SNI ${servername} on :${port} timed out`)));
    socket.on('error', reject);
  });
}

function echoOf(headers: IncomingHttpHeaders, body: string): EchoReply | undefined {
  if (headers['x-echo-name'] === undefined) return undefined;
  try {
    return JSON.parse(body) as EchoReply;
  } catch {
    return undefined;
  }
}

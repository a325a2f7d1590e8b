// One conditional GET of an HTTP resource with Node's global fetch: If-None-Match /
// If-Modified-Since from the previous answer, a timeout on the injected clock, and a cap on the
// body. Returns the outcome as data and never throws: a network error, a timeout, a non-2xx
// status or an oversized body is a `failed` outcome naming the reason.
import { createHash } from 'node:crypto';
import type { Clock } from '../core/clock.js';

/** Content larger than this (after decompression) is a failed fetch. 4 MiB. */
export const MAX_HTTP_RESOURCE_BYTES = 4 * 1024 * 1024;

export interface ConditionalFetchOptions {
  readonly url: string;
  /** The ETag of the content held, sent as If-None-Match. */
  readonly etag?: string | undefined;
  /** The Last-Modified of the content held, sent as If-Modified-Since. */
  readonly lastModified?: string | undefined;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly clock: Clock;
  /** Aborting it aborts the request (and reading its body). */
  readonly signal: AbortSignal;
}

export type FetchOutcome =
  | { readonly kind: 'not-modified' }
  | {
      readonly kind: 'content';
      readonly content: string;
      /** SHA-256 (hex) of the body's bytes. */
      readonly checksum: string;
      readonly bytes: number;
      readonly etag: string | undefined;
      readonly lastModified: string | undefined;
    }
  | { readonly kind: 'failed'; readonly reason: string }
  /** The caller's signal aborted. */
  | { readonly kind: 'aborted' };

const NOT_MODIFIED: FetchOutcome = Object.freeze({ kind: 'not-modified' });
const ABORTED: FetchOutcome = Object.freeze({ kind: 'aborted' });

export async function conditionalFetch(options: ConditionalFetchOptions): Promise<FetchOutcome> {
  const { signal, clock, maxBytes, timeoutMs } = options;
  if (signal.aborted) return ABORTED;
  const request = new AbortController();
  let timedOut = false;
  const onAbort = (): void => request.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  // On the injected clock, not AbortSignal.timeout, so tests drive the timeout without waiting.
  const timer = clock.setTimeout(
    () => {
      timedOut = true;
      request.abort(new Error(`timed out after ${timeoutMs} ms`));
    },
    timeoutMs,
    { unref: true },
  );
  try {
    const headers: Record<string, string> = { accept: '*/*', 'user-agent': 'haptic-reconciler' };
    if (options.etag !== undefined) headers['if-none-match'] = options.etag;
    if (options.lastModified !== undefined) headers['if-modified-since'] = options.lastModified;
    const response = await fetch(options.url, { headers, signal: request.signal, redirect: 'follow' });
    if (response.status === 304) {
      await discard(response);
      return NOT_MODIFIED;
    }
    if (!response.ok) {
      await discard(response);
      return failed(`HTTP ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`);
    }
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > maxBytes) {
      await discard(response);
      return failed(`content of ${declared} bytes exceeds the limit of ${maxBytes} bytes`);
    }
    // Counted as read, after decompression: a small compressed body cannot inflate past the cap.
    const body = await readCapped(response, maxBytes);
    if (body === undefined) return failed(`content exceeds the limit of ${maxBytes} bytes`);
    return {
      kind: 'content',
      content: body.toString('utf8'),
      checksum: createHash('sha256').update(body).digest('hex'),
      bytes: body.byteLength,
      etag: validator(response.headers.get('etag')),
      lastModified: validator(response.headers.get('last-modified')),
    };
  } catch (error) {
    if (signal.aborted) return ABORTED;
    if (timedOut) return failed(`timed out after ${timeoutMs} ms`);
    return failed(describe(error));
  } finally {
    clock.clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

function failed(reason: string): FetchOutcome {
  return { kind: 'failed', reason };
}

/** The body, or undefined as soon as it grows past `maxBytes` (the rest is not read). */
async function readCapped(response: Response, maxBytes: number): Promise<Buffer | undefined> {
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

/**
 * A response's ETag or Last-Modified, kept for the next request only when it is plain printable
 * ASCII of sane length: a value fetch refuses to send would fail every later request.
 */
function validator(value: string | null): string | undefined {
  return value !== null && /^[\x20-\x7e]{1,1024}$/.test(value) ? value : undefined;
}

/** fetch reports network errors as `TypeError: fetch failed` with the reason in `cause`. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}

// Plain JSON requests to the API server with the kubeconfig's credentials and TLS settings
// (client-node's applyToHTTPSOptions, over node:http/https). Used where client-node's typed
// clients get in the way: LIST bodies must stay raw JSON (the typed deserializer turns
// timestamps into Date objects the templates do not expect), and Lease times must be written
// as MicroTime strings the API server accepts (client-node 1.4 sends a Date it rejects).
// Guards against a hung connection with a socket inactivity limit.
import type { KubeConfig } from '@kubernetes/client-node';
import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeObject } from '../../../worker/protocol.js';

export interface KubeRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  /** The path below the server URL, e.g. `/api/v1/namespaces/default/services`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | undefined>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** The body's media type. @default application/json (a PATCH: application/merge-patch+json) */
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /**
   * The connection is given up when no byte moved for this long. A property of the socket (it
   * restarts with every chunk, so a long list that keeps streaming is never cut), not a deadline:
   * callers with a deadline abort through `signal`. @default 30_000
   */
  readonly idleTimeoutMs?: number;
}

export interface KubeResponse {
  readonly status: number;
  /** The parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  readonly body: unknown;
}

/** A response outside 2xx. `statusCode` is the name client-node's ListWatch reads (410 relists). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  constructor(
    readonly statusCode: number,
    message: string,
    /** The Status `reason` (`Expired`, `Conflict`, `NotFound`), when the server sent one. */
    readonly reason?: string,
  ) {
    super(message);
  }
}

export interface KubeList {
  readonly metadata: { readonly resourceVersion: string };
  readonly items: KubeObject[];
}

export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Objects per page (`limit`); pages are joined. @default 500 */
  readonly pageSize?: number;
  readonly signal?: AbortSignal;
}

/** One request; resolves with any status (callers decide what 404 or 409 mean). */
export async function kubeRequest(kc: KubeConfig, request: KubeRequest): Promise<KubeResponse> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  // Concatenated, not resolved: a server URL may carry a path prefix (a proxy's /k8s/clusters/x).
  const url = new URL(cluster.server + request.path);
  for (const [key, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
  const options: https.RequestOptions = {};
  // Per request, so rotating credentials (service account tokens, exec plugins) stay current.
  await kc.applyToHTTPSOptions(options);
  const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const headers: http.OutgoingHttpHeaders = {
    ...(options.headers as http.OutgoingHttpHeaders | undefined),
    accept: 'application/json',
    'user-agent': 'haptic-reconciler',
    ...(payload === undefined ? {} : { 'content-type': request.contentType ?? (request.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'), 'content-length': payload.length }),
  };
  const transport = url.protocol === 'https:' ? https : http;
  request.signal?.throwIfAborted();
  return new Promise<KubeResponse>((resolve, reject) => {
    const req = transport.request(url, { ...options, method: request.method, headers, ...(request.signal === undefined ? {} : { signal: request.signal }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text === '' ? undefined : text;
        try {
          if (text !== '') body = JSON.parse(text);
        } catch {
          // Not JSON (a proxy's HTML error page): the caller gets the text.
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.setTimeout(request.idleTimeoutMs ?? 30_000, () => req.destroy(new Error(`no response from the API server for ${request.idleTimeoutMs ?? 30_000} ms (${request.method} ${request.path})`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Lists a collection, page by page (`limit`/`continue`), as one list with the first page's
 * resourceVersion (every page of a paginated list is served from that same snapshot). Items
 * stay raw JSON. Rejects with a KubeApiError on a status outside 2xx.
 */
export async function listAll(kc: KubeConfig, path: string, options: ListOptions = {}): Promise<KubeList> {
  const items: KubeObject[] = [];
  let resourceVersion: string | undefined;
  let continueToken: string | undefined;
  do {
    const response = await kubeRequest(kc, {
      method: 'GET',
      path,
      query: {
        limit: String(options.pageSize ?? 500),
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        continue: continueToken,
      },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (response.status < 200 || response.status > 299) throw apiError(response, `list ${path}`);
    const page = response.body as { metadata?: { resourceVersion?: string; continue?: string }; items?: KubeObject[] | null } | undefined;
    if (page === undefined || typeof page !== 'object') throw new KubeApiError(response.status, `list ${path}: the response is not a list`);
    resourceVersion ??= page.metadata?.resourceVersion ?? '';
    for (const item of page.items ?? []) items.push(item);
    continueToken = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
  } while (continueToken !== undefined);
  return { metadata: { resourceVersion: resourceVersion ?? '' }, items };
}

/** A KubeApiError for a failed response, with the Status message when there is one. */
export function apiError(response: KubeResponse, what: string): KubeApiError {
  const status = response.body as { message?: unknown; reason?: unknown } | string | undefined;
  const detail =
    typeof status === 'object' && status !== null && typeof status.message === 'string'
      ? status.message
      : typeof status === 'string'
        ? status.slice(0, 200)
        : http.STATUS_CODES[response.status] ?? 'no response body';
  const reason = typeof status === 'object' && status !== null && typeof status.reason === 'string' ? status.reason : undefined;
  return new KubeApiError(response.status, `${what}: ${response.status} ${detail}`, reason);
}

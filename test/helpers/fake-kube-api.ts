// A small fake Kubernetes API server on 127.0.0.1 for source and leader-election tests. It
// speaks the parts of the protocol the client relies on, including the awkward ones: LIST items
// without kind/apiVersion, chunked watch streams resumed from a resourceVersion, 410 Gone for a
// resourceVersion older than the last compaction, optimistic concurrency (409) on PUT, and the
// strict MicroTime format of Lease times (400 otherwise). Tests break it on purpose with
// dropWatches(), endWatches(), compact(), failNext() and hold().
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { CLUSTER_SCOPED, keyOf, leaseProblem, matches, mergePatch, parsePath, type Parsed } from './fake-kube-paths.js';
import { gatewayStatusProblem, type StatusWrite } from './fake-kube-schema.js';

export type { StatusWrite } from './fake-kube-schema.js';

export type FakeObject = { apiVersion?: string; kind?: string; metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; [key: string]: unknown }; [key: string]: unknown };

export interface FakeRequestRecord {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly watch: boolean;
}

/** Where events.k8s.io/v1 Events are kept (see `events()`). */
export const EVENTS_PATH = '/apis/events.k8s.io/v1/events';

interface WatchStream {
  readonly resourcePath: string;
  readonly namespace: string | undefined;
  readonly query: Readonly<Record<string, string>>;
  readonly res: ServerResponse;
}

interface HistoryEvent {
  readonly rv: number;
  readonly resourcePath: string;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: FakeObject;
}

export class FakeKubeApi {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #objects = new Map<string, Map<string, FakeObject>>();
  readonly #kinds = new Map<string, string>();
  readonly #watches = new Set<WatchStream>();
  #history: HistoryEvent[] = [];
  #rv = 100;
  /** A watch from a resourceVersion below this is answered with 410 Gone. */
  #compactedBelow = 0;
  #failures: { count: number; readonly status: number; readonly match: (r: FakeRequestRecord) => boolean } = { count: 0, status: 500, match: () => true };
  #hold: { readonly count: number; readonly match: (r: FakeRequestRecord) => boolean; readonly waiting: (() => void)[] } | undefined;
  /** When set, every watch ends cleanly right after it started (a proxy that cuts streams). */
  endWatchesAtOnce = false;
  /**
   * Collections (`/apis/gateway.networking.k8s.io/v1/gateways`) the server does not serve, as
   * when their CustomResourceDefinition is not installed: every request to them is a 404.
   */
  readonly unserved = new Set<string>();
  /** Every request, in arrival order. */
  readonly requests: FakeRequestRecord[] = [];
  /** Status codes answered, in order (watch streams count as 200 when they start). */
  readonly statuses: number[] = [];
  /** Every accepted write to a `status` subresource, in order, with the status it left. */
  readonly statusWrites: StatusWrite[] = [];

  private constructor() {
    this.#server = createServer((req, res) => this.#handle(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  static async start(): Promise<FakeKubeApi> {
    const api = new FakeKubeApi();
    await new Promise<void>((resolve) => api.#server.listen(0, '127.0.0.1', resolve));
    return api;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  get requestCount(): number {
    return this.requests.length;
  }

  get openWatches(): number {
    return this.#watches.size;
  }

  /** Creates or replaces an object of `resourcePath` (e.g. `/api/v1/services`); returns it as stored. */
  upsert(resourcePath: string, object: FakeObject): FakeObject {
    const key = keyOf(object.metadata.namespace, object.metadata.name);
    const existed = this.#store(resourcePath).has(key);
    if (object.kind !== undefined) this.#kinds.set(resourcePath, object.kind);
    return this.#write(resourcePath, key, object, existed ? 'MODIFIED' : 'ADDED');
  }

  /** Deletes `ns/name` (`name` when cluster-scoped); false when it did not exist. */
  delete(resourcePath: string, key: string): boolean {
    const store = this.#store(resourcePath);
    const old = store.get(key);
    if (old === undefined) return false;
    store.delete(key);
    const rv = ++this.#rv;
    this.#record({ rv, resourcePath, type: 'DELETED', object: { ...old, metadata: { ...old.metadata, resourceVersion: String(rv) } } });
    return true;
  }

  get(resourcePath: string, key: string): FakeObject | undefined {
    return this.#store(resourcePath).get(key);
  }

  /** The Events objects written so far (events.k8s.io/v1), sorted by name. */
  events(): FakeObject[] {
    return [...this.#store(EVENTS_PATH).values()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  }

  /** Destroys every open watch connection: the client sees a premature close. */
  dropWatches(): void {
    for (const watch of this.#watches) watch.res.socket?.destroy();
    this.#watches.clear();
  }

  /** Every resourceVersion handed out so far becomes too old to watch from (410 Gone). */
  compact(): void {
    this.#rv++;
    this.#compactedBelow = this.#rv;
    this.#history = [];
  }

  /** The next `count` requests that `match` (by default: any, watches included) are answered with `status`. */
  failNext(count: number, status = 500, match: (request: FakeRequestRecord) => boolean = () => true): void {
    this.#failures = { count, status, match };
  }

  /** Ends every open watch cleanly, as a server does when a watch's timeoutSeconds ran out. */
  endWatches(): void {
    for (const watch of this.#watches) watch.res.end();
    this.#watches.clear();
  }

  /** Holds the next `count` requests that `match` until all of them have arrived, then serves them in order. */
  hold(count: number, match: (request: FakeRequestRecord) => boolean): void {
    this.#hold = { count, match, waiting: [] };
  }

  /** Writes a kubeconfig pointing at this server (no auth) into `dir`; returns its path. */
  async writeKubeconfig(dir: string, namespace = 'default'): Promise<string> {
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'kubeconfig');
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'fake', user: {} }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', namespace } }],
      'current-context': 'fake',
    };
    await writeFile(file, JSON.stringify(config, null, 2));
    return file;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #store(resourcePath: string): Map<string, FakeObject> {
    const store = this.#objects.get(resourcePath) ?? new Map<string, FakeObject>();
    this.#objects.set(resourcePath, store);
    return store;
  }

  /**
   * Stores `object` with a new resourceVersion. As on a real server, `metadata.generation` starts
   * at 1 and grows only when `spec` changed (never for status or metadata alone).
   */
  #write(resourcePath: string, key: string, object: FakeObject, type: 'ADDED' | 'MODIFIED'): FakeObject {
    const rv = ++this.#rv;
    const before = this.#store(resourcePath).get(key);
    const previous = typeof before?.metadata.generation === 'number' ? before.metadata.generation : 0;
    const generation = before === undefined ? 1 : JSON.stringify(before.spec) === JSON.stringify(object.spec) ? Math.max(1, previous) : previous + 1;
    const stored: FakeObject = structuredClone({ ...object, metadata: { ...object.metadata, resourceVersion: String(rv), generation } });
    this.#store(resourcePath).set(key, stored);
    this.#record({ rv, resourcePath, type, object: stored });
    return stored;
  }

  #record(event: HistoryEvent): void {
    this.#history.push(event);
    for (const watch of this.#watches) if (watch.resourcePath === event.resourcePath) this.#send(watch, event);
  }

  #send(watch: WatchStream, event: HistoryEvent): void {
    if (!matches(event.object, watch.namespace, watch.query)) return;
    watch.res.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const record: FakeRequestRecord = { method: req.method ?? 'GET', path: url.pathname, query, watch: query.watch === 'true' || query.watch === '1' };
    this.requests.push(record);
    const hold = this.#hold;
    if (hold !== undefined && hold.match(record)) {
      hold.waiting.push(() => this.#serve(req, res, record));
      if (hold.waiting.length < hold.count) return;
      this.#hold = undefined;
      for (const serve of hold.waiting) serve();
      return;
    }
    this.#serve(req, res, record);
  }

  #serve(req: IncomingMessage, res: ServerResponse, record: FakeRequestRecord): void {
    if (this.#failures.count > 0 && this.#failures.match(record)) {
      this.#failures.count--;
      this.#status(res, this.#failures.status, 'InternalError', 'injected failure');
      return;
    }
    const parsed = parsePath(record.path);
    if (parsed === undefined || (parsed.namespace !== undefined && CLUSTER_SCOPED.has(parsed.resource)) || this.unserved.has(parsed.resourcePath)) {
      this.#status(res, 404, 'NotFound', `the server could not find the requested resource (${record.path})`);
      return;
    }
    if (record.method === 'GET' && parsed.name === undefined) {
      if (record.watch) this.#watch(res, parsed, record.query);
      else this.#list(res, parsed, record.query);
      return;
    }
    if (record.method === 'GET') {
      const object = this.#store(parsed.resourcePath).get(keyOf(parsed.namespace, parsed.name ?? ''));
      if (object === undefined) this.#status(res, 404, 'NotFound', `${parsed.resource} "${parsed.name}" not found`);
      else this.#json(res, 200, object);
      return;
    }
    if (parsed.subresource !== undefined && (parsed.subresource !== 'status' || parsed.name === undefined || record.method === 'POST')) {
      this.#status(res, 404, 'NotFound', `the server could not find the requested resource (${record.path})`);
      return;
    }
    if (record.method === 'POST' || record.method === 'PUT' || record.method === 'PATCH') {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (record.method === 'PATCH' && req.headers['content-type'] !== 'application/merge-patch+json') {
          this.#status(res, 415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json`);
        } else if (parsed.subresource === 'status' || record.method === 'PATCH') this.#update(res, parsed, record.method, text);
        else this.#save(res, parsed, record.method, text);
      });
      return;
    }
    this.#status(res, 405, 'MethodNotAllowed', `${record.method} is not supported here`);
  }

  #save(res: ServerResponse, parsed: Parsed, method: string, text: string): void {
    let body: FakeObject;
    try {
      body = JSON.parse(text) as FakeObject;
    } catch {
      this.#status(res, 400, 'BadRequest', 'the body is not JSON');
      return;
    }
    const name = method === 'PUT' ? parsed.name : body.metadata?.name;
    if (typeof name !== 'string' || name === '' || (method === 'PUT' && body.metadata?.name !== undefined && body.metadata.name !== name)) {
      this.#status(res, 400, 'BadRequest', 'metadata.name is missing or does not match the path');
      return;
    }
    const invalid = method === 'POST' && parsed.name !== undefined ? 'POST goes to the collection' : parsed.resource === 'leases' ? leaseProblem(body) : undefined;
    if (invalid !== undefined) {
      this.#status(res, 400, 'BadRequest', `${parsed.resource} in version "${parsed.apiVersion}" cannot be handled: ${invalid}`);
      return;
    }
    const key = keyOf(parsed.namespace, name);
    const existing = this.#store(parsed.resourcePath).get(key);
    if ((method === 'POST') !== (existing === undefined)) {
      if (existing === undefined) this.#status(res, 404, 'NotFound', `${parsed.resource} "${name}" not found`);
      else this.#status(res, 409, 'AlreadyExists', `${parsed.resource} "${name}" already exists`);
      return;
    }
    const expected = body.metadata.resourceVersion;
    if (method === 'PUT' && expected !== undefined && expected !== '' && expected !== existing?.metadata.resourceVersion) {
      this.#status(res, 409, 'Conflict', `Operation cannot be fulfilled on ${parsed.resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
      return;
    }
    const kind = body.kind ?? this.#kinds.get(parsed.resourcePath);
    const object: FakeObject = {
      ...body,
      apiVersion: parsed.apiVersion,
      ...(kind === undefined ? {} : { kind }),
      metadata: {
        ...body.metadata,
        name,
        ...(parsed.namespace === undefined ? {} : { namespace: parsed.namespace }),
        uid: (existing?.metadata.uid as string | undefined) ?? `uid-${this.#rv + 1}`,
        creationTimestamp: (existing?.metadata.creationTimestamp as string | undefined) ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    };
    const stored = this.#write(parsed.resourcePath, key, object, existing === undefined ? 'ADDED' : 'MODIFIED');
    this.#json(res, method === 'POST' ? 201 : 200, stored);
  }

  /**
   * PUT or merge-PATCH of an object's `status` subresource (only `status` changes: the
   * resourceVersion grows, the generation does not), or a merge-PATCH of a whole object.
   */
  #update(res: ServerResponse, parsed: Parsed, method: string, text: string): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      this.#status(res, 400, 'BadRequest', 'the body is not JSON');
      return;
    }
    const name = parsed.name ?? '';
    const key = keyOf(parsed.namespace, name);
    const existing = this.#store(parsed.resourcePath).get(key);
    if (existing === undefined) {
      this.#status(res, 404, 'NotFound', `${parsed.resource} "${name}" not found`);
      return;
    }
    const meta = body.metadata as { resourceVersion?: unknown } | undefined;
    if (meta?.resourceVersion !== undefined && meta.resourceVersion !== '' && meta.resourceVersion !== existing.metadata.resourceVersion) {
      this.#status(res, 409, 'Conflict', `Operation cannot be fulfilled on ${parsed.resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
      return;
    }
    let object: FakeObject;
    if (parsed.subresource === 'status') {
      const status = method === 'PATCH' ? (mergePatch({ status: existing.status }, body) as { status?: unknown }).status : body.status;
      object = { ...existing, status };
      const invalid = gatewayStatusProblem(parsed.resourcePath, status);
      if (invalid !== undefined) {
        this.#status(res, 422, 'Invalid', `${parsed.resource} "${name}" is invalid: ${invalid}`);
        return;
      }
    } else {
      object = mergePatch(existing, { ...body, metadata: { ...(body.metadata as object), name, resourceVersion: null } }) as FakeObject;
    }
    const stored = this.#write(parsed.resourcePath, key, object, 'MODIFIED');
    if (parsed.subresource === 'status') this.statusWrites.push({ method, resourcePath: parsed.resourcePath, key, status: stored.status, at: Date.now() });
    this.#json(res, 200, stored);
  }

  #list(res: ServerResponse, parsed: Parsed, query: Readonly<Record<string, string>>): void {
    const all = [...this.#store(parsed.resourcePath).entries()]
      .filter(([, object]) => matches(object, parsed.namespace, query))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, object]) => object);
    const offset = query.continue === undefined ? 0 : Number(query.continue);
    const limit = query.limit === undefined ? all.length : Math.max(1, Number(query.limit));
    const page = all.slice(offset, offset + limit);
    const next = offset + limit < all.length ? String(offset + limit) : undefined;
    // LIST items carry no kind or apiVersion: only the list itself does.
    const items = page.map((object): FakeObject => ({ ...object, kind: undefined, apiVersion: undefined }));
    const kind = this.#kinds.get(parsed.resourcePath) ?? 'Unknown';
    this.#json(res, 200, { kind: `${kind}List`, apiVersion: parsed.apiVersion, metadata: { resourceVersion: String(this.#rv), ...(next === undefined ? {} : { continue: next }) }, items });
  }

  #watch(res: ServerResponse, parsed: Parsed, query: Readonly<Record<string, string>>): void {
    const from = query.resourceVersion;
    const fromNow = from === undefined || from === '' || from === '0';
    this.statuses.push(200);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    const stream: WatchStream = { resourcePath: parsed.resourcePath, namespace: parsed.namespace, query, res };
    if (!fromNow && Number(from) < this.#compactedBelow) {
      const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${from} (${this.#compactedBelow})`, reason: 'Expired', code: 410 };
      res.end(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
      return;
    }
    // From "now": the current objects as ADDED first; from a resourceVersion: what happened since.
    const backlog = fromNow
      ? [...this.#store(parsed.resourcePath).values()].map((object): HistoryEvent => ({ rv: 0, resourcePath: parsed.resourcePath, type: 'ADDED', object }))
      : this.#history.filter((event) => event.rv > Number(from) && event.resourcePath === parsed.resourcePath);
    for (const event of backlog) this.#send(stream, event);
    if (this.endWatchesAtOnce) {
      res.end();
      return;
    }
    this.#watches.add(stream);
    res.on('close', () => this.#watches.delete(stream));
  }

  #json(res: ServerResponse, status: number, body: unknown): void {
    this.statuses.push(status);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  #status(res: ServerResponse, code: number, reason: string, message: string): void {
    this.#json(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  }
}


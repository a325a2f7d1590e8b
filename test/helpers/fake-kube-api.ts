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

export type FakeObject = { apiVersion?: string; kind?: string; metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; [key: string]: unknown }; [key: string]: unknown };

export interface FakeRequestRecord {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly watch: boolean;
}

/** Resources that exist once per cluster: a namespaced path for them is a 404, as on a real server. */
const CLUSTER_SCOPED = new Set(['ingressclasses', 'namespaces', 'nodes', 'persistentvolumes', 'storageclasses', 'clusterroles', 'clusterrolebindings']);
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

interface Parsed {
  /** `/api/v1/services`: the collection without namespace; the key of the store. */
  readonly resourcePath: string;
  readonly resource: string;
  readonly apiVersion: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
}

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

  #write(resourcePath: string, key: string, object: FakeObject, type: 'ADDED' | 'MODIFIED'): FakeObject {
    const rv = ++this.#rv;
    const stored: FakeObject = structuredClone({ ...object, metadata: { ...object.metadata, resourceVersion: String(rv) } });
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
    if (record.method === 'POST' || record.method === 'PUT') {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.#save(res, parsed, record.method, Buffer.concat(chunks).toString('utf8')));
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

/** `/api/v1[/namespaces/ns]/resource[/name]` or `/apis/group/version[/namespaces/ns]/resource[/name]`. */
function parsePath(path: string): Parsed | undefined {
  const segments = path.split('/').filter((s) => s !== '').map(decodeURIComponent);
  let prefix: string[];
  if (segments[0] === 'api' && segments.length >= 3) prefix = segments.slice(0, 2);
  else if (segments[0] === 'apis' && segments.length >= 4) prefix = segments.slice(0, 3);
  else return undefined;
  let rest = segments.slice(prefix.length);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, ...extra] = rest;
  if (resource === undefined || extra.length > 0) return undefined;
  return { resourcePath: `/${prefix.join('/')}/${resource}`, resource, apiVersion: prefix.slice(1).join('/'), namespace, name };
}

function keyOf(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}

/** Namespace, then `k=v`, `k==v`, `k!=v`, `k`, `!k` label terms and `path=v`/`path!=v` field terms. */
function matches(object: FakeObject, namespace: string | undefined, query: Readonly<Record<string, string>>): boolean {
  if (namespace !== undefined && object.metadata.namespace !== namespace) return false;
  const labels = object.metadata.labels ?? {};
  for (const term of splitTerms(query.labelSelector)) {
    const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (m !== null) {
      const [, key = '', op, value] = m;
      if ((op === '!=') === (labels[key] === value)) return false;
    } else if (term.startsWith('!')) {
      if (term.slice(1) in labels) return false;
    } else if (!(term in labels)) return false;
  }
  for (const term of splitTerms(query.fieldSelector)) {
    const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (m === null) continue;
    const [, path = '', op, value] = m;
    const actual = path.split('.').reduce<unknown>((at, part) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined), object);
    if ((op === '!=') === (String(actual ?? '') === value)) return false;
  }
  return true;
}

function splitTerms(selector: string | undefined): string[] {
  return (selector ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
}

/** What a real API server rejects in a Lease body: times that are not MicroTime, a non-integer duration. */
function leaseProblem(body: FakeObject): string | undefined {
  const spec = (body.spec ?? {}) as Record<string, unknown>;
  for (const field of ['acquireTime', 'renewTime']) {
    const value = spec[field];
    if (value !== undefined && value !== null && (typeof value !== 'string' || !MICRO_TIME.test(value))) {
      return `spec.${field}: parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05.000000Z07:00": cannot parse`;
    }
  }
  const duration = spec.leaseDurationSeconds;
  if (duration !== undefined && duration !== null && !Number.isInteger(duration)) return `spec.leaseDurationSeconds: ${JSON.stringify(duration)} is not an integer`;
  if (spec.holderIdentity !== undefined && spec.holderIdentity !== null && typeof spec.holderIdentity !== 'string') return 'spec.holderIdentity must be a string';
  return undefined;
}

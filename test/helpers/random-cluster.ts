// A seeded random cluster for the incremental render property tests: each step applies a few
// random changes (good objects and ones the guard or the checks refuse) to its stores, and now and
// then replaces store instances.
import { IndexedStore } from '../../src/worker/store/indexed-store.js';
import type { KubeObject, TemplateSetSource } from '../../src/worker/protocol.js';
import { backendRef, endpointSlice, exampleTlsData, indexedStores, ingress, rule, service, tlsSecret, type PathSpec } from './cluster.js';
import { between, chance, pick, type Random } from './random.js';

export const NAMESPACES = ['alpha', 'beta', 'gamma'] as const;
/** Twelve apps, four per namespace; Ingresses sometimes name a `ghost` Service that never exists. */
export const APPS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  NAMESPACES.map((ns, n) => [ns, [0, 1, 2, 3].map((i) => `app${n * 4 + i}`)]),
);
const INGRESS_NAMES = ['web', 'api', 'shop', 'admin', 'edge'];
/** Hosts shared by every namespace's Ingresses, so routes conflict; undefined is a rule without host. */
const HOSTS = ['shop.example.com', 'api.example.com', 'www.example.com', '*.wild.example.com', 'a.wild.example.com', undefined];
const BAD_HOSTS = ['Shop.example.com', 'bad host.example.com'];
const PATHS = ['/', '/api', '/api/', '/x', '/api/v1', undefined];
const BAD_PATHS = ['/a"b', '/with space'];
const PATH_TYPES = ['Exact', 'Prefix', 'ImplementationSpecific'];
const INGRESS_PORTS: readonly (number | string)[] = [80, 80, 8080, 9090, 'http', 'web', 'admin'];
const SECRET_NAMES = ['tls-a', 'tls-b', 'tls-c'];
/** Creation times: a few shared ones (ties fall back to namespace/name), and none at all. */
const CREATED = ['2024-01-01T00:00:00Z', '2024-06-01T00:00:00Z', '2025-01-01T00:00:00Z', undefined];
/** IngressClasses: ours (as the default class or not), another controller's, and the configured name. */
const CLASS_NAMES = ['house', 'haproxy', 'other'];
const CONTROLLERS = ['haproxy.org/ingress-controller', 'haproxy.org/ingress-controller', 'example.com/elsewhere'];
const SERVICE_PORTS: readonly { name?: string; port: number }[][] = [
  [{ name: 'http', port: 80 }],
  [{ name: 'http', port: 80 }],
  [{ name: 'web', port: 80 }],
  [
    { name: 'http', port: 8080 },
    { name: 'admin', port: 9090 },
  ],
  [{ port: 80 }],
  [
    { name: 'http', port: 80 },
    { name: 'web', port: 8080 },
  ],
];
const SLICE_PORTS: readonly { name?: string; port: number }[] = [
  { name: 'http', port: 8080 },
  { name: 'http', port: 8080 },
  { name: 'web', port: 8081 },
  { name: 'admin', port: 9000 },
  { port: 8080 },
];

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/**
 * Annotations of random Ingresses, each with a few values: mostly good ones, some bad (the guard
 * rejects the Ingress), plus unknown and refused names (warnings). `users` is an auth Secret.
 */
const INGRESS_ANNOTATIONS: readonly (readonly [string, readonly string[]])[] = [
  ['haproxy.org/ssl-redirect', ['false', 'true']],
  ['haproxy.org/ssl-redirect-code', ['301', '308', '399']],
  ['haproxy.org/allow-list', ['10.0.0.0/8, 192.168.1.1', '::1, 127.0.0.1', '10.0.0.0/33']],
  ['haproxy.com/deny-list', ['10.1.0.0/16', 'fd00::/8']],
  ['haproxy.org/auth-type', ['basic-auth', 'basic-auth', 'digest']],
  ['haproxy.org/auth-secret', ['users', 'users', 'alpha/users', 'missing']],
  ['haproxy.org/auth-realm', ['Admins']],
  ['haproxy.org/request-redirect', ['new.example.com']],
  ['haproxy.org/path-rewrite', ['/', '/api/(.*) /\\1', '(a+)+ /x']],
  ['haproxy.org/set-host', ['internal.example']],
  ['haproxy.org/request-set-header', ['X-Tenant t1', 'X-A "1" unless TRUE']],
  ['haproxy.org/response-set-header', ['Cache-Control "no-store"']],
  ['haproxy.org/load-balance', ['leastconn', 'source', 'fastest']],
  ['haproxy.org/cookie-persistence', ['SRV']],
  ['haproxy.org/timeout-server', ['5s', '2m', 'soon']],
  ['haproxy.org/rate-limit-requests', ['10']],
  ['haproxy.org/rate-limit-status-code', ['429']],
  ['haproxy.org/cors-enable', ['true', 'false']],
  ['haproxy.org/cors-allow-origin', ['https://app.example.com', '*']],
  ['haproxy.org/check', ['false', 'true']],
  ['haproxy.org/check-http', ['GET /healthz']],
  ['haproxy.org/backend-config-snippet', ['http-request deny']],
  ['haproxy.org/unknown-thing', ['x']],
];
/** Annotations of random Services: Service annotations (good and bad) and an Ingress-only one. */
const SERVICE_ANNOTATIONS: readonly (readonly [string, readonly string[]])[] = [
  ['haproxy.org/check-interval', ['3s', 'often']],
  ['haproxy.org/load-balance', ['leastconn']],
  ['haproxy.org/pod-maxconn', ['50']],
  ['haproxy.org/timeout-server', ['1s']],
];
/** `openssl passwd -1 -salt salt secret`. */
const AUTH_HASH = '$1$salt$ez2vlPGdaLYkJam5pWs/Y1';

/** 1-3 random annotations of `pool`, or none. */
function randomAnnotations(random: Random, pool: readonly (readonly [string, readonly string[]])[], p: number): Record<string, string> | undefined {
  if (!chance(random, p)) return undefined;
  const annotations: Record<string, string> = {};
  for (let n = between(random, 1, 3); n > 0; n--) {
    const [key, values] = pick(random, pool);
    annotations[key] = pick(random, values);
  }
  return annotations;
}

/** A random change of the cluster, applied to whatever stores are current. */
export class RandomCluster {
  stores: Map<string, IndexedStore>;
  readonly #tls = exampleTlsData();

  constructor(
    readonly set: TemplateSetSource,
    readonly random: Random,
  ) {
    this.stores = indexedStores(set, []);
  }

  readonly lookup = (name: string): IndexedStore | undefined => this.stores.get(name);

  #store(name: string): IndexedStore {
    return this.stores.get(name) as IndexedStore;
  }

  /** Applies 1-4 random changes and sometimes replaces store instances; returns what it did. */
  step(): string[] {
    const done: string[] = [];
    for (let n = between(this.random, 1, 4); n > 0; n--) done.push(this.#change());
    const roll = this.random();
    if (roll < 0.04) done.push(this.#swap());
    else if (roll < 0.06) done.push(this.#refill());
    return done;
  }

  #change(): string {
    const r = this.random;
    const roll = r();
    const ns = pick(r, NAMESPACES);
    if (roll < 0.3) return this.#upsert(this.#ingress(ns));
    if (roll < 0.4) return this.#delete('ingresses');
    if (roll < 0.5) return this.#upsert(this.#service(ns));
    if (roll < 0.52) return this.#upsert(this.#externalName(ns));
    if (roll < 0.57) return this.#delete('services');
    if (roll < 0.8) return this.#upsert(this.#slice(ns));
    if (roll < 0.88) return this.#delete('endpointslices');
    if (roll < 0.94) return this.#upsert(this.#secret(ns));
    if (roll < 0.96) return this.#delete('secrets');
    if (roll < 0.98) return this.#upsert(this.#ingressClass());
    return this.#delete('ingressclasses');
  }

  #upsert(object: KubeObject): string {
    const store = { Ingress: 'ingresses', Service: 'services', EndpointSlice: 'endpointslices', Secret: 'secrets', IngressClass: 'ingressclasses' }[object.kind as string] as string;
    this.#store(store).upsert(object);
    return `upsert ${object.kind} ${object.metadata.namespace}/${object.metadata.name} ${JSON.stringify(object.spec ?? object.endpoints ?? object.data ?? {}).slice(0, 240)}`;
  }

  #delete(store: string): string {
    const objects = this.#store(store).list();
    if (objects.length === 0) return `delete from empty ${store}`;
    const object = pick(this.random, objects);
    const key = object.metadata.namespace === undefined ? object.metadata.name : `${object.metadata.namespace}/${object.metadata.name}`;
    this.#store(store).delete(key);
    return `delete ${store} ${key}`;
  }

  #ingress(ns: string): KubeObject {
    const r = this.random;
    const spec: Record<string, unknown> = {};
    const metadata: Partial<KubeObject['metadata']> = {};
    const cls = r();
    if (cls < 0.12) spec.ingressClassName = 'haproxy';
    else if (cls < 0.2) spec.ingressClassName = 'other';
    else if (cls < 0.25) spec.ingressClassName = 'house';
    else if (cls < 0.3) metadata.annotations = { 'kubernetes.io/ingress.class': pick(r, ['haproxy', 'other', 'house']) };
    const created = pick(r, CREATED);
    if (created !== undefined) metadata.creationTimestamp = created;
    const name = pick(r, INGRESS_NAMES);
    const serviceName = (): string => (chance(r, 0.08) ? 'ghost' : chance(r, 0.05) ? 'outside' : pick(r, APPS[ns] as readonly string[]));
    if (chance(r, 0.15)) spec.defaultBackend = backendRef(serviceName(), pick(r, INGRESS_PORTS));
    const rules: Record<string, unknown>[] = [];
    for (let i = between(r, 0, 3); i > 0; i--) {
      // Mostly a host of this Ingress alone, so that many steps have no contested route key.
      const roll = r();
      const host = roll < 0.03 ? pick(r, BAD_HOSTS) : roll < 0.7 ? `${name}-${i}.${ns}.example.com` : pick(r, HOSTS);
      const paths: PathSpec[] = [];
      for (let j = between(r, 1, 2); j > 0; j--) {
        paths.push({
          path: chance(r, 0.03) ? pick(r, BAD_PATHS) : pick(r, PATHS),
          pathType: pick(r, PATH_TYPES),
          service: serviceName(),
          port: pick(r, INGRESS_PORTS),
        });
      }
      rules.push(rule(host, ...paths));
    }
    if (rules.length > 0) spec.rules = rules;
    if (chance(r, 0.35)) {
      spec.tls = Array.from({ length: between(r, 1, 2) }, () => ({
        hosts: HOSTS.filter((h): h is string => h !== undefined && chance(r, 0.4)),
        secretName: chance(r, 0.2) ? 'tls-missing' : pick(r, SECRET_NAMES),
      }));
    }
    const annotations = randomAnnotations(r, INGRESS_ANNOTATIONS, 0.35);
    if (annotations !== undefined) metadata.annotations = { ...metadata.annotations, ...annotations };
    if (chance(r, 0.1)) {
      // Basic auth whole: the users of a Secret of this namespace (or one that is missing).
      metadata.annotations = { ...metadata.annotations, 'haproxy.org/auth-type': 'basic-auth', 'haproxy.org/auth-secret': pick(r, ['users', `${ns}/users`, 'missing']) };
    }
    return ingress(ns, name, spec, metadata);
  }

  /** A Service of one of the namespace's apps, sometimes with annotations. */
  #service(ns: string): KubeObject {
    const r = this.random;
    const svc = service(ns, pick(r, APPS[ns] as readonly string[]), pick(r, SERVICE_PORTS));
    const annotations = randomAnnotations(r, SERVICE_ANNOTATIONS, 0.25);
    return annotations === undefined ? svc : { ...svc, metadata: { ...svc.metadata, annotations } };
  }

  /** An ExternalName Service `outside`, sometimes with an external name the checks refuse. */
  #externalName(ns: string): KubeObject {
    const externalName = pick(this.random, ['api.partner.example', 'db.example.org', 'localhost', 'bad name']);
    return { apiVersion: 'v1', kind: 'Service', metadata: { name: 'outside', namespace: ns }, spec: { type: 'ExternalName', externalName, ports: [{ name: 'http', port: 80 }] } };
  }

  #ingressClass(): KubeObject {
    const r = this.random;
    const at = Math.floor(r() * CLASS_NAMES.length);
    const annotations = chance(r, 0.5) ? { 'ingressclass.kubernetes.io/is-default-class': pick(r, ['true', 'false']) } : undefined;
    return {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'IngressClass',
      metadata: { name: CLASS_NAMES[at] as string, ...(annotations === undefined ? {} : { annotations }) },
      spec: { controller: chance(r, 0.8) ? (CONTROLLERS[at] as string) : pick(r, CONTROLLERS) },
    };
  }

  #slice(ns: string): KubeObject {
    const r = this.random;
    const apps = APPS[ns] as readonly string[];
    const app = pick(r, apps);
    const n = NAMESPACES.indexOf(ns as (typeof NAMESPACES)[number]);
    const a = apps.indexOf(app);
    // A second slice for the same Service, and a slice that moves between Services.
    const name = chance(r, 0.12) ? 'roamer' : `${app}-${chance(r, 0.25) ? 'b' : 'a'}`;
    const count = chance(r, 0.3) ? between(r, 11, 25) : between(r, 0, 8);
    const endpoints = Array.from({ length: count }, () => {
      const address = chance(r, 0.01) ? 'not-an-ip' : chance(r, 0.05) ? `fd00::${n}:${a}:${between(r, 1, 9)}` : `10.${n}.${a}.${between(r, 1, 30)}`;
      const ready = r();
      return ready < 0.15 ? { address, ready: false } : ready < 0.25 ? { address, ready: true } : address;
    });
    return endpointSlice(ns, app, endpoints, pick(r, SLICE_PORTS), name);
  }

  #secret(ns: string): KubeObject {
    const r = this.random;
    const roll = r();
    if (roll < 0.2) {
      // The auth Secret of basic-auth Ingresses: good users, a plain-text password, or none.
      const users = pick(r, [{ alice: b64(AUTH_HASH) }, { alice: b64(AUTH_HASH), bob: b64('plain') }, {}]);
      return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: ns }, data: users };
    }
    const data: Record<string, string> =
      roll < 0.65
        ? this.#tls
        : roll < 0.85
          ? { 'tls.crt': this.#tls['tls.crt'] }
          : roll < 0.95
            ? { 'tls.crt': 'not base64!', 'tls.key': this.#tls['tls.key'] }
            : { 'tls.crt': b64('not a certificate'), 'tls.key': b64('not a key') };
    return tlsSecret(ns, pick(r, SECRET_NAMES), data);
  }

  /** Replaces every store, or one, with a new instance holding the same (or cloned) objects. */
  #swap(): string {
    const r = this.random;
    const clone = chance(r, 0.5);
    const only = chance(r, 0.5) ? pick(r, [...this.stores.keys()]) : undefined;
    const next = new Map(this.stores);
    for (const def of this.set.stores) {
      if (only !== undefined && def.name !== only) continue;
      const store = new IndexedStore(def.name, def.indexBy);
      for (const object of this.#store(def.name).list()) store.upsert(clone ? structuredClone(object) : object);
      next.set(def.name, store);
    }
    this.stores = next;
    return `swap ${only ?? 'every store'} for a new instance${clone ? ' with cloned objects' : ''}`;
  }

  /** Clears one store and puts the same objects back: a burst of journal entries for the builder. */
  #refill(): string {
    const name = pick(this.random, [...this.stores.keys()]);
    const store = this.#store(name);
    const objects = [...store.list()];
    store.clear();
    for (const object of objects) store.upsert(object);
    return `clear and refill ${name}`;
  }
}

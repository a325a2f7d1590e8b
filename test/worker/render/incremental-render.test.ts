// Incremental renders against cold ones. A TemplateEngine keeps, per compiled template set, a
// routing model builder and memo caches, so a render after a small store change reuses what did
// not change. The contract checked here: an incremental render gives exactly what a fresh engine
// gives for the same stores and baseline (config, every auxiliary file, checksum, warnings in
// order; or the same failure). A seeded property test drives random change sequences through
// both; focused tests pin down the cases it is most likely to meet.
import { describe, expect, it } from 'vitest';
import { generateSelfSigned } from '../../../src/main/output/default-certificate.js';
import { seededRandom } from '../../../src/main/sources/synthetic/synthetic-cluster.js';
import { GuardedReader } from '../../../src/worker/store/guarded-reader.js';
import { IndexedStore } from '../../../src/worker/store/indexed-store.js';
import {
  acceptsClass,
  buildRoutingModel,
  classPolicy,
  modelOptions,
  parseSlotFile,
  RoutingModelBuilder,
  SERVER_SLOTS_FILE,
  slotLine,
  type ClassPolicy,
  type RoutingModel,
} from '../../../src/worker/routing/ingress-model.js';
import { guardObject } from '../../../src/worker/store/object-guard.js';
import type { AuxiliaryFiles, KubeObject, RenderBaseline, RenderOutcome, StoreDefinition, TemplateSetSource } from '../../../src/worker/protocol.js';
import { renderAndValidate } from '../../../src/worker/render/renderer.js';
import { RouteIndex, routeTables, type RouteCandidate } from '../../../src/worker/routing/route-index.js';
import { TemplateEngine } from '../../../src/worker/templates/template-engine.js';
import {
  backendRef,
  defaultTemplateSet,
  endpointSlice,
  exampleTlsData,
  indexedStores,
  ingress,
  ROUTING_STORES,
  rule,
  service,
  tlsSecret,
  withValues,
  type PathSpec,
} from '../../helpers/cluster.js';

type Random = () => number;

/** The stores the routing model reads, IngressClasses included. */
const MODEL_STORES: readonly StoreDefinition[] = [
  ...ROUTING_STORES,
  { name: 'ingressclasses', apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', indexBy: ['metadata.name'], namespaced: false },
];
/** A self-signed certificate, as `render` would pass it in values.selfSignedCertificate. */
const SELF_SIGNED = await generateSelfSigned(Date.parse('2026-01-01T00:00:00Z'));
type Success = Extract<RenderOutcome, { ok: true }>;

// ---------------------------------------------------------------------------------------------
// Comparing outcomes

/** The first line where two texts differ, or undefined when they are equal. */
function firstLineDifference(label: string, incremental: string, cold: string): string | undefined {
  if (incremental === cold) return undefined;
  const a = incremental.split('\n');
  const b = cold.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return `${label} line ${i + 1}: incremental ${a[i] === undefined ? '(no line)' : JSON.stringify(a[i])}, cold ${b[i] === undefined ? '(no line)' : JSON.stringify(b[i])}`;
    }
  }
  return `${label}: texts differ`;
}

function filesDifference(incremental: AuxiliaryFiles, cold: AuxiliaryFiles): string | undefined {
  for (const kind of ['maps', 'files', 'certificates'] as const) {
    const names = [...new Set([...Object.keys(incremental[kind]), ...Object.keys(cold[kind])])].sort();
    for (const name of names) {
      const a = incremental[kind][name];
      const b = cold[kind][name];
      if (a === undefined || b === undefined) return `${kind}/${name}: only the ${a === undefined ? 'cold' : 'incremental'} render has it`;
      const difference = firstLineDifference(`${kind}/${name}`, a, b);
      if (difference !== undefined) return difference;
    }
  }
  return undefined;
}

function warningsDifference(incremental: readonly string[], cold: readonly string[]): string | undefined {
  return firstLineDifference('warnings', incremental.join('\n'), cold.join('\n'));
}

function summary(outcome: RenderOutcome): string {
  return outcome.ok ? 'ok' : `${outcome.phase} failure: ${outcome.message}`;
}

/** A readable description of the first difference between two outcomes, or undefined. */
function outcomeDifference(incremental: RenderOutcome, cold: RenderOutcome): string | undefined {
  if (incremental.ok !== cold.ok) return `incremental ${summary(incremental)}; cold ${summary(cold)}`;
  if (!incremental.ok && !cold.ok) {
    if (incremental.phase !== cold.phase) return `failure phase: incremental ${incremental.phase}, cold ${cold.phase}`;
    return (
      firstLineDifference('failure message', incremental.message, cold.message) ?? warningsDifference(incremental.warnings, cold.warnings)
    );
  }
  const a = incremental as Success;
  const b = cold as Success;
  return (
    firstLineDifference('haproxy.cfg', a.haproxyConfig, b.haproxyConfig) ??
    filesDifference(a.auxiliaryFiles, b.auxiliaryFiles) ??
    (a.checksum === b.checksum ? undefined : `checksum: incremental ${a.checksum}, cold ${b.checksum}`) ??
    warningsDifference(a.warnings, b.warnings) ??
    originsDifference(a, b)
  );
}

/** The origin index (objects, names, sections) of an incremental render against a cold one's. */
function originsDifference(a: Success, b: Success): string | undefined {
  const view = (s: Success): string => JSON.stringify({ objects: s.origins?.objects, names: { ...s.origins?.names }, sections: s.origins?.sections });
  const [ia, ib] = [view(a), view(b)];
  return ia === ib ? undefined : firstLineDifference('origins', ia.replaceAll('},', '},\n'), ib.replaceAll('},', '},\n'));
}

/** The outcome without its timings, for deep equality. */
function comparable(outcome: RenderOutcome): unknown {
  if (!outcome.ok) return { ok: false, phase: outcome.phase, message: outcome.message, warnings: outcome.warnings };
  return { ok: true, haproxyConfig: outcome.haproxyConfig, auxiliaryFiles: outcome.auxiliaryFiles, checksum: outcome.checksum, warnings: outcome.warnings };
}

function asBaseline(outcome: Success): RenderBaseline {
  return { haproxyConfig: outcome.haproxyConfig, auxiliaryFiles: outcome.auxiliaryFiles };
}

/** Whether the routing model builder accepts this Ingress: the guard passes it and its class is ours. */
function accepted(object: KubeObject, classes: ClassPolicy): boolean {
  return guardObject(object).ok && acceptsClass(object, classes);
}

function acceptedIngresses(stores: ReadonlyMap<string, IndexedStore>, set: TemplateSetSource): number {
  const classes = classPolicy(new GuardedReader((name) => stores.get(name), () => undefined), modelOptions(set.values));
  return (stores.get('ingresses')?.list() ?? []).filter((o) => accepted(o, classes)).length;
}

// ---------------------------------------------------------------------------------------------
// A random cluster

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const chance = (random: Random, p: number): boolean => random() < p;
const between = (random: Random, lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));

const NAMESPACES = ['alpha', 'beta', 'gamma'] as const;
/** Twelve apps, four per namespace; Ingresses sometimes name a `ghost` Service that never exists. */
const APPS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
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
class RandomCluster {
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

/** The baseline's slot file with 1-3 hand edits, as an operator (or a stale file) might leave it. */
function handEditedSlots(random: Random, baseline: RenderBaseline): RenderBaseline {
  const slots = [...parseSlotFile(baseline.auxiliaryFiles.files[SERVER_SLOTS_FILE])].map(([name, list]) => [name, [...list]] as [string, string[]]);
  const randomAddress = (): string => `10.${between(random, 0, 2)}.${between(random, 0, 3)}.${between(random, 1, 30)}:8080`;
  for (let n = between(random, 1, 3); n > 0; n--) {
    const roll = random();
    const at = Math.floor(random() * slots.length);
    const entry = slots[at];
    const slot = entry === undefined ? 0 : Math.floor(random() * entry[1].length);
    if (entry !== undefined && roll < 0.2) {
      entry[1][slot] = '';
    } else if (entry !== undefined && slots.length > 1 && roll < 0.4) {
      // Swap the addresses of two slots (of the same backend or not).
      const other = slots[Math.floor(random() * slots.length)] as [string, string[]];
      const otherSlot = Math.floor(random() * other[1].length);
      const mine = entry[1][slot] as string;
      entry[1][slot] = other[1][otherSlot] as string;
      other[1][otherSlot] = mine;
    } else if (entry !== undefined && roll < 0.55) {
      slots.splice(at, 1);
    } else if (entry !== undefined && roll < 0.7) {
      // More slots than the backend has (up to 25).
      while (entry[1].length < between(random, 11, 25)) entry[1].push('');
      entry[1][entry[1].length - 1] = randomAddress();
    } else if (roll < 0.8) {
      slots.push(['ing_alpha_gone_app0_80', ['', `10.0.0.${between(random, 1, 30)}:8080`, '']]);
    } else if (entry !== undefined && roll < 0.9) {
      entry[1][slot] = randomAddress();
    } else {
      slots.length = 0;
    }
  }
  const text = slots.map(([name, list]) => slotLine(name, list)).join('');
  return { ...baseline, auxiliaryFiles: { ...baseline.auxiliaryFiles, files: { ...baseline.auxiliaryFiles.files, [SERVER_SLOTS_FILE]: text } } };
}

/** Picks the baseline of the next render: mostly the last output, as the coordinator does. */
function chooseBaseline(random: Random, history: readonly RenderBaseline[]): { baseline: RenderBaseline | undefined; label: string } {
  const last = history[history.length - 1];
  const roll = random();
  if (roll < 0.62 || last === undefined) return { baseline: last, label: last === undefined ? 'none yet' : 'previous output' };
  if (roll < 0.76) {
    const back = between(random, 1, Math.min(8, history.length));
    return { baseline: history[history.length - back], label: `output from ${back} successful renders ago` };
  }
  if (roll < 0.88) return { baseline: undefined, label: 'no baseline' };
  return { baseline: handEditedSlots(random, last), label: 'previous output with a hand-edited server-slots.txt' };
}

interface PropertyRun {
  readonly seed: number;
  readonly steps: number;
  readonly values?: Record<string, unknown>;
}

/** Renders every step incrementally and cold and fails on the first difference. */
async function checkRenders({ seed, steps, values }: PropertyRun): Promise<void> {
  const base = await defaultTemplateSet();
  const set = values === undefined ? base : withValues(base, values);
  const random = seededRandom(seed);
  const cluster = new RandomCluster(set, random);
  const engine = new TemplateEngine();
  const history: RenderBaseline[] = [];
  const other = withValues(set, { serverSlots: 3 });
  for (let step = 1; step <= steps; step++) {
    const changes = cluster.step();
    // The engine also proves sets (dryRun) and renders other sets between renders of this one.
    const interleave = random();
    if (interleave < 0.04) {
      engine.dryRun(set);
      changes.push('dryRun of the set on the incremental engine');
    } else if (interleave < 0.08) {
      renderAndValidate(engine, { set: other, lookup: cluster.lookup, storeVersion: step, baseline: undefined });
      changes.push('render of another set on the incremental engine');
    }
    const { baseline, label } = chooseBaseline(random, history);
    const request = { set, lookup: cluster.lookup, storeVersion: step, baseline };
    const incremental = renderAndValidate(engine, request);
    const cold = renderAndValidate(new TemplateEngine(), request);
    const difference = outcomeDifference(incremental, cold);
    const where = `seed ${seed}, step ${step}`;
    const context = `\n  baseline: ${label}\n  changes:\n    ${changes.join('\n    ')}`;
    expect(difference, `${where}: ${difference}${context}`).toBeUndefined();
    expect(comparable(incremental), where).toEqual(comparable(cold));
    expect(engine.compile(set).builder.cachedIngresses, `${where}: cached Ingresses`).toBe(acceptedIngresses(cluster.stores, set));
    if (incremental.ok) history.push(asBaseline(incremental));
    if (history.length > 12) history.shift();
  }
}

/** Builds the routing model with one long-lived builder and cold, and compares them at every step. */
function checkModels(seed: number, steps: number, values: Record<string, unknown> = {}): void {
  const options = modelOptions(values);
  const builder = new RoutingModelBuilder(options);
  const set: TemplateSetSource = {
    hash: 'model-only',
    stores: MODEL_STORES,
    snippets: {},
    maps: {},
    files: {},
    sslCertificates: {},
    values,
    haproxyConfig: '',
  };
  const random = seededRandom(seed);
  const cluster = new RandomCluster(set, random);
  const history: RenderBaseline[] = [];
  for (let step = 1; step <= steps; step++) {
    const changes = cluster.step();
    const { baseline, label } = chooseBaseline(random, history);
    const incrementalWarnings: string[] = [];
    const coldWarnings: string[] = [];
    const warnInto =
      (list: string[]) =>
      (message: string): void => {
        list.push(message);
      };
    const model = builder.build(new GuardedReader(cluster.lookup, warnInto(incrementalWarnings)), baseline, warnInto(incrementalWarnings));
    const cold = buildRoutingModel(new GuardedReader(cluster.lookup, warnInto(coldWarnings)), options, baseline, warnInto(coldWarnings));
    const where = `seed ${seed}, step ${step} (baseline: ${label})\n  changes:\n    ${changes.join('\n    ')}\n`;
    expect(firstLineDifference('server-slots.txt', model.serverSlotsFile, cold.serverSlotsFile), where).toBeUndefined();
    expect(model, where).toEqual(cold);
    expect(incrementalWarnings, where).toEqual(coldWarnings);
    expect(builder.cachedIngresses, where).toBe(acceptedIngresses(cluster.stores, set));
    history.push({ auxiliaryFiles: { maps: {}, files: { [SERVER_SLOTS_FILE]: model.serverSlotsFile }, certificates: {} } });
    if (history.length > 12) history.shift();
  }
}

describe('incremental renders match cold renders over random change sequences', () => {
  it.each([
    { seed: 1, steps: 80 },
    { seed: 2, steps: 80 },
    // ExternalName Services routed (DNS servers, the resolvers section), and the loop guard.
    { seed: 3, steps: 80, values: { externalNameServices: true } },
    { seed: 4, steps: 80, values: { serverSlots: 4 } },
    { seed: 5, steps: 80, values: { watchIngressWithoutClass: false } },
    { seed: 6, steps: 80, values: { externalNameServices: true, loopGuardToken: 'f00d' } },
    { seed: 7, steps: 60, values: { routeOwnership: 'name', tlsHostOwnership: 'oldest' } },
    { seed: 8, steps: 60, values: { defaultCertificate: 'alpha/tls-a', selfSignedCertificate: SELF_SIGNED, watchIngressWithoutClass: false } },
    // Few descriptors: the server-slot budget (fdHardLimit / 2) starves Ingresses as they come and go.
    { seed: 9, steps: 80, values: { fdHardLimit: 80 } },
  ])('renders seed $seed the same as a fresh engine at every step', async (run: PropertyRun) => {
    await checkRenders(run);
  });

  it.each([11, 12, 13, 14])('builds the same routing model as a cold build at every step (seed %i)', (seed) => {
    // Even seeds route ExternalName Services.
    checkModels(seed, 150, seed % 2 === 0 ? { externalNameServices: true } : {});
  });

  it.each([15, 16])('builds the same routing model as a cold build under the other ownership policies (seed %i)', (seed) => {
    checkModels(seed, 100, { routeOwnership: 'name', tlsHostOwnership: 'oldest', defaultCertificate: 'beta/tls-b', selfSignedCertificate: SELF_SIGNED });
  });

  it.each([17, 18])('builds the same routing model as a cold build while the server-slot budget starves Ingresses (seed %i)', (seed) => {
    checkModels(seed, 150, { fdHardLimit: 80 });
  });
});

// ---------------------------------------------------------------------------------------------
// Focused cases

const NS = 'shop';

function smallCluster(): KubeObject[] {
  return [
    ingress(NS, 'front', { rules: [rule('shop.example.com', { path: '/', service: 'web' })] }),
    ingress(NS, 'api', { rules: [rule('api.example.com', { path: '/v1', service: 'api' }, { path: '/v1/health', pathType: 'Exact', service: 'api' })] }),
    ingress(NS, 'admin', {
      rules: [rule('admin.example.com', { path: '/', service: 'admin', port: 'http' })],
      tls: [{ hosts: ['admin.example.com'], secretName: 'admin-tls' }],
    }),
    service(NS, 'web'),
    service(NS, 'api'),
    service(NS, 'admin'),
    endpointSlice(NS, 'web', ['10.0.0.1', '10.0.0.2']),
    endpointSlice(NS, 'api', ['10.0.1.1']),
    endpointSlice(NS, 'admin', ['10.0.2.1', { address: '10.0.2.2', ready: false }]),
    tlsSecret(NS, 'admin-tls'),
  ];
}

/** One long-lived engine over stores that tests change; every render is checked against a cold one. */
class Harness {
  stores: Map<string, IndexedStore>;
  readonly engine = new TemplateEngine();
  baseline: RenderBaseline | undefined;
  #version = 0;

  constructor(
    readonly set: TemplateSetSource,
    objects: readonly KubeObject[],
  ) {
    this.stores = indexedStores(set, objects);
  }

  store(name: string): IndexedStore {
    return this.stores.get(name) as IndexedStore;
  }

  get cachedIngresses(): number {
    return this.engine.compile(this.set).builder.cachedIngresses;
  }

  /** Renders incrementally and cold, expects them equal and successful, and keeps the output as the baseline. */
  render(): Success {
    const request = { set: this.set, lookup: (name: string) => this.stores.get(name), storeVersion: ++this.#version, baseline: this.baseline };
    const incremental = renderAndValidate(this.engine, request);
    const cold = renderAndValidate(new TemplateEngine(), request);
    expect(outcomeDifference(incremental, cold)).toBeUndefined();
    expect(comparable(incremental)).toEqual(comparable(cold));
    if (!incremental.ok) throw new Error(`expected the render to succeed: ${summary(incremental)}`);
    this.baseline = asBaseline(incremental);
    return incremental;
  }
}

async function harness(objects: readonly KubeObject[] = smallCluster()): Promise<Harness> {
  return new Harness(await defaultTemplateSet(), objects);
}

/** The lines of `after` that are not at the same place in `before`, by a plain line diff. */
function changedLines(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return [...a.slice(start, endA).map((l) => `- ${l}`), ...b.slice(start, endB).map((l) => `+ ${l}`)];
}

function backendSection(config: string, backend: string): string | undefined {
  return config.split(/\n(?=backend |frontend )/).find((s) => s.startsWith(`backend ${backend}\n`));
}

function modelSource(stores: ReadonlyMap<string, IndexedStore>, warnings: string[] = []): GuardedReader {
  return new GuardedReader(
    (name) => stores.get(name),
    (message) => {
      warnings.push(message);
    },
  );
}

describe('incremental render after one EndpointSlice change', () => {
  it('re-renders only the backend of the changed EndpointSlice and matches a cold render', async () => {
    const h = await harness();
    const first = h.render();
    h.store('endpointslices').upsert(endpointSlice(NS, 'api', ['10.0.1.1', '10.0.1.2']));
    const second = h.render();

    const diff = changedLines(first.haproxyConfig, second.haproxyConfig);
    expect(diff).toEqual(['-   server srv2 127.0.0.1:1 disabled', '+   server srv2 10.0.1.2:8080']);
    expect(backendSection(second.haproxyConfig, 'ing_shop_api_api_80')).toContain('  server srv2 10.0.1.2:8080\n');
    expect(changedLines(first.auxiliaryFiles.files[SERVER_SLOTS_FILE] as string, second.auxiliaryFiles.files[SERVER_SLOTS_FILE] as string)).toEqual([
      '- ing_shop_api_api_80 10.0.1.1:8080 - - - - - - - - -',
      '+ ing_shop_api_api_80 10.0.1.1:8080 10.0.1.2:8080 - - - - - - - -',
    ]);
    expect(second.auxiliaryFiles.maps).toEqual(first.auxiliaryFiles.maps);
    expect(h.cachedIngresses).toBe(3);
  });

  it('keeps the identity of every other backend, route table and certificate list, so memo blocks reuse their text', async () => {
    const stores = indexedStores(await defaultTemplateSet(), smallCluster());
    const builder = new RoutingModelBuilder(modelOptions({}));
    const first = builder.build(modelSource(stores), undefined, () => undefined);
    stores.get('endpointslices')?.upsert(endpointSlice(NS, 'api', ['10.0.1.1', '10.0.1.2']));
    const second = builder.build(modelSource(stores), { auxiliaryFiles: { maps: {}, files: { [SERVER_SLOTS_FILE]: first.serverSlotsFile }, certificates: {} } }, () => undefined);

    const byName = (model: RoutingModel, name: string): unknown => model.backends.find((b) => b.name === name);
    expect(byName(second, 'ing_shop_api_api_80')).not.toBe(byName(first, 'ing_shop_api_api_80'));
    expect(byName(second, 'ing_shop_front_web_80')).toBe(byName(first, 'ing_shop_front_web_80'));
    expect(byName(second, 'ing_shop_admin_admin_http')).toBe(byName(first, 'ing_shop_admin_admin_http'));
    for (const table of ['hostExact', 'hostPrefix', 'hostRegex', 'pathExact', 'pathPrefix', 'certificates'] as const) {
      expect(second[table], table).toBe(first[table]);
    }
    expect(builder.cachedIngresses).toBe(3);
  });

  it('re-renders the backend of a Service whose EndpointSlice moves to another Service', async () => {
    const h = await harness();
    h.render();
    h.store('endpointslices').upsert(endpointSlice(NS, 'web', ['10.0.9.1'], { name: 'http', port: 8080 }, 'api-slice'));
    const output = h.render();
    expect(backendSection(output.haproxyConfig, 'ing_shop_api_api_80')).not.toContain('10.0.1.1');
    expect(backendSection(output.haproxyConfig, 'ing_shop_front_web_80')).toContain('10.0.9.1:8080');
  });
});

describe('incremental render of route conflicts', () => {
  it('warns about a route claimed by two Ingresses exactly as a cold render does, and returns to identical output once it is gone', async () => {
    const h = await harness();
    const clean = h.render();
    const copy = ingress(NS, 'zz-copy', { rules: [rule('shop.example.com', { path: '/', service: 'api' })] });
    h.store('ingresses').upsert(copy);
    const conflicted = h.render();
    expect(conflicted.warnings).toContain('Ingress shop/zz-copy: route shop.example.com/ is already served by Ingress shop/front; ignored');
    expect(conflicted.auxiliaryFiles.maps['host-prefix.map']).toContain('shop.example.com/ ing_shop_front_web_80\n');

    h.store('ingresses').upsert(ingress(NS, 'zz-copy', { rules: [rule('copy.example.com', { path: '/', service: 'api' })] }));
    const resolved = h.render();
    expect(resolved.warnings.filter((w) => w.includes('already served'))).toEqual([]);
    expect(resolved.auxiliaryFiles.maps['host-prefix.map']).toContain('copy.example.com/ ing_shop_zz-copy_api_80\n');

    h.store('ingresses').delete('shop/zz-copy');
    const back = h.render();
    expect(back.haproxyConfig).toBe(clean.haproxyConfig);
    expect(back.auxiliaryFiles.maps).toEqual(clean.auxiliaryFiles.maps);
  });

  it('keeps the first claimant when the earlier Ingress takes over a key from a later one', async () => {
    const h = await harness();
    h.render();
    // `api` sorts before `front`: claiming front's key makes front the ignored one.
    h.store('ingresses').upsert(ingress(NS, 'api', { rules: [rule('shop.example.com', { path: '/', service: 'api' })] }));
    const output = h.render();
    expect(output.warnings).toContain('Ingress shop/front: route shop.example.com/ is already served by Ingress shop/api; ignored');
    expect(output.auxiliaryFiles.maps['host-prefix.map']).toContain('shop.example.com/ ing_shop_api_api_80\n');
  });

  it('leaves no contested keys in the route index once a conflicting route is removed', () => {
    const a: RouteCandidate = { host: 'h.example.com', path: '/x', exact: false, backend: 'be_a', owner: 'Ingress ns/a', namespace: 'ns', created: 0 };
    const b: RouteCandidate = { host: 'h.example.com', path: '/x', exact: false, backend: 'be_b', owner: 'Ingress ns/b', namespace: 'ns', created: 0 };
    const index = new RouteIndex();
    index.add([a]);
    const before = index.tables(undefined, () => [a], () => undefined);
    index.add([b]);
    const warnings: string[] = [];
    const contested = index.tables(before, () => [a, b], (m) => warnings.push(m));
    expect(index.contestedKeys).toBe(2);
    expect(warnings).toEqual(['Ingress ns/b: route h.example.com/x is already served by Ingress ns/a; ignored']);
    expect(contested).toEqual(routeTables([a, b], () => undefined));
    index.remove([b]);
    expect(index.contestedKeys).toBe(0);
    expect(index.tables(contested, () => [a], () => undefined)).toEqual(before);
  });
});

describe('incremental render of Ingress class changes', () => {
  it('removes the backends and routes of an Ingress switched to another class, and brings them back when switched back', async () => {
    const h = await harness();
    const first = h.render();
    const api = h.store('ingresses').get('shop/api') as KubeObject;
    h.store('ingresses').upsert({ ...api, spec: { ...(api.spec as object), ingressClassName: 'other' } });
    const other = h.render();
    expect(other.haproxyConfig).not.toContain('backend ing_shop_api_api_80');
    expect(other.auxiliaryFiles.files[SERVER_SLOTS_FILE]).not.toContain('ing_shop_api_api_80');
    expect(Object.values(other.auxiliaryFiles.maps).join('')).not.toContain('api.example.com');
    expect(h.cachedIngresses).toBe(2);

    h.store('ingresses').upsert({ ...api, spec: { ...(api.spec as object), ingressClassName: 'haproxy' } });
    const back = h.render();
    expect(back.haproxyConfig).toBe(first.haproxyConfig);
    expect(h.cachedIngresses).toBe(3);
  });
});

describe('incremental render of deleted and re-added objects', () => {
  it('renders the same output after an Ingress is deleted and the same object is added back', async () => {
    const h = await harness();
    const first = h.render();
    const api = h.store('ingresses').get('shop/api') as KubeObject;
    h.store('ingresses').delete('shop/api');
    const without = h.render();
    expect(without.haproxyConfig).not.toContain('backend ing_shop_api_api_80');
    expect(h.cachedIngresses).toBe(2);
    h.store('ingresses').upsert(api);
    const again = h.render();
    expect(again.haproxyConfig).toBe(first.haproxyConfig);
    expect(again.auxiliaryFiles).toEqual(first.auxiliaryFiles);
    expect(h.cachedIngresses).toBe(3);
  });

  it('renders the same output when objects are deleted and added back between two renders', async () => {
    const h = await harness();
    const first = h.render();
    for (const [store, key] of [
      ['ingresses', 'shop/admin'],
      ['services', 'shop/web'],
      ['endpointslices', 'shop/api-slice'],
      ['secrets', 'shop/admin-tls'],
    ] as const) {
      const object = h.store(store).get(key) as KubeObject;
      h.store(store).delete(key);
      h.store(store).upsert(object);
    }
    const second = h.render();
    expect(second.haproxyConfig).toBe(first.haproxyConfig);
    expect(second.auxiliaryFiles).toEqual(first.auxiliaryFiles);
  });

  it('warns about a deleted Service and its TLS Secret, and stops warning once they are back', async () => {
    const h = await harness();
    h.render();
    const web = h.store('services').get('shop/web') as KubeObject;
    const secret = h.store('secrets').get('shop/admin-tls') as KubeObject;
    h.store('services').delete('shop/web');
    h.store('secrets').delete('shop/admin-tls');
    const missing = h.render();
    expect(missing.warnings).toEqual([
      'Ingress shop/admin: TLS secret shop/admin-tls is missing or has no tls.crt/tls.key; its hosts are served without it',
      'Ingress shop/front: service shop/web not found; its backend has no servers',
    ]);
    h.store('services').upsert(web);
    h.store('secrets').upsert(secret);
    expect(h.render().warnings).toEqual([]);
  });
});

describe('incremental render after a store is replaced', () => {
  it('matches a cold render when one store is swapped for a new instance with other content', async () => {
    const h = await harness();
    h.render();
    const slices = new IndexedStore('endpointslices', ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name']);
    slices.upsert(endpointSlice(NS, 'web', ['10.0.0.7']));
    slices.upsert(endpointSlice(NS, 'api', ['10.0.1.1']));
    h.stores = new Map(h.stores).set('endpointslices', slices);
    const output = h.render();
    expect(backendSection(output.haproxyConfig, 'ing_shop_front_web_80')).toContain('server srv1 10.0.0.7:8080\n');
    expect(backendSection(output.haproxyConfig, 'ing_shop_admin_admin_http')).not.toContain('10.0.2.1');
  });

  it('matches a cold render when the new store instance has already counted past the old one', async () => {
    const h = await harness();
    h.render();
    // The old store is at generation 3; the new one reaches 11 with the changed web slice among
    // its first changes, so only a builder that notices the new instance sees the change.
    const slices = new IndexedStore('endpointslices', ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name']);
    slices.upsert(endpointSlice(NS, 'web', ['10.0.0.9']));
    const old = h.store('endpointslices');
    for (let i = 0; i < 5; i++) {
      slices.upsert(old.get('shop/api-slice') as KubeObject);
      slices.upsert(old.get('shop/admin-slice') as KubeObject);
    }
    expect(slices.generation).toBeGreaterThan(old.generation);
    h.stores = new Map(h.stores).set('endpointslices', slices);
    const output = h.render();
    expect(backendSection(output.haproxyConfig, 'ing_shop_front_web_80')).toContain('server srv1 10.0.0.9:8080\n');
  });

  it('matches a cold render after more changes than a store journal keeps', async () => {
    const h = await harness();
    h.render();
    const slices = h.store('endpointslices');
    slices.upsert(endpointSlice(NS, 'web', ['10.0.0.9']));
    // Enough churn on another key to push the web slice's change out of the bounded journal.
    const api = slices.get('shop/api-slice') as KubeObject;
    for (let i = 0; i < 10_000; i++) slices.upsert(api);
    expect(slices.changedSince(3)).toBeUndefined();
    const output = h.render();
    expect(backendSection(output.haproxyConfig, 'ing_shop_front_web_80')).toContain('server srv1 10.0.0.9:8080\n');
  });

  it('renders the same output when every store is replaced by new instances holding clones', async () => {
    const h = await harness();
    const first = h.render();
    h.stores = indexedStores(h.set, structuredClone(smallCluster()));
    const second = h.render();
    expect(second.haproxyConfig).toBe(first.haproxyConfig);
    expect(second.auxiliaryFiles).toEqual(first.auxiliaryFiles);
    expect(h.cachedIngresses).toBe(3);
  });
});

describe('incremental render of route tables after entries are recomputed', () => {
  // An Ingress whose entry is recomputed without a route change (its Service or EndpointSlice
  // changed) must still have its routes dropped when it is deleted or its routes change later.
  it('drops the routes of a deleted Ingress whose entry was recomputed after an EndpointSlice change', async () => {
    const h = await harness();
    h.render();
    h.store('endpointslices').upsert(endpointSlice(NS, 'api', ['10.0.1.1', '10.0.1.2']));
    h.render();
    h.store('ingresses').delete('shop/api');
    const output = h.render();
    expect(Object.values(output.auxiliaryFiles.maps).join('')).not.toContain('api.example.com');
  });

  it('moves the routes of an Ingress whose entry was recomputed after a Service change', async () => {
    const h = await harness();
    h.render();
    h.store('services').upsert(service(NS, 'api', [{ name: 'http', port: 80 }, { name: 'admin', port: 9090 }]));
    h.render();
    h.store('ingresses').upsert(ingress(NS, 'api', { rules: [rule('api2.example.com', { path: '/v2', service: 'api' })] }));
    const output = h.render();
    expect(Object.values(output.auxiliaryFiles.maps).join('')).not.toContain('api.example.com');
    expect(output.auxiliaryFiles.maps['host-exact.map']).toContain('api2.example.com/v2 ing_shop_api_api_80\n');
  });
});

describe('routing model builder cache bounds', () => {
  it('caches one entry per accepted Ingress after many Ingresses are created and deleted', async () => {
    const set = await defaultTemplateSet();
    const random = seededRandom(99);
    const stores = indexedStores(set, []);
    const engine = new TemplateEngine();
    const ingresses = stores.get('ingresses') as IndexedStore;
    const names = Array.from({ length: 40 }, (_, i) => `ing-${i}`);
    const render = (version: number): void => {
      renderAndValidate(engine, { set, lookup: (name) => stores.get(name), storeVersion: version, baseline: undefined });
    };
    for (let step = 1; step <= 150; step++) {
      for (let n = between(random, 1, 5); n > 0; n--) {
        const ns = pick(random, NAMESPACES);
        const name = pick(random, names);
        if (chance(random, 0.45)) {
          ingresses.delete(`${ns}/${name}`);
          continue;
        }
        const roll = random();
        const spec: Record<string, unknown> = { rules: [rule(`${name}.example.com`, { path: '/', service: pick(random, APPS[ns] as readonly string[]) })] };
        if (roll < 0.15) spec.ingressClassName = 'other';
        else if (roll < 0.2) spec.rules = [rule('Not Valid', { path: '/', service: 'x' })];
        ingresses.upsert(ingress(ns, name, spec));
      }
      render(step);
      expect(engine.compile(set).builder.cachedIngresses, `step ${step}`).toBe(acceptedIngresses(stores, set));
    }
    for (const object of [...ingresses.list()]) ingresses.delete(`${object.metadata.namespace}/${object.metadata.name}`);
    render(151);
    expect(engine.compile(set).builder.cachedIngresses).toBe(0);
  });
});

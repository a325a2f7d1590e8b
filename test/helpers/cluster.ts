// Builders for the Kubernetes objects the default template set reads, and a one-call render of a
// list of objects through the real render service (guarded reader, routing model, templates,
// validator) with the default template set.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTemplateSet } from '../../src/main/template-set/template-set.js';
import { EXAMPLES_DIR } from '../../src/main/core/paths.js';
import { IndexedStore } from '../../src/worker/store/indexed-store.js';
import { buildRoutingModel, modelOptions, type RoutingModel } from '../../src/worker/routing/ingress-model.js';
import { GuardedReader } from '../../src/worker/store/guarded-reader.js';
import type { KubeObject, RenderBaseline, RenderOutcome, StoreDefinition, TemplateSetSource } from '../../src/worker/protocol.js';
import { renderAndValidate } from '../../src/worker/render/renderer.js';
import { TemplateEngine } from '../../src/worker/templates/template-engine.js';
import { parse } from 'yaml';

export interface PathSpec {
  readonly path?: string;
  readonly pathType?: string;
  readonly service: string;
  /** A number selects the service port by number, a string by name. @default 80 */
  readonly port?: number | string;
}

export function backendRef(service: string, port: number | string = 80): { service: { name: string; port: { number: number } | { name: string } } } {
  return { service: { name: service, port: typeof port === 'number' ? { number: port } : { name: port } } };
}

export function rule(host: string | undefined, ...paths: PathSpec[]): Record<string, unknown> {
  return {
    ...(host === undefined ? {} : { host }),
    http: {
      paths: paths.map((p) => ({
        ...(p.path === undefined ? {} : { path: p.path }),
        pathType: p.pathType ?? 'Prefix',
        backend: backendRef(p.service, p.port),
      })),
    },
  };
}

export function ingress(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  metadata: Partial<KubeObject['metadata']> = {},
): KubeObject {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace, ...metadata }, spec };
}

export function service(namespace: string, name: string, ports: { name?: string; port: number }[] = [{ name: 'http', port: 80 }]): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ports } };
}

export interface EndpointSpec {
  readonly address: string;
  readonly ready?: boolean;
}

export function endpointSlice(
  namespace: string,
  serviceName: string,
  endpoints: (string | EndpointSpec)[],
  port: { name?: string; port: number } = { name: 'http', port: 8080 },
  sliceName = `${serviceName}-slice`,
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: sliceName, namespace, labels: { 'kubernetes.io/service-name': serviceName } },
    addressType: 'IPv4',
    ports: [port],
    endpoints: endpoints.map((e) => {
      const spec = typeof e === 'string' ? { address: e } : e;
      return { addresses: [spec.address], ...(spec.ready === undefined ? {} : { conditions: { ready: spec.ready } }) };
    }),
  };
}

/** The `tls.crt`/`tls.key` data of the example cluster's self-signed certificate (base64). */
export function exampleTlsData(): { 'tls.crt': string; 'tls.key': string } {
  const secret = parse(readFileSync(join(EXAMPLES_DIR, 'shop-tls.yaml'), 'utf8')) as { data: { 'tls.crt': string; 'tls.key': string } };
  return secret.data;
}

export function tlsSecret(namespace: string, name: string, data: Record<string, string> = exampleTlsData()): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'kubernetes.io/tls', data };
}

/** The store (of the given definitions) that watches this object's kind, as the manifest loader picks it. */
export function storeNameFor(object: KubeObject, defs: readonly StoreDefinition[]): string {
  const def = defs.find((d) => d.kind === object.kind && d.apiVersion === object.apiVersion);
  if (def === undefined) throw new Error(`no store watches ${String(object.apiVersion)} ${String(object.kind)}`);
  return def.name;
}

/** IndexedStores for every store of `set`, filled with `objects`. */
export function indexedStores(set: TemplateSetSource, objects: readonly KubeObject[]): Map<string, IndexedStore> {
  const stores = new Map(set.stores.map((def) => [def.name, new IndexedStore(def.name, def.indexBy)]));
  for (const object of objects) stores.get(storeNameFor(object, set.stores))?.upsert(object);
  return stores;
}

let defaultSetPromise: Promise<TemplateSetSource> | undefined;

/** The bundled default template set with its default values (loaded once per test file). */
export function defaultTemplateSet(): Promise<TemplateSetSource> {
  defaultSetPromise ??= loadTemplateSet();
  return defaultSetPromise;
}

/** The default template set with `values` overrides, as `--set` would apply them. */
export function withValues(set: TemplateSetSource, overrides: Record<string, unknown>): TemplateSetSource {
  const values = { ...set.values, ...overrides };
  return { ...set, values, hash: `${set.hash}:${JSON.stringify(overrides)}` };
}

const engine = new TemplateEngine();

/** Renders and validates `objects` with `set`, through the same code both executors run. */
export function renderObjects(set: TemplateSetSource, objects: readonly KubeObject[], baseline?: RenderBaseline): RenderOutcome {
  const stores = indexedStores(set, objects);
  return renderAndValidate(engine, { set, lookup: (name) => stores.get(name), storeVersion: 1, baseline });
}

export type RenderSuccess = Extract<RenderOutcome, { ok: true }>;

/** Like renderObjects, but fails the test (with the failure message) unless the render succeeded. */
export function renderOk(set: TemplateSetSource, objects: readonly KubeObject[], baseline?: RenderBaseline): RenderSuccess {
  const outcome = renderObjects(set, objects, baseline);
  if (!outcome.ok) throw new Error(`expected the render to succeed, but the ${outcome.phase} phase failed: ${outcome.message}`);
  return outcome;
}

/** The stores the routing model reads, as the default template set defines them. */
export const ROUTING_STORES: readonly StoreDefinition[] = [
  { name: 'ingresses', apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', indexBy: ['metadata.namespace', 'metadata.name'] },
  { name: 'services', apiVersion: 'v1', kind: 'Service', indexBy: ['metadata.namespace', 'metadata.name'] },
  {
    name: 'endpointslices',
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    indexBy: ['metadata.namespace', 'metadata.labels.kubernetes\\.io/service-name'],
  },
  { name: 'secrets', apiVersion: 'v1', kind: 'Secret', indexBy: ['metadata.namespace', 'metadata.name'] },
];

/** The routing model alone, built from guarded reads of `objects`, plus the warnings it raised. */
export function routingModel(
  objects: readonly KubeObject[],
  values: Record<string, unknown> = {},
  baseline?: RenderBaseline,
): { model: RoutingModel; warnings: string[] } {
  const defs = ROUTING_STORES;
  const stores = new Map(defs.map((def) => [def.name, new IndexedStore(def.name, def.indexBy)]));
  for (const object of objects) stores.get(storeNameFor(object, defs))?.upsert(object);
  const warnings: string[] = [];
  const warn = (message: string): void => {
    warnings.push(message);
  };
  const model = buildRoutingModel(new GuardedReader((name) => stores.get(name), warn), modelOptions(values), baseline, warn);
  return { model, warnings };
}

/** `key backend` pairs of a route table, in table order. */
export function routes(table: readonly { key: string; backend: string }[]): string[] {
  return table.map((e) => `${e.key} ${e.backend}`);
}

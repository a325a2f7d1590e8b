// Resource paths: where a watched resource lives on the API server. Core resources sit under
// `/api/v1`, every other group under `/apis/<group>/<version>`; the plural comes from the store
// definition's `resource`, or from its kind. Guards against two silent failures: a guessed
// plural that the server answers with 404 forever (name `resource` for irregular kinds), and a
// namespace put into the path of a cluster-scoped kind (IngressClass), which no server serves.
import type { StoreDefinition } from '../../../worker/protocol.js';

/** Plurals of the kinds templates commonly watch; anything else goes through `derivePlural`. */
const PLURALS: Readonly<Record<string, string>> = {
  Ingress: 'ingresses',
  IngressClass: 'ingressclasses',
  Service: 'services',
  Endpoints: 'endpoints',
  EndpointSlice: 'endpointslices',
  Secret: 'secrets',
  ConfigMap: 'configmaps',
  Pod: 'pods',
  Namespace: 'namespaces',
  Node: 'nodes',
  Lease: 'leases',
  Gateway: 'gateways',
  GatewayClass: 'gatewayclasses',
  HTTPRoute: 'httproutes',
};

/** Kinds that exist once per cluster, never per namespace (unless `namespaced` says otherwise). */
const CLUSTER_SCOPED = new Set([
  'IngressClass',
  'Namespace',
  'Node',
  'PersistentVolume',
  'StorageClass',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'GatewayClass',
]);

export interface ResourceLocation {
  /** `/api/v1` or `/apis/<group>/<version>`. */
  readonly prefix: string;
  /** The plural, lower case: `endpointslices`. */
  readonly resource: string;
  readonly namespaced: boolean;
  /** The collection to list and watch: with `namespaces/<ns>/` only for a namespaced resource. */
  readonly collectionPath: string;
}

/**
 * Where `definition` is listed and watched. `namespace` restricts a namespaced resource to one
 * namespace; a cluster-scoped resource ignores it (an IngressClass has no namespace).
 */
export function resourceLocation(definition: Pick<StoreDefinition, 'apiVersion' | 'kind' | 'resource' | 'namespaced'>, namespace?: string): ResourceLocation {
  const prefix = apiPrefix(definition.apiVersion);
  const resource = definition.resource ?? pluralOf(definition.kind);
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(resource)) throw new TypeError(`not a resource name (plural, lower case): ${JSON.stringify(resource)}`);
  const namespaced = definition.namespaced ?? !CLUSTER_SCOPED.has(definition.kind);
  const scoped = namespaced && namespace !== undefined && namespace !== '';
  const collectionPath = scoped ? `${prefix}/namespaces/${encodeURIComponent(namespace)}/${resource}` : `${prefix}/${resource}`;
  return { prefix, resource, namespaced, collectionPath };
}

/** `v1` is the core group (`/api/v1`); `group/version` is `/apis/group/version`. */
export function apiPrefix(apiVersion: string): string {
  const parts = apiVersion.split('/');
  const valid = (part: string | undefined): part is string => part !== undefined && /^[a-z0-9][a-z0-9.-]*$/.test(part);
  if (parts.length === 1 && valid(parts[0])) return `/api/${parts[0]}`;
  if (parts.length === 2 && valid(parts[0]) && valid(parts[1])) return `/apis/${parts[0]}/${parts[1]}`;
  throw new TypeError(`not an apiVersion (expected "v1" or "group/version"): ${JSON.stringify(apiVersion)}`);
}

/**
 * The plural of a kind: from the table above, else the English rule the API machinery uses for
 * regular kinds (`Policy` -> `policies`, `Class` -> `classes`, `Route` -> `routes`). Irregular
 * kinds outside the table need `resource` in the template set; a wrong guess shows up as a list
 * that fails with 404 and is retried, reported through the sink as a problem.
 */
export function pluralOf(kind: string): string {
  const known = PLURALS[kind];
  if (known !== undefined) return known;
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

// The HTTPRoute twin of the synthetic cluster, for benchmarks that compare the two side by side:
// the same N apps (a Service and an EndpointSlice of 3 endpoints each, from SyntheticCluster),
// each routed by an HTTPRoute with its Ingress's host and paths instead of the Ingress, all
// attached to one HTTP listener of one Gateway of our GatewayClass that admits routes from
// every namespace. Generation g of a route has the path `/api/v(1 + g % 3)`, as the Ingress's.
import { StoreProvider } from '../src/main/stores/store-provider.js';
import { SyntheticCluster } from '../src/main/sources/synthetic/synthetic-cluster.js';
import type { KubeObject, TemplateSetSource } from '../src/worker/protocol.js';

const GATEWAY_API = 'gateway.networking.k8s.io/v1';
export const ROUTE_GATEWAY = { namespace: 'gateway-infra', name: 'edge', className: 'haptic', controllerName: 'haptic-reconciler.io/gateway-controller' } as const;
/** The listener's port when the benchmark names none (clear of the Ingress and status frontends' defaults). */
export const DEFAULT_ROUTE_LISTENER_PORT = 8080;

/** Our GatewayClass and the Gateway every route attaches to, its listener on `port`. */
export function routeGateway(port = DEFAULT_ROUTE_LISTENER_PORT): KubeObject[] {
  return [
    { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name: ROUTE_GATEWAY.className }, spec: { controllerName: ROUTE_GATEWAY.controllerName } },
    {
      apiVersion: GATEWAY_API,
      kind: 'Gateway',
      metadata: { name: ROUTE_GATEWAY.name, namespace: ROUTE_GATEWAY.namespace },
      spec: { gatewayClassName: ROUTE_GATEWAY.className, listeners: [{ name: 'http', port, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] },
    },
  ];
}

/** App `index`'s HTTPRoute at `generation`: its Ingress's host, `/` and `/api/vN` to its Service. */
export function httpRouteOf(cluster: SyntheticCluster, index: number, generation = 0): KubeObject {
  const name = `app-${index}`;
  const backendRefs = [{ name, port: 80 }];
  return {
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace: cluster.namespace(index), annotations: { 'synthetic/generation': String(generation) } },
    spec: {
      parentRefs: [{ name: ROUTE_GATEWAY.name, namespace: ROUTE_GATEWAY.namespace }],
      hostnames: [cluster.host(index)],
      rules: [
        { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs },
        { matches: [{ path: { type: 'PathPrefix', value: `/api/v${1 + (generation % 3)}` } }], backendRefs },
      ],
    },
  };
}

/** N apps routed by HTTPRoutes (no Ingresses) in `stores`. */
export function populateRoutes(stores: StoreProvider, cluster: SyntheticCluster, n: number, port?: number): void {
  for (const object of routeGateway(port)) stores.store(object.kind === 'Gateway' ? 'gateways' : 'gatewayclasses').upsert(object);
  for (let i = 0; i < n; i++) {
    stores.store('services').upsert(cluster.service(i));
    stores.store('endpointslices').upsert(cluster.endpointSlice(i));
    stores.store('httproutes').upsert(httpRouteOf(cluster, i));
  }
}

/** A StoreProvider shaped like the template set's watched resources, holding N apps routed by HTTPRoutes. */
export function populatedRouteStores(set: TemplateSetSource, n: number, seed = 1): { stores: StoreProvider; cluster: SyntheticCluster } {
  const stores = new StoreProvider(set.stores);
  const cluster = new SyntheticCluster({ ingresses: n, seed });
  populateRoutes(stores, cluster, n);
  return { stores, cluster };
}

// Gateway API objects for tests, in the shapes the API server hands out: a GatewayClass of our
// controller, Gateways with listeners, HTTPRoutes, ReferenceGrants and Namespaces.
import type { KubeObject } from '../../src/worker/protocol.js';

export const GATEWAY_API = 'gateway.networking.k8s.io/v1';
export const CONTROLLER = 'haptic-reconciler.io/gateway-controller';

export function gatewayClass(name = 'haptic', controllerName = CONTROLLER): KubeObject {
  return { apiVersion: GATEWAY_API, kind: 'GatewayClass', metadata: { name, generation: 1 }, spec: { controllerName } };
}

export interface ListenerInput {
  name: string;
  port: number;
  protocol?: string;
  hostname?: string;
  allowedRoutes?: Record<string, unknown>;
  tls?: Record<string, unknown>;
}

export function gateway(namespace: string, name: string, listeners: ListenerInput[], extra: Record<string, unknown> = {}, className = 'haptic'): KubeObject {
  return {
    apiVersion: GATEWAY_API,
    kind: 'Gateway',
    metadata: { name, namespace, generation: 1 },
    spec: { gatewayClassName: className, listeners: listeners.map((l) => ({ protocol: 'HTTP', ...l })), ...extra },
  };
}

export function httpRoute(namespace: string, name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: GATEWAY_API, kind: 'HTTPRoute', metadata: { name, namespace, generation: 1, ...metadata }, spec };
}

export function referenceGrant(namespace: string, name: string, fromNamespace: string, toName?: string): KubeObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1beta1',
    kind: 'ReferenceGrant',
    metadata: { name, namespace },
    spec: {
      from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: fromNamespace }],
      to: [{ group: '', kind: 'Service', ...(toName === undefined ? {} : { name: toName }) }],
    },
  };
}

export function namespace(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

/** A backendRef to Service `name` port 80. */
export function ref(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, port: 80, ...extra };
}

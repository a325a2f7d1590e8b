// Where Gateway API status is written: the `status` subresource of gateway.networking.k8s.io/v1
// GatewayClasses, Gateways and HTTPRoutes, with a JSON merge patch of the fields the controller
// owns (each a whole list: conditions, listeners, addresses, parents). With a resourceVersion the
// patch is refused (409) when the object changed since it was read, so the other controllers'
// entries of an HTTPRoute's `status.parents`, kept in the patch, are never overwritten with a
// stale copy. Only the status subresource is touched: a write can never change what is routed.
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../sources/kubernetes/kube-http.js';

export type GatewayStatusKind = 'GatewayClass' | 'Gateway' | 'HTTPRoute';

export const GATEWAY_STATUS_RESOURCES: Readonly<Record<GatewayStatusKind, string>> = { GatewayClass: 'gatewayclasses', Gateway: 'gateways', HTTPRoute: 'httproutes' };

export interface GatewayStatusWrite {
  readonly kind: GatewayStatusKind;
  /** '' for a GatewayClass. */
  readonly namespace: string;
  readonly name: string;
  /** The fields of `status` to set (each replaces the whole field). */
  readonly status: Readonly<Record<string, unknown>>;
  /** Precondition: the write is refused (409) unless the object is still at this version. */
  readonly resourceVersion?: string | undefined;
}

export interface GatewayStatusReply {
  readonly status: number;
  /** The object's resourceVersion after a successful write. */
  readonly resourceVersion?: string | undefined;
}

export interface GatewayStatusApi {
  /** Resolves with the HTTP status; rejects when the server could not be reached. */
  writeStatus(write: GatewayStatusWrite, signal: AbortSignal): Promise<GatewayStatusReply>;
}

/** The status subresource path of an object. */
export function gatewayStatusPath(kind: GatewayStatusKind, namespace: string, name: string): string {
  const scope = kind === 'GatewayClass' ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `/apis/gateway.networking.k8s.io/v1${scope}/${GATEWAY_STATUS_RESOURCES[kind]}/${encodeURIComponent(name)}/status`;
}

/** The Kubernetes API server of `kubeConfig`. */
export function kubeGatewayStatusApi(kubeConfig: KubeConfig, timeoutMs = 10_000): GatewayStatusApi {
  return {
    async writeStatus(write, signal) {
      const body = { ...(write.resourceVersion === undefined ? {} : { metadata: { resourceVersion: write.resourceVersion } }), status: write.status };
      const response = await kubeRequest(kubeConfig, { method: 'PATCH', path: gatewayStatusPath(write.kind, write.namespace, write.name), body, signal, idleTimeoutMs: timeoutMs });
      const version = (response.body as { metadata?: { resourceVersion?: unknown } } | null | undefined)?.metadata?.resourceVersion;
      return { status: response.status, resourceVersion: typeof version === 'string' ? version : undefined };
    },
  };
}

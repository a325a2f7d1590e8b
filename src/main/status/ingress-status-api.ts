// Where Ingress status is written: the `status` subresource of networking.k8s.io/v1 Ingresses,
// with a JSON merge patch that replaces `status.loadBalancer.ingress` (or removes it to clear).
// Only the status subresource is touched, so a write can never change what the Ingress routes.
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../sources/kubernetes/kube-http.js';
import type { LoadBalancerIngress } from './load-balancer-addresses.js';

export interface IngressStatusApi {
  /**
   * Sets `status.loadBalancer.ingress` of `namespace/name` (an empty list clears it). Resolves
   * with the HTTP status; rejects when the server could not be reached.
   */
  writeStatus(namespace: string, name: string, addresses: readonly LoadBalancerIngress[], signal: AbortSignal): Promise<number>;
}

/** The Kubernetes API server of `kubeConfig`. */
export function kubeIngressStatusApi(kubeConfig: KubeConfig, timeoutMs = 10_000): IngressStatusApi {
  return {
    async writeStatus(namespace, name, addresses, signal) {
      const path = `/apis/networking.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/ingresses/${encodeURIComponent(name)}/status`;
      const body = { status: { loadBalancer: { ingress: addresses.length === 0 ? null : addresses } } };
      const response = await kubeRequest(kubeConfig, { method: 'PATCH', path, body, signal, idleTimeoutMs: timeoutMs });
      return response.status;
    },
  };
}

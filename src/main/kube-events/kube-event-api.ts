// Where Kubernetes Events go: events.k8s.io/v1 on the API server. A new Event is created with a
// POST; a repeat of it updates its `series` with a JSON merge patch, so a rejection that keeps
// coming back is one Event with a count, never one Event per occurrence.
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../sources/kubernetes/kube-http.js';

export interface KubeEventApi {
  /** Creates an Event; resolves with the HTTP status. */
  create(namespace: string, event: Record<string, unknown>, signal: AbortSignal): Promise<number>;
  /** Merge-patches the Event `name`; resolves with the HTTP status. */
  patch(namespace: string, name: string, patch: Record<string, unknown>, signal: AbortSignal): Promise<number>;
}

export function kubeEventApi(kubeConfig: KubeConfig, timeoutMs = 10_000): KubeEventApi {
  const collection = (namespace: string): string => `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;
  return {
    async create(namespace, event, signal) {
      return (await kubeRequest(kubeConfig, { method: 'POST', path: collection(namespace), body: event, signal, idleTimeoutMs: timeoutMs })).status;
    },
    async patch(namespace, name, patch, signal) {
      return (await kubeRequest(kubeConfig, { method: 'PATCH', path: `${collection(namespace)}/${encodeURIComponent(name)}`, body: patch, signal, idleTimeoutMs: timeoutMs })).status;
    },
  };
}

/** Kubernetes MicroTime: `2006-01-02T15:04:05.000000Z`. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
